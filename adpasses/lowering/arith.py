"""arith -> LLVM: one small function per op kind.

The float ops of the op table (addf, ..., extf) are lowered from their
entries (`lowering/scalar_ops.py`); `CUSTOM` holds the entries' lowerings
that are more than one instruction (select).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import arith, ub
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, MemRefType
from xdsl.ir import Operation

from adpasses.core import stop_codes
from adpasses.core.diagnostics import error_at
from adpasses.dialects.upstream import IndexCastUIOp
from adpasses.lowering.core import FunctionTranslator, UnsupportedType, scalar_type


def _binary(method: str):  # type: ignore[no-untyped-def]
    def lower(ft: FunctionTranslator, op: Operation) -> None:
        ft.set(op.results[0], getattr(ft.b, method)(ft.get(op.lhs), ft.get(op.rhs)))

    return lower


def _nonzero_divisor(ft: FunctionTranslator, op: Operation) -> ir.Value:
    """The divisor of an integer division; with checks on, a zero divisor
    ends the call with ZeroDivisionError (LLVM's sdiv by zero would trap)."""
    d = ft.get(op.rhs)
    if ft.mt.boundscheck and not (isinstance(d, ir.Constant) and d.constant != 0):
        site = ft.mt.check_site(op)
        zero = ir.Constant(d.type, 0)
        ft.stop_if(ft.b.icmp_signed("==", d, zero), site, ir.Constant(ir.IntType(64), 0),
                   stop_codes.ZERO_DIVISION, ir.Constant(ir.IntType(64), 0))
    return d


def _signed_divisor(ft: FunctionTranslator, op: Operation) -> tuple[ir.Value, ir.Value | None]:
    """The divisor of a signed division, and whether it is -1 (None where it
    is a constant that is not). The most negative int divided by -1
    overflows, and x86's idiv traps on it (SIGFPE: the process dies, even
    for Python's `-2**63 // -1`); ints wrap here, so `a / -1` is `-a`
    (wrapped) and `a % -1` is 0: divide by 1 instead and negate the
    quotient. The remainder by 1 is already 0."""
    d = _nonzero_divisor(ft, op)
    if isinstance(d, ir.Constant) and d.constant != -1:
        return d, None
    minus_one = ft.b.icmp_signed("==", d, ir.Constant(d.type, -1))
    return ft.b.select(minus_one, ir.Constant(d.type, 1), d), minus_one


def _negated_if(ft: FunctionTranslator, minus_one: ir.Value | None, q: ir.Value) -> ir.Value:
    return q if minus_one is None else ft.b.select(minus_one, ft.b.neg(q), q)


def _int_division(method: str):  # type: ignore[no-untyped-def]
    def lower(ft: FunctionTranslator, op: Operation) -> None:
        if method in ("sdiv", "srem"):
            d, minus_one = _signed_divisor(ft, op)
            r = getattr(ft.b, method)(ft.get(op.lhs), d)
            ft.set(op.results[0], _negated_if(ft, minus_one, r) if method == "sdiv" else r)
            return
        d = _nonzero_divisor(ft, op)
        ft.set(op.results[0], getattr(ft.b, method)(ft.get(op.lhs), d))

    return lower


def _poison(ft: FunctionTranslator, op: ub.PoisonOp) -> None:
    """ub.poison of a scalar: LLVM's undef (any use of it is the program's
    undefined behaviour, as in MLIR)."""
    try:
        ty = scalar_type(op.result.type)
    except UnsupportedType:
        raise error_at(op, f"of type {op.result.type} is not supported by the LLVM lowering; "
                           "only scalar poison values are") from None
    ft.set(op.result, ir.Constant(ty, ir.Undefined))


def _constant(ft: FunctionTranslator, op: arith.ConstantOp) -> None:
    attr = op.value
    ty = scalar_type(op.result.type)
    if isinstance(attr, IntegerAttr):
        ft.set(op.result, ir.Constant(ty, attr.value.data))
    elif isinstance(attr, FloatAttr):
        ft.set(op.result, ir.Constant(ty, attr.value.data))
    else:
        raise error_at(op, "vector and tensor constants are not supported by the LLVM lowering")


def _floordivsi(ft: FunctionTranslator, op: Operation) -> None:
    # Round toward -inf: q = a / b, minus one when the remainder is nonzero
    # and has the opposite sign of b.
    # (By -1: the quotient by 1 negated, the remainder 0, no adjustment.)
    (a, (b_, minus_one)), b = (ft.get(op.lhs), _signed_divisor(ft, op)), ft.b
    q, r = _negated_if(ft, minus_one, b.sdiv(a, b_)), b.srem(a, b_)
    zero = ir.Constant(a.type, 0)
    adjust = b.and_(b.icmp_signed("!=", r, zero),
                    b.icmp_signed("!=", b.icmp_signed("<", r, zero), b.icmp_signed("<", b_, zero)))
    ft.set(op.results[0], b.sub(q, b.zext(adjust, a.type)))


def _ceildivsi(ft: FunctionTranslator, op: Operation) -> None:
    (a, (b_, minus_one)), b = (ft.get(op.lhs), _signed_divisor(ft, op)), ft.b
    q, r = _negated_if(ft, minus_one, b.sdiv(a, b_)), b.srem(a, b_)
    zero = ir.Constant(a.type, 0)
    adjust = b.and_(b.icmp_signed("!=", r, zero),
                    b.icmp_signed("==", b.icmp_signed("<", r, zero), b.icmp_signed("<", b_, zero)))
    ft.set(op.results[0], b.add(q, b.zext(adjust, a.type)))


def _minmax(pred: str, signed: bool):  # type: ignore[no-untyped-def]
    def lower(ft: FunctionTranslator, op: Operation) -> None:
        a, c = ft.get(op.lhs), ft.get(op.rhs)
        cmp = ft.b.icmp_signed(pred, a, c) if signed else ft.b.icmp_unsigned(pred, a, c)
        ft.set(op.results[0], ft.b.select(cmp, a, c))

    return lower


CMPF = {
    "oeq": ("==", True), "ogt": (">", True), "oge": (">=", True), "olt": ("<", True),
    "ole": ("<=", True), "one": ("!=", True), "ord": ("ord", True),
    "ueq": ("==", False), "ugt": (">", False), "uge": (">=", False), "ult": ("<", False),
    "ule": ("<=", False), "une": ("!=", False), "uno": ("uno", False),
}
CMPI = {
    "eq": ("==", True), "ne": ("!=", True), "slt": ("<", True), "sle": ("<=", True),
    "sgt": (">", True), "sge": (">=", True), "ult": ("<", False), "ule": ("<=", False),
    "ugt": (">", False), "uge": (">=", False),
}


def _cmpf(ft: FunctionTranslator, op: arith.CmpfOp) -> None:
    name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    a, c = ft.get(op.lhs), ft.get(op.rhs)
    if name in ("false", "true"):
        ft.set(op.result, ir.Constant(ir.IntType(1), int(name == "true")))
        return
    pred, ordered = CMPF[name]
    cmp = ft.b.fcmp_ordered if ordered else ft.b.fcmp_unordered
    ft.set(op.result, cmp(pred, a, c, flags=ft.mt.fastmath))


def _cmpi(ft: FunctionTranslator, op: arith.CmpiOp) -> None:
    name = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    pred, signed = CMPI[name]
    cmp = ft.b.icmp_signed if signed else ft.b.icmp_unsigned
    ft.set(op.result, cmp(pred, ft.get(op.lhs), ft.get(op.rhs)))


def _select(ft: FunctionTranslator, op: arith.SelectOp) -> None:
    cond = ft.get(op.cond)
    if isinstance(op.result.type, MemRefType):
        # A memref is several LLVM values: select each part.
        parts = [ft.b.select(cond, a, c) for a, c in zip(ft.flatten(op.lhs), ft.flatten(op.rhs))]
        ft.set(op.result, ft.unflatten(op.result.type, parts))
        return
    ft.set(op.result, ft.b.select(cond, ft.get(op.lhs), ft.get(op.rhs)))


def _cast(method: str):  # type: ignore[no-untyped-def]
    def lower(ft: FunctionTranslator, op: Operation) -> None:
        ft.set(op.results[0], getattr(ft.b, method)(ft.get(op.operands[0]), scalar_type(op.results[0].type)))

    return lower


def _float_to_int(signed: bool):  # type: ignore[no-untyped-def]
    """fptosi / fptoui. LLVM makes poison of a value that does not fit
    (NaN, infinities, out of range): with checks on, such a value stops the
    call instead, as Python's int() raises (ValueError for NaN,
    OverflowError otherwise), naming the op's location."""

    def lower(ft: FunctionTranslator, op: Operation) -> None:
        x = ft.get(op.operands[0])
        to = scalar_type(op.results[0].type)
        if ft.mt.boundscheck:
            _check_fits(ft, op, x, to.width, signed)
        method = "fptosi" if signed else "fptoui"
        ft.set(op.results[0], getattr(ft.b, method)(x, to))

    return lower


def _check_fits(ft: FunctionTranslator, op: Operation, x: ir.Value, width: int, signed: bool) -> None:
    b = ft.b
    f64 = ir.DoubleType()
    xd = x if isinstance(x.type, ir.DoubleType) else b.fpext(x, f64)
    # The conversion truncates toward zero: x fits iff lo < x < hi with
    # lo = min - 1 and hi = max + 1 (powers of two, exact in f64; where
    # min - 1 is not exact in f64, x >= min is the same test).
    high = float(2 ** (width - 1) if signed else 2 ** width)
    if not signed:
        low_ok = b.fcmp_ordered(">", xd, ir.Constant(f64, -1.0))
    elif width <= 53:
        low_ok = b.fcmp_ordered(">", xd, ir.Constant(f64, float(-(2 ** (width - 1)) - 1)))
    else:
        low_ok = b.fcmp_ordered(">=", xd, ir.Constant(f64, float(-(2 ** (width - 1)))))
    fits = b.and_(low_ok, b.fcmp_ordered("<", xd, ir.Constant(f64, high)))
    site = ft.mt.check_site(op)
    i64 = ir.IntType(64)
    ft.stop_if(b.not_(fits), site, b.bitcast(xd, i64), stop_codes.FLOAT_TO_INT,
               ir.Constant(i64, width if signed else -width))


def _int_resize(ft: FunctionTranslator, op: Operation) -> None:
    """index_cast(ui) / extsi / extui / trunci between integer widths."""
    x = ft.get(op.operands[0])
    to = scalar_type(op.results[0].type)
    if x.type.width == to.width:
        ft.set(op.results[0], x)
    elif x.type.width > to.width:
        ft.set(op.results[0], ft.b.trunc(x, to))
    elif isinstance(op, (arith.ExtUIOp, IndexCastUIOp)) or (
        isinstance(op, arith.IndexCastOp)
        and isinstance(op.operands[0].type, IntegerType)
        and op.operands[0].type.width.data == 1
    ):
        ft.set(op.results[0], ft.b.zext(x, to))
    else:
        ft.set(op.results[0], ft.b.sext(x, to))


CUSTOM = {arith.SelectOp: _select}
"""Lowerings of op-table entries with `llvm=Custom()` (lowering/scalar_ops.py):
select also chooses between integers and memrefs."""

LOWERINGS = {
    arith.ConstantOp: _constant,
    ub.PoisonOp: _poison,
    arith.AddiOp: _binary("add"),
    arith.SubiOp: _binary("sub"),
    arith.MuliOp: _binary("mul"),
    arith.DivSIOp: _int_division("sdiv"),
    arith.DivUIOp: _int_division("udiv"),
    arith.RemSIOp: _int_division("srem"),
    arith.RemUIOp: _int_division("urem"),
    arith.FloorDivSIOp: _floordivsi,
    arith.CeilDivSIOp: _ceildivsi,
    arith.MinSIOp: _minmax("<", True),
    arith.MaxSIOp: _minmax(">", True),
    arith.MinUIOp: _minmax("<", False),
    arith.MaxUIOp: _minmax(">", False),
    arith.AndIOp: _binary("and_"),
    arith.OrIOp: _binary("or_"),
    arith.XOrIOp: _binary("xor"),
    arith.ShLIOp: _binary("shl"),
    arith.ShRSIOp: _binary("ashr"),
    arith.ShRUIOp: _binary("lshr"),
    arith.CmpfOp: _cmpf,
    arith.CmpiOp: _cmpi,
    arith.SIToFPOp: _cast("sitofp"),
    arith.UIToFPOp: _cast("uitofp"),
    arith.FPToSIOp: _float_to_int(signed=True),
    arith.FPToUIOp: _float_to_int(signed=False),
    arith.BitcastOp: _cast("bitcast"),
    arith.IndexCastOp: _int_resize,
    arith.ExtSIOp: _int_resize,
    arith.ExtUIOp: _int_resize,
    arith.TruncIOp: _int_resize,
    IndexCastUIOp: _int_resize,
}


