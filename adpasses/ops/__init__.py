"""The scalar op table: one entry per op, the one place an op's facts live.

Each entry (`ScalarOp`, `entry.py`) gives an op's Python spellings, its
partial derivatives, its LLVM lowering, its recompute cost and its operand
domains; one file per dialect (`arith.py`, `math.py`, `special.py`). Everything else is
a view of this table:

- the frontend's maps from Python functions and operators to ops
  (`python_calls`, `python_operators`, `int_calls`; frontend/expressions.py,
  frontend/arithmetic.py);
- the reverse rules (`adpasses/reverse/rules/__init__.py`: `ScalarRule` over an
  entry; what a rule needs cached is traced from its partials);
- the LLVM lowering (`adpasses/lowering/scalar_ops.py`);
- the cache planner's recompute costs (`adpasses/cache/cost_model.py`);
- the fuzzer's op list (`tools/fuzz/ops.py`).

Adding an op is one entry here (docs/CONVENTIONS.md, "Adding an op");
`test/test_op_table.py` fails if a view lacks it.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

from adpasses.ops import arith as _arith
from adpasses.ops import math as _math
from adpasses.ops import special as _special
from adpasses.ops.entry import DOMAINS, ScalarOp, ToInt

__all__ = ["DOMAINS", "OP_TABLE", "ScalarOp", "entry_for", "int_calls", "integer_identity_calls", "python_calls", "python_operators",
           "scipy_special_op"]


def _table() -> dict[type[Operation], ScalarOp]:
    table: dict[type[Operation], ScalarOp] = {}
    for entry in (*_arith.ENTRIES, *_math.ENTRIES, *_special.ENTRIES):
        if entry.op in table:
            raise ValueError(f"{entry.op.name} has two entries in the op table")
        table[entry.op] = entry
    return table


OP_TABLE: dict[type[Operation], ScalarOp] = _table()
"""Every scalar op, by op class."""


def entry_for(op: Operation) -> ScalarOp | None:
    return OP_TABLE.get(type(op))


def python_calls(arity: int) -> dict[Callable[..., object], type[Operation]]:
    """Python functions of `arity` floats -> the op computing them."""
    return {fn: e.op for e in OP_TABLE.values() if e.arity == arity for fn in e.python
            if callable(fn) and not isinstance(fn, (type, ToInt))}


def int_calls() -> dict[Callable[..., object], type[Operation]]:
    """Python functions computing an op and returning an int (`math.floor`)."""
    return {s.fn: e.op for e in OP_TABLE.values() for s in e.python if isinstance(s, ToInt)}


def integer_identity_calls() -> frozenset[Callable[..., object]]:
    """numpy functions that return an int or bool argument unchanged (its
    dtype kept): the spellings of `ints_unchanged` ops for which the
    installed numpy does so (numpy 2.4's np.floor/ceil/trunc of an int32
    array is int32; older numpy gave float64, and then they are not here)."""
    probe = np.arange(2, dtype=np.int32)
    return frozenset(fn for e in OP_TABLE.values() if e.ints_unchanged for fn in e.python
                     if isinstance(fn, np.ufunc) and fn(probe).dtype == probe.dtype)


def python_operators(arity: int) -> dict[type[ast.AST], type[Operation]]:
    """Operator node classes (`ast.Add`, `ast.USub`) -> the float op."""
    return {s: e.op for e in OP_TABLE.values() if e.arity == arity for s in e.python
            if isinstance(s, type) and issubclass(s, ast.AST)}


_SCIPY_CALLS: dict[int, dict[object, type[Operation]]] = {}


def scipy_special_op(fn: object) -> type[Operation] | None:
    """The op computing `fn` when it is one of scipy.special's functions
    named in `special.SCIPY_SPECIAL` (None otherwise). Looked up in the
    scipy.special a program has imported (sys.modules): adpasses never
    imports scipy itself, and a program that calls scipy.special has."""
    module = sys.modules.get("scipy.special")
    if module is None:
        return None
    calls = _SCIPY_CALLS.get(id(module))
    if calls is None:
        calls = {getattr(module, name): op for name, op in _special.SCIPY_SPECIAL.items()
                 if hasattr(module, name)}
        _SCIPY_CALLS[id(module)] = calls
    try:
        return calls.get(fn)
    except TypeError:  # unhashable
        return None
