"""The cost model of cache planning, in bytes per loop iteration.

Taping a value costs its size in bytes (f64 and index 8, f32 4, i1 1): the
tape's memory, written once and read once. Recomputing a scalar op costs
the `cost` of its entry in the op table (`adpasses/ops/`; the values are
defined in `adpasses/ops/entry.py`), other ops what is listed here, in the
same unit, so the min-cut trades memory against work:

- cheap ops (add, mul, compare, select, casts, index arithmetic, memref.dim,
  constants): 0.01, i.e. recompute them whenever that saves any tape, and
  prefer taping only on a tie;
- reloads (a load re-issued in the reverse sweep): 0.25, a cached memory
  read; cheaper than taping even a 1-byte boolean;
- divisions and square roots: 4, so one division is recomputed rather than
  taping an f64 (8 bytes), but a chain of two or more is taped;
- transcendental functions (exp, log, pow, sin, tanh, erf, ...): 16, i.e.
  taped rather than recomputed unless recomputing saves more than 16 bytes
  of tape per iteration (for instance when one exp stands for several taped
  values).

`recompute_scale` multiplies every recompute cost: 0 gives Enzyme's pure
memory minimisation (recompute whatever is legal), large values tape more.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.ir import Attribute, Operation

from adpasses.ops import OP_TABLE
from adpasses.ops.entry import CHEAP, DIVISION, RELOAD, TRANSCENDENTAL
from adpasses.core.types import byte_size, is_memref_type

__all__ = ["CHEAP", "DIVISION", "RELOAD", "TRANSCENDENTAL", "RECOMPUTE_COST", "CostModel"]

OTHER_COSTS: dict[type[Operation], float] = {
    # Ops without derivatives, so not in the op table: integer divisions,
    # and the reload of a load.
    arith.DivSIOp: DIVISION,
    arith.DivUIOp: DIVISION,
    arith.FloorDivSIOp: DIVISION,
    arith.CeilDivSIOp: DIVISION,
    arith.RemSIOp: DIVISION,
    arith.RemUIOp: DIVISION,
    memref.LoadOp: RELOAD,
}

RECOMPUTE_COST: dict[type[Operation], float] = {
    **{cls: e.cost for cls, e in OP_TABLE.items()},
    **OTHER_COSTS,
}
"""Every op's recompute cost: each scalar op's from its entry (a required
field, so no float op is CHEAP by omission), others listed here; any op in
neither (integer add, index casts, memref.dim, constants) is CHEAP."""


@dataclass(frozen=True)
class CostModel:
    recompute_scale: float = 1.0

    def recompute_cost(self, op: Operation) -> float:
        return RECOMPUTE_COST.get(type(op), CHEAP) * self.recompute_scale

    def tape_cost(self, type_: Attribute) -> float:
        """Bytes per pushed value; memrefs cannot be taped."""
        if is_memref_type(type_):
            return float("inf")
        try:
            return float(byte_size(type_))
        except ValueError:
            return float("inf")
