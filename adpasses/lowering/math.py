"""math -> LLVM beyond the op table's one-call lowerings.

The math ops of the op table (`adpasses/ops/math.py`) are lowered from
their entries (`lowering/scalar_ops.py`): intrinsics where LLVM has them,
libm calls otherwise (MCJIT resolves libm symbols such as `erf`, `atan` in
the running process; float32 ops call the `f`-suffixed functions). Here:
the libm call those entries use (`libm`) and the lowerings of the entries
that need more (`CUSTOM`: rsqrt, fpowi). Every float math op the lowering
handles has an entry (`test/test_op_table.py`).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import math
from xdsl.ir import Operation

from adpasses.lowering.core import FunctionTranslator

def _libm_name(name: str, ty: ir.Type) -> str:
    return name + "f" if isinstance(ty, ir.FloatType) else name


def libm(name: str):  # type: ignore[no-untyped-def]
    """A call of the C function `name` on the operands."""

    def lower(ft: FunctionTranslator, op: Operation) -> None:
        args = [ft.get(o) for o in op.operands]
        ty = args[0].type
        if isinstance(ty, ir.HalfType):
            # libm has no f16 functions: compute in f32 and round back.
            args = [ft.b.fpext(a, ir.FloatType()) for a in args]
        call_ty = args[0].type
        fn = ft.mt.declare(_libm_name(name, call_ty), call_ty, [call_ty] * len(args))
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


CUSTOM = {math.RsqrtOp: _rsqrt, math.FPowIOp: _fpowi}
"""Lowerings of op-table entries with `llvm=Custom()` (lowering/scalar_ops.py)."""
