"""`ad.overlaps %a, %b` -> LLVM: numpy's `may_share_memory` bounds test;
`ad.self_overlaps %a`: whether two of a's elements may share memory.

Each memref spans the bytes from its lowest element's first byte to its
highest element's last: the element offset plus, per dimension, `(n-1)*s`
where the stride `s` is negative (low end) or positive (high end), in
bytes from the data pointer. An empty memref (a size of 0) spans nothing.
The two overlap when both span something and each range starts below the
other's end: a few integer operations per test, per statement (the
frontend tests before an in-place update, not per element).

A memref's elements are distinct when its dimensions of size above 1, in
some order, each have a stride (in absolute value) of at least the span
of those before it plus one element (a mixed radix: numpy's test, which
sorts the strides; here the two orders innermost-first and
outermost-first, which cover C, Fortran and reversed layouts). When
neither order shows it (a stride of 0, overlapping strides, or an
unusual permutation) the answer is "may": the caller then copies, which
is numpy's result either way. An empty memref has no two elements.
"""

from __future__ import annotations

from llvmlite import ir

from adpasses.dialects.ad import OverlapsOp, SelfOverlapsOp
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


def _distinct_in_order(ft: FunctionTranslator, m: MemRefValue, order: list[int]) -> ir.Value:
    b = ft.b
    zero, one = const_i64(0), const_i64(1)
    ok: ir.Value = ir.Constant(ir.IntType(1), 1)
    reach: ir.Value = one
    for k in order:
        n, s = m.sizes[k], m.strides[k]
        big = b.icmp_signed(">", n, one)
        step = b.select(b.icmp_signed("<", s, zero), b.sub(zero, s), s)
        ok = b.and_(ok, b.or_(b.not_(big), b.icmp_signed(">=", step, reach)))
        reach = b.add(reach, b.select(big, b.mul(step, b.sub(n, one)), zero))
    return ok


def _self_overlaps(ft: FunctionTranslator, op: SelfOverlapsOp) -> None:
    b = ft.b
    m = ft.get(op.source)
    rank = len(m.sizes)
    empty: ir.Value = ir.Constant(ir.IntType(1), 0)
    for n in m.sizes:
        empty = b.or_(empty, b.icmp_signed("<=", n, const_i64(0)))
    inner = _distinct_in_order(ft, m, list(reversed(range(rank))))
    outer = _distinct_in_order(ft, m, list(range(rank)))
    ft.set(op.result, b.not_(b.or_(empty, b.or_(inner, outer))))


LOWERINGS = {OverlapsOp: _overlaps, SelfOverlapsOp: _self_overlaps}
