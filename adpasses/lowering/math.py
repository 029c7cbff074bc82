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
    # llvm.powi lowers to __powidf2 from the compiler runtime, which a Python
    # process need not have loaded: use libm pow with the exponent converted
    # (exact for |n| < 2**53).
    x, n = ft.get(op.lhs), ft.get(op.rhs)
    exponent = ft.b.sitofp(n, x.type)
    fn = ft.mt.intrinsic("llvm.pow", x.type, 2)
    ft.set(op.result, ft.b.call(fn, [x, exponent], fastmath=ft.mt.fastmath))


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
