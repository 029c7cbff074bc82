"""Index arithmetic that never wraps, built as arith IR: loop trip counts
and tape capacities.

`index` is 64 bits and arith's integer ops wrap. A trip count computed as
ceildiv(ub - lb, step) wraps when ub - lb exceeds 2**63 - 1 (lb = -2**62,
ub = 2**62), and a tape capacity multiplied from trip counts wraps for
nested loops; a wrapped capacity is a buffer smaller than the pushes that
fill it. Here a trip count is exact (ub - lb is formed, as an unsigned
number, only when ub > lb), and counts and products saturate at
2**63 - 1 instead of wrapping: no loop can run that many iterations, and
a capacity of 2**63 - 1 values is an allocation the lowering refuses with
MemoryError (adpasses.lowering.sizes).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Attribute, Operation, OpResult, SSAValue

INDEX_MAX = (1 << 63) - 1


def constant_value(value: SSAValue) -> int | None:
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def saturate(n: int) -> int:
    """A non-negative Python count as an index constant may hold it."""
    return min(max(n, 0), INDEX_MAX)


Target = Builder | Callable[[Operation], Operation]
"""Where ops go: a Builder, or a function inserting an op (the frontend's
`emit`, which also gives it a location)."""


class _Emitter:
    def __init__(self, target: Target):
        self.insert = target.insert if isinstance(target, Builder) else target

    def __call__(self, op: Operation) -> SSAValue:
        return self.insert(op).results[0]

    def index(self, n: int, type_: Attribute | None = None) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr(n, type_ or IndexType())))


def _signed_max(t: Attribute) -> int:
    """Largest signed value of `index` or an integer type."""
    return INDEX_MAX if isinstance(t, IndexType) else (1 << (t.width.data - 1)) - 1  # type: ignore[attr-defined]


def trip_count(b: Target, lb: SSAValue, ub: SSAValue, step: SSAValue) -> SSAValue:
    """Iterations of `scf.for lb to ub step step` (step > 0), in the type of
    the bounds (index, or the iN of an scf.for over iN), exact up to that
    type's largest signed value (saturated above)."""
    emit = _Emitter(b)
    t = lb.type
    top = _signed_max(t)
    lo, hi, st = constant_value(lb), constant_value(ub), constant_value(step)
    if lo is not None and hi is not None and st is not None and st > 0:
        return emit.index(min(max(-(-(hi - lo) // st), 0), top), t)
    zero = emit.index(0, t)
    if lo is not None and lo >= 0 and st == 1:
        # 0 <= lb: ub - lb cannot wrap, and is the count when positive.
        return emit(arith.MaxSIOp(emit(arith.SubiOp(ub, lb)) if lo else ub, zero))
    # ub > lb: ub - lb is exact as an unsigned number (at most 2**w - 1).
    span = emit(arith.SubiOp(ub, lb))
    if st == 1:
        count = span
    else:
        one = emit.index(1, t)
        count = emit(arith.AddiOp(emit(arith.DivUIOp(emit(arith.SubiOp(span, one)), step)), one))
    runs = emit(arith.CmpiOp(ub, lb, "sgt"))
    count = emit(arith.SelectOp(runs, count, zero))
    return emit(arith.MinUIOp(count, emit.index(top, t)))


def saturating_mul(b: Target, x: SSAValue, y: SSAValue) -> SSAValue:
    """x * y for 0 <= x, y <= 2**63 - 1, saturated at 2**63 - 1."""
    emit = _Emitter(b)
    cx, cy = constant_value(x), constant_value(y)
    if cx is not None and cy is not None:
        return emit.index(saturate(cx * cy))
    if cx == 1:
        return y
    if cy == 1:
        return x
    top = emit.index(INDEX_MAX)
    # x * y > MAX  <=>  x > MAX // y  (y >= 1; y = 0 never overflows)
    divisor = emit(arith.MaxUIOp(y, emit.index(1)))
    overflows = emit(arith.CmpiOp(x, emit(arith.DivUIOp(top, divisor)), "ugt"))
    return emit(arith.SelectOp(overflows, top, emit(arith.MuliOp(x, y))))


def saturating_add(b: Target, x: SSAValue, y: SSAValue) -> SSAValue:
    """x + y for 0 <= x, y <= 2**63 - 1, saturated at 2**63 - 1."""
    emit = _Emitter(b)
    cx, cy = constant_value(x), constant_value(y)
    if cx is not None and cy is not None:
        return emit.index(saturate(cx + cy))
    top = emit.index(INDEX_MAX)
    overflows = emit(arith.CmpiOp(x, emit(arith.SubiOp(top, y)), "ugt"))
    return emit(arith.SelectOp(overflows, top, emit(arith.AddiOp(x, y))))
