"""One scalar op's facts: the record every file of `adpasses/ops/` fills in.

Every field is required (a forgotten one is a TypeError when the table
loads); `test/test_op_table.py` checks that every view holds every entry.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation

from adpasses.ops.partials import Partials

# -- recompute costs (bytes per loop iteration; see adpasses/cache/cost_model.py) --

CHEAP = 0.01
"""add, mul, compare, select, casts: recompute whenever that saves any tape."""
RELOAD = 0.25
"""a load re-issued in the reverse sweep (not an op of this table)."""
DIVISION = 4.0
"""divisions and square roots: one is recomputed rather than taping an f64."""
TRANSCENDENTAL = 16.0
"""exp, log, pow, sin, tanh, erf, ...: taped unless recomputing saves more."""


# -- lowering to LLVM (interpreted by adpasses/lowering/scalar_ops.py) -------

@dataclass(frozen=True)
class Instruction:
    """One LLVM instruction: the llvmlite IRBuilder method (fadd, fneg,
    frem, ...) on the operands, with the fast-math flags."""

    method: str


@dataclass(frozen=True)
class Intrinsic:
    """A call of the LLVM intrinsic `name` (llvm.exp, llvm.pow, ...) on the
    operands, overloaded on their type."""

    name: str


@dataclass(frozen=True)
class Libm:
    """A call of the C function `name` (`name`f for f32; f16 computes in f32)."""

    name: str


@dataclass(frozen=True)
class Cast:
    """A float conversion: the IRBuilder method (fpext, fptrunc)."""

    method: str


@dataclass(frozen=True)
class Custom:
    """Lowered by a function of `adpasses/lowering/` (its `CUSTOM` table),
    for an op that is more than one instruction or call."""


Lowering = Instruction | Intrinsic | Libm | Cast | Custom


# -- Python spellings (the frontend's views) ---------------------------------

@dataclass(frozen=True)
class ToInt:
    """A Python function computing the op and returning an int
    (`math.floor`): the frontend converts the float result to an int."""

    fn: Callable[..., object]


Spelling = Callable[..., object] | type[ast.AST] | ToInt
"""A function of floats (`math.exp`, `np.exp`), an operator node class
(`ast.Add` for `a + b`, `ast.USub` for `-a`), or `ToInt(fn)`."""


# -- fuzz / finite-difference domains ----------------------------------------

DOMAINS = {
    # name: (lo, hi) sampled by the finite-difference check of every entry;
    # the fuzzer (tools/fuzz/generate.py) guards an operand into its domain.
    "any": (-1.5, 1.5),      # no restriction
    "pos": (0.2, 3.0),       # strictly positive, away from 0 (log, sqrt, powf's base)
    "nonzero": (0.5, 2.0),   # away from 0 (a divisor); sampled with either sign
    "unit": (-0.8, 0.8),     # inside (-0.9, 0.9) (asin, acos, tan)
    "small": (-1.5, 1.5),    # inside about (-2.5, 2.5): no overflow, no pole (exp, sinh)
    "above1": (1.2, 3.0),    # greater than 1, away from it (acosh)
    "prob": (0.1, 0.9),      # inside (0, 1), away from both ends (logit)
    "int": (-3, 4),          # an integer operand (fpowi's exponent), not differentiated
    "order": (0, 3),         # a derivative order >= 0 (polygamma's n), not differentiated
    "cond": (0, 1),          # an i1 condition (select), not differentiated
}


INTEGER_DOMAINS = ("int", "order")
"""Domains of integer operands: sampled as integers, never differentiated."""


@dataclass(frozen=True)
class ScalarOp:
    """One scalar op: everything the compiler knows about it.

    - `op`: the xDSL op class (its MLIR name is `op.name`);
    - `python`: the Python spellings the frontend compiles to it;
    - `partials`: `(operand symbols..., r=result symbol) -> one partial
      derivative per operand` (`adpasses/ops/partials.py`); the reverse
      rule, what it needs cached, and the forward tangent derive from it;
    - `llvm`: how it lowers to LLVM;
    - `cost`: what recomputing it costs the cache planner (CHEAP,
      DIVISION, TRANSCENDENTAL);
    - `domains`: per operand, where it is defined and smooth (`DOMAINS`):
      the fuzzer's guards and the finite-difference check's samples;
    - `oracle`: the fuzzer's Python for it (`{0}`, `{1}`: the operands;
      `_`-helpers are in `tools/fuzz/to_python.py`), or None where the
      fuzzer builds it with a node of its own (`tools/fuzz/program.py`);
    - `ints_unchanged`: the op is the identity on integers (floor, ceil,
      trunc): its numpy spelling returns an int or bool argument as it is,
      dtype included, where the installed numpy does (numpy 2.4:
      `np.floor(np.arange(3))` is int64; `integer_identity_calls`).
    """

    op: type[Operation]
    python: tuple[Spelling, ...]
    partials: Partials
    llvm: Lowering
    cost: float
    domains: tuple[str, ...]
    oracle: str | None
    ints_unchanged: bool = False

    def __post_init__(self) -> None:
        arity = len(self.op.get_irdl_definition().operands)
        if len(self.domains) != arity:
            raise ValueError(f"{self.op.name}: {len(self.domains)} domains for {arity} operands")
        unknown = [d for d in self.domains if d not in DOMAINS]
        if unknown:
            raise ValueError(f"{self.op.name}: unknown domain(s) {unknown}; known: {sorted(DOMAINS)}")

    @property
    def arity(self) -> int:
        return len(self.domains)
