"""The float ops programs use: a view of the op table (`adpasses/ops/`),
every entry with an `oracle` (select, fpowi, extf/truncf and sitofp have
their own nodes in `program.py`).

Per op: its MLIR name, its Python spelling in the oracle (helpers starting
with `_` are defined in `to_python.py`; they record how close a value came
to a kink or a discontinuity), and per operand the domain the generator
guards it into (`adpasses.ops.entry.DOMAINS`):

- `any`: no restriction;
- `pos`: strictly positive, away from 0 (log, sqrt, the base of powf, ...);
- `nonzero`: away from 0 (a divisor);
- `unit`: inside (-0.9, 0.9) (asin, acos);
- `small`: inside about (-2.5, 2.5) (exp, sinh, tan, ...: no overflow, no pole);
- `above1`: greater than 1, away from it (acosh).
"""

from __future__ import annotations

from dataclasses import dataclass

from adpasses.ops import OP_TABLE


@dataclass(frozen=True)
class OpSpec:
    mlir: str
    python: str
    domains: tuple[str, ...]

    @property
    def arity(self) -> int:
        return len(self.domains)


OPS: dict[str, OpSpec] = {
    e.op.name.split(".", 1)[1]: OpSpec(e.op.name, e.oracle, e.domains)
    for e in OP_TABLE.values()
    if e.oracle is not None
}
"""By short name (`addf`, `exp`, ...)."""

FCMP_PREDICATES = {
    # MLIR predicate -> Python comparison (no NaNs reach a comparison: the
    # oracle rejects inputs giving non-finite values).
    "olt": "<", "ole": "<=", "ogt": ">", "oge": ">=", "ult": "<", "uge": ">=",
}
ICMP_PREDICATES = {"slt": "<", "sle": "<=", "sgt": ">", "sge": ">=", "eq": "==", "ne": "!="}
