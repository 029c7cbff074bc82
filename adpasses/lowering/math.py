"""math -> LLVM: intrinsics where LLVM has them, libm calls otherwise.

MCJIT resolves libm symbols (`tanh`, `erf`, ...) in the running process.
Float32 ops call the `f`-suffixed libm functions.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import math
from xdsl.ir import Operation

from adpasses.lowering.core import FunctionTranslator

INTRINSICS = {
    math.ExpOp: "llvm.exp",
    math.Exp2Op: "llvm.exp2",
    math.LogOp: "llvm.log",
    math.Log2Op: "llvm.log2",
    math.Log10Op: "llvm.log10",
    math.SinOp: "llvm.sin",
    math.CosOp: "llvm.cos",
    math.SqrtOp: "llvm.sqrt",
    math.AbsFOp: "llvm.fabs",
    math.FloorOp: "llvm.floor",
    math.CeilOp: "llvm.ceil",
    math.RoundOp: "llvm.round",
    math.RoundEvenOp: "llvm.roundeven",
    math.TruncOp: "llvm.trunc",
}
BINARY_INTRINSICS = {math.PowFOp: "llvm.pow", math.CopySignOp: "llvm.copysign"}
LIBM = {
    math.TanOp: "tan",
    math.TanhOp: "tanh",
    math.SinhOp: "sinh",
    math.CoshOp: "cosh",
    math.AsinOp: "asin",
    math.AcosOp: "acos",
    math.AtanOp: "atan",
    math.AsinhOp: "asinh",
    math.AcoshOp: "acosh",
    math.AtanhOp: "atanh",
    math.ErfOp: "erf",
    math.ExpM1Op: "expm1",
    math.Log1pOp: "log1p",
    math.CbrtOp: "cbrt",
}
BINARY_LIBM = {math.Atan2Op: "atan2"}


def _libm_name(name: str, ty: ir.Type) -> str:
    return name + "f" if isinstance(ty, ir.FloatType) else name


def _unary_intrinsic(name: str):  # type: ignore[no-untyped-def]
    def lower(ft: FunctionTranslator, op: Operation) -> None:
        x = ft.get(op.operand)
        ft.set(op.result, ft.b.call(ft.mt.intrinsic(name, x.type), [x], fastmath=ft.mt.fastmath))

    return lower


def _binary_intrinsic(name: str):  # type: ignore[no-untyped-def]
    def lower(ft: FunctionTranslator, op: Operation) -> None:
        a = ft.get(op.lhs)
        fn = ft.mt.intrinsic(name, a.type, 2)
        ft.set(op.result, ft.b.call(fn, [a, ft.get(op.rhs)], fastmath=ft.mt.fastmath))

    return lower


def _libm(name: str, arity: int):  # type: ignore[no-untyped-def]
    def lower(ft: FunctionTranslator, op: Operation) -> None:
        args = [ft.get(o) for o in op.operands]
        ty = args[0].type
        if isinstance(ty, ir.HalfType):
            # libm has no f16 functions: compute in f32 and round back.
            args = [ft.b.fpext(a, ir.FloatType()) for a in args]
        call_ty = args[0].type
        fn = ft.mt.declare(_libm_name(name, call_ty), call_ty, [call_ty] * arity)
        result = ft.b.call(fn, args, fastmath=ft.mt.fastmath)
        ft.set(op.results[0], ft.b.fptrunc(result, ty) if call_ty != ty else result)

    return lower


def _rsqrt(ft: FunctionTranslator, op: Operation) -> None:
    x = ft.get(op.operand)
    root = ft.b.call(ft.mt.intrinsic("llvm.sqrt", x.type), [x], fastmath=ft.mt.fastmath)
    ft.set(op.result, ft.b.fdiv(ir.Constant(x.type, 1.0), root, flags=ft.mt.fastmath))


def _fpowi(ft: FunctionTranslator, op: Operation) -> None:
    # Not llvm.powi: it lowers to __powidf2 from the compiler runtime, which a
    # Python process need not have loaded; and not libm pow, which costs
    # ~40x a multiplication (u**3 in a loop ran 40x slower than u*u*u).
    # A constant exponent becomes a chain of squarings; any other calls a
    # small binary-exponentiation helper that LLVM inlines.
    # Beyond |n| = 64 squaring loses accuracy (each squaring doubles the
    # relative error: ~n ulps), so large exponents call pow(x, double(n)),
    # which is also what Python computes for float ** int.
    x, n = ft.get(op.lhs), ft.get(op.rhs)
    if isinstance(n, ir.Constant) and isinstance(n.constant, int):
        if abs(n.constant) <= SQUARING_LIMIT:
            ft.set(op.result, _power_chain(ft.b, x, n.constant, ft.mt.fastmath))
        else:
            ft.set(op.result, _libm_pow(ft.mt, ft.b, x, n))
        return
    helper = _powi_helper(ft.mt, x.type, n.type)
    ft.set(op.result, ft.b.call(helper, [x, n]))


SQUARING_LIMIT = 64
"""Largest |n| for which x**n is computed by repeated squaring."""


def _libm_pow(mt, b: ir.IRBuilder, x: ir.Value, n: ir.Value) -> ir.Value:  # type: ignore[no-untyped-def]
    return b.call(mt.intrinsic("llvm.pow", x.type, 2), [x, b.sitofp(n, x.type)])


def _power_chain(b: ir.IRBuilder, x: ir.Value, n: int, flags: tuple) -> ir.Value:
    """x**n by repeated squaring, 1/x**|n| for negative n."""
    k, result, square = abs(n), None, x
    while k:
        if k & 1:
            result = square if result is None else b.fmul(result, square, flags=flags)
        k >>= 1
        if k:
            square = b.fmul(square, square, flags=flags)
    if result is None:
        return ir.Constant(x.type, 1.0)
    return b.fdiv(ir.Constant(x.type, 1.0), result, flags=flags) if n < 0 else result


def _powi_helper(mt, ty: ir.Type, ity: ir.Type) -> ir.Function:  # type: ignore[no-untyped-def]
    module = mt.llvm
    name = f"__adpasses_powi_{_suffix(ty)}_{ity.width}"
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    fn = ir.Function(module, ir.FunctionType(ty, [ty, ity]), name)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    x, n = fn.args
    entry, loop, done, far = (fn.append_basic_block(n) for n in ("entry", "loop", "done", "far"))
    b = ir.IRBuilder(entry)
    negative = b.icmp_signed("<", n, ir.Constant(ity, 0))
    k0 = b.select(negative, b.neg(n), n)  # unsigned: |-2**(w-1)| = 2**(w-1)
    b.cbranch(b.icmp_unsigned(">", k0, ir.Constant(ity, SQUARING_LIMIT)), far, loop)
    b.position_at_end(far)
    b.ret(_libm_pow(mt, b, x, n))
    b.position_at_end(loop)
    k = b.phi(ity)
    acc = b.phi(ty)
    sq = b.phi(ty)
    odd = b.trunc(k, ir.IntType(1))
    acc_next = b.select(odd, b.fmul(acc, sq), acc)
    k_next = b.lshr(k, ir.Constant(ity, 1))
    sq_next = b.fmul(sq, sq)
    b.cbranch(b.icmp_unsigned("!=", k_next, ir.Constant(ity, 0)), loop, done)
    k.add_incoming(k0, entry)
    k.add_incoming(k_next, loop)
    acc.add_incoming(ir.Constant(ty, 1.0), entry)
    acc.add_incoming(acc_next, loop)
    sq.add_incoming(x, entry)
    sq.add_incoming(sq_next, loop)
    b.position_at_end(done)
    b.ret(b.select(negative, b.fdiv(ir.Constant(ty, 1.0), acc_next), acc_next))
    return fn


def _suffix(ty: ir.Type) -> str:
    return {ir.DoubleType: "f64", ir.FloatType: "f32", ir.HalfType: "f16"}.get(type(ty), "f")


def _fma(ft: FunctionTranslator, op: math.FmaOp) -> None:
    a = ft.get(op.a)
    fn = ft.mt.intrinsic("llvm.fma", a.type, 3)
    ft.set(op.result, ft.b.call(fn, [a, ft.get(op.b), ft.get(op.c)], fastmath=ft.mt.fastmath))


LOWERINGS = {
    **{cls: _unary_intrinsic(name) for cls, name in INTRINSICS.items()},
    **{cls: _binary_intrinsic(name) for cls, name in BINARY_INTRINSICS.items()},
    **{cls: _libm(name, 1) for cls, name in LIBM.items()},
    **{cls: _libm(name, 2) for cls, name in BINARY_LIBM.items()},
    math.RsqrtOp: _rsqrt,
    math.FPowIOp: _fpowi,
    math.FmaOp: _fma,
}
