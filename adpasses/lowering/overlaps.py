"""`ad.overlaps %a, %b` -> LLVM: numpy's `may_share_memory` bounds test.

Each memref spans the bytes from its lowest element's first byte to its
highest element's last: the element offset plus, per dimension, `(n-1)*s`
where the stride `s` is negative (low end) or positive (high end), in
bytes from the data pointer. An empty memref (a size of 0) spans nothing.
The two overlap when both span something and each range starts below the
other's end: a few integer operations per test, per statement (the
frontend tests before an in-place update, not per element).
"""

from __future__ import annotations

from llvmlite import ir

from adpasses.dialects.ad import OverlapsOp
from adpasses.lowering.core import I64, FunctionTranslator, MemRefValue, const_i64
from adpasses.lowering.memref import _element_bytes


def _span(ft: FunctionTranslator, m: MemRefValue) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(first byte, one past the last byte, empty) of the memory `m` spans."""
    b = ft.b
    zero, one = const_i64(0), const_i64(1)
    low, high = m.offset, m.offset
    empty: ir.Value = ir.Constant(ir.IntType(1), 0)
    for n, s in zip(m.sizes, m.strides):
        reach = b.mul(b.sub(n, one), s)
        negative = b.icmp_signed("<", s, zero)
        low = b.add(low, b.select(negative, reach, zero))
        high = b.add(high, b.select(negative, zero, reach))
        empty = b.or_(empty, b.icmp_signed("<=", n, zero))
    size = const_i64(_element_bytes(ft, m.element))
    base = b.ptrtoint(m.ptr, I64)
    first = b.add(base, b.mul(low, size))
    end = b.add(b.add(base, b.mul(high, size)), size)
    return first, end, empty


def _overlaps(ft: FunctionTranslator, op: OverlapsOp) -> None:
    b = ft.b
    a_first, a_end, a_empty = _span(ft, ft.get(op.lhs))
    b_first, b_end, b_empty = _span(ft, ft.get(op.rhs))
    meet = b.and_(b.icmp_unsigned("<", a_first, b_end), b.icmp_unsigned("<", b_first, a_end))
    ft.set(op.result, b.and_(meet, b.not_(b.or_(a_empty, b_empty))))


LOWERINGS = {OverlapsOp: _overlaps}
