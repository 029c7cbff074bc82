"""The ops `ad-lower-matmul` makes: `ad.gemm` (here) and `ad.size_match`
(adpasses.lowering.stops: one compare of the two sizes, the call stops with
a ValueError naming both operands and the product, bounds checks off too).

- `ad.gemm %a, %b, %c -> i1`: calls `adpasses_cblas_dgemm` (f64) or
  `adpasses_cblas_sgemm` (f32), numpy's OpenBLAS (adpasses.native.blas),
  as `C = 1 * op(A) op(B) + 1 * C`, row-major, when
    - m * n * k >= GEMM_THRESHOLD (smaller products are faster in the
      vectorised loop nest: docs/lowering.md, "Matrix products");
    - A and B each have unit stride in one dimension and a leading stride
      no smaller than the other dimension's size (a row-major operand is
      passed as is, a column-major one, e.g. a transposed view, with the
      transpose flag), and C is row-major that way;
    - C's elements share no address range with A's or B's;
  and yields whether it called; otherwise the loop nest after it runs.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from adpasses.dialects.ad import GemmOp
from adpasses.lowering.core import I64, FunctionTranslator, MemRefValue, const_i64

GEMM_THRESHOLD = 8 * 8 * 8
"""m * n * k from which a product calls BLAS (measured: docs/lowering.md)."""

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
I32 = ir.IntType(32)


def _layout(b: ir.IRBuilder, m: MemRefValue) -> tuple[ir.Value, ir.Value, ir.Value, ir.Value]:
    """(row-major ok, column-major ok, leading dimension, last element
    offset) of a 2-d memref: row-major is unit stride along dimension 1
    and stride 0 >= max(1, size 1); column-major the other way round."""
    (r, c), (s0, s1) = m.sizes, m.strides
    one = const_i64(1)

    def at_least(v: ir.Value, n: ir.Value) -> ir.Value:
        bound = b.select(b.icmp_signed(">", n, one), n, one)
        return b.icmp_signed(">=", v, bound)

    row = b.and_(b.icmp_signed("==", s1, one), at_least(s0, c))
    col = b.and_(b.icmp_signed("==", s0, one), at_least(s1, r))
    lead = b.select(row, s0, s1)
    last = b.add(b.mul(b.sub(r, one), s0), b.mul(b.sub(c, one), s1))
    return row, col, lead, last


def _disjoint(b: ir.IRBuilder, x: MemRefValue, x_last: ir.Value, y: MemRefValue, y_last: ir.Value) -> ir.Value:
    """The element ranges [offset, offset + last] of x and y (positive
    strides) do not overlap, by address."""
    ex = b.ptrtoint(b.gep(x.ptr, [x.offset], source_etype=x.element), I64)
    ex_end = b.ptrtoint(b.gep(x.ptr, [b.add(x.offset, x_last)], source_etype=x.element), I64)
    ey = b.ptrtoint(b.gep(y.ptr, [y.offset], source_etype=y.element), I64)
    ey_end = b.ptrtoint(b.gep(y.ptr, [b.add(y.offset, y_last)], source_etype=y.element), I64)
    return b.or_(b.icmp_unsigned("<", ex_end, ey), b.icmp_unsigned("<", ey_end, ex))


def _gemm(ft: FunctionTranslator, op: GemmOp) -> None:
    b = ft.b
    a, bm, c = ft.get(op.a), ft.get(op.b), ft.get(op.c)
    m, n, k = c.sizes[0], c.sizes[1], a.sizes[1]
    f64 = ir.DoubleType()
    work = b.fmul(b.fmul(b.sitofp(m, f64), b.sitofp(n, f64)), b.sitofp(k, f64))
    big = b.fcmp_ordered(">=", work, ir.Constant(f64, float(GEMM_THRESHOLD)))
    a_row, a_col, a_lead, a_last = _layout(b, a)
    b_row, b_col, b_lead, b_last = _layout(b, bm)
    c_row, _, c_lead, c_last = _layout(b, c)
    ok = b.and_(big, b.and_(b.or_(a_row, a_col), b.and_(b.or_(b_row, b_col), c_row)))
    ok = b.and_(ok, b.and_(_disjoint(b, c, c_last, a, a_last), _disjoint(b, c, c_last, bm, b_last)))
    element = c.element
    name = "adpasses_cblas_dgemm" if isinstance(element, ir.DoubleType) else "adpasses_cblas_sgemm"
    ptr = ir.PointerType()
    gemm = ft.mt.declare(name, ir.VoidType(), [I32, I32, I32, I64, I64, I64, element, ptr, I64, ptr, I64,
                                               element, ptr, I64])
    with b.if_then(ok, likely=True):
        def trans(row: ir.Value) -> ir.Value:
            return b.select(row, ir.Constant(I32, _NO_TRANS), ir.Constant(I32, _TRANS))

        def at(v: MemRefValue) -> ir.Value:
            return b.gep(v.ptr, [v.offset], source_etype=v.element)

        one = ir.Constant(element, 1.0)
        b.call(gemm, [ir.Constant(I32, _ROW_MAJOR), trans(a_row), trans(b_row), m, n, k, one,
                      at(a), a_lead, at(bm), b_lead, one, at(c), c_lead])
    ft.set(op.done, ok)


LOWERINGS: dict[type[Operation], object] = {GemmOp: _gemm}  # ad.size_match: adpasses.lowering.stops
