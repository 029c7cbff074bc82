"""Reverse rules of the math dialect.

Where a derivative is a function of the op's own result (exp, tanh, sqrt,
...), the rule needs the result rather than the operand, so the cache
planner can reuse the forward value instead of recomputing the function.
"""

from __future__ import annotations

import math as pymath

from xdsl.dialects import arith, math
from xdsl.ir import Operation

from adpasses.analysis.affine_index import constant_of
from adpasses.reverse.rules import (
    ZERO_DERIVATIVE,
    ScalarRule,
    needs_operands,
    needs_result_and,
    scalar,
)


def _x(op):
    return op.operand


@scalar(needs=needs_result_and())
def _exp(rc, op, g, want):
    return (rc.mul(g, rc.primal(op.result)),)


@scalar(needs=needs_result_and())
def _exp2(rc, op, g, want):
    return (rc.mul(g, rc.mul(rc.primal(op.result), rc.const(pymath.log(2.0), g.type))),)


@scalar(needs=needs_result_and())
def _expm1(rc, op, g, want):
    # d expm1(x) = exp(x) = expm1(x) + 1
    return (rc.mul(g, rc.add(rc.primal(op.result), rc.const(1.0, g.type))),)


@scalar(needs=needs_operands("operand"))
def _log(rc, op, g, want):
    return (rc.div(g, rc.primal(_x(op))),)


def _log_base(ln_base: float) -> ScalarRule:
    @scalar(needs=needs_operands("operand"))
    def rule(rc, op, g, want):
        return (rc.div(g, rc.mul(rc.primal(_x(op)), rc.const(ln_base, g.type))),)

    return rule


@scalar(needs=needs_operands("operand"))
def _log1p(rc, op, g, want):
    return (rc.div(g, rc.add(rc.primal(_x(op)), rc.const(1.0, g.type))),)


@scalar(needs=needs_operands("operand"))
def _sin(rc, op, g, want):
    return (rc.mul(g, rc.insert(math.CosOp(rc.primal(_x(op)))).result),)


@scalar(needs=needs_operands("operand"))
def _cos(rc, op, g, want):
    return (rc.neg(rc.mul(g, rc.insert(math.SinOp(rc.primal(_x(op)))).result)),)


@scalar(needs=needs_result_and())
def _tan(rc, op, g, want):
    r = rc.primal(op.result)
    return (rc.mul(g, rc.add(rc.const(1.0, g.type), rc.mul(r, r))),)


@scalar(needs=needs_result_and())
def _tanh(rc, op, g, want):
    r = rc.primal(op.result)
    return (rc.mul(g, rc.sub(rc.const(1.0, g.type), rc.mul(r, r))),)


@scalar(needs=needs_operands("operand"))
def _sinh(rc, op, g, want):
    return (rc.mul(g, rc.insert(math.CoshOp(rc.primal(_x(op)))).result),)


@scalar(needs=needs_operands("operand"))
def _cosh(rc, op, g, want):
    return (rc.mul(g, rc.insert(math.SinhOp(rc.primal(_x(op)))).result),)


def _one_minus_x2_sqrt(rc, op, g):
    x = rc.primal(_x(op))
    return rc.insert(math.SqrtOp(rc.sub(rc.const(1.0, g.type), rc.mul(x, x)))).result


@scalar(needs=needs_operands("operand"))
def _asin(rc, op, g, want):
    return (rc.div(g, _one_minus_x2_sqrt(rc, op, g)),)


@scalar(needs=needs_operands("operand"))
def _acos(rc, op, g, want):
    return (rc.neg(rc.div(g, _one_minus_x2_sqrt(rc, op, g))),)


@scalar(needs=needs_operands("operand"))
def _atan(rc, op, g, want):
    x = rc.primal(_x(op))
    return (rc.div(g, rc.add(rc.const(1.0, g.type), rc.mul(x, x))),)


@scalar(needs=needs_operands("lhs", "rhs"))
def _atan2(rc, op, g, want):
    # atan2(y, x): dy = x/(x^2+y^2), dx = -y/(x^2+y^2)
    y, x = rc.primal(op.lhs), rc.primal(op.rhs)
    scale = rc.div(g, rc.add(rc.mul(x, x), rc.mul(y, y)))
    return (
        rc.mul(scale, x) if want[0] else None,
        rc.neg(rc.mul(scale, y)) if want[1] else None,
    )


@scalar(needs=needs_result_and())
def _sqrt(rc, op, g, want):
    return (rc.div(rc.mul(g, rc.const(0.5, g.type)), rc.primal(op.result)),)


@scalar(needs=needs_result_and())
def _rsqrt(rc, op, g, want):
    # d x^(-1/2) = -1/2 x^(-3/2) = -r^3/2
    r = rc.primal(op.result)
    return (rc.mul(g, rc.mul(rc.const(-0.5, g.type), rc.mul(r, rc.mul(r, r)))),)


@scalar(needs=needs_result_and())
def _cbrt(rc, op, g, want):
    r = rc.primal(op.result)
    return (rc.div(g, rc.mul(rc.const(3.0, g.type), rc.mul(r, r))),)


def _powf_needs(op, want):
    return ([op.lhs, op.rhs] if want[0] else []) + ([op.lhs, op.result] if want[1] else [])


@scalar(needs=_powf_needs)
def _powf(rc, op, g, want):
    # d a^b = b a^(b-1) da + a^b log(a) db; a^(b-1) is computed directly
    # (not r/a) so that a = 0 gives the right limit. The two limits where
    # that is 0 * inf = NaN take the value of the derivative where it
    # exists, as JAX does: d/da = 0 for b = 0 (a^0 is constant), and
    # d/db = 0 for a = 0 (0^b is 0 for b > 0; log(a) is replaced by 0).
    da = db = None
    if want[0]:
        a, b = rc.primal(op.lhs), rc.primal(op.rhs)
        bm1 = rc.sub(b, rc.const(1.0, g.type))
        da = rc.mul(g, rc.mul(b, rc.insert(math.PowFOp(a, bm1)).result))
        da = rc.select(rc.cmpf("oeq", b, rc.zero(g.type)), rc.zero(g.type), da)
    if want[1]:
        a, r = rc.primal(op.lhs), rc.primal(op.result)
        at_zero = rc.cmpf("oeq", a, rc.zero(g.type))
        safe_a = rc.select(at_zero, rc.const(1.0, g.type), a)
        db = rc.mul(g, rc.mul(r, rc.insert(math.LogOp(safe_a)).result))
    return da, db


@scalar(needs=needs_operands("lhs", "rhs"))
def _fpowi(rc, op, g, want):
    # d a^n = n a^(n-1), and 0 for n = 0: there a^(n-1) is infinite at a = 0
    # and 0 * inf would be NaN.
    if constant_of(op.rhs) == 0:
        return rc.zero(g.type), None
    a, n = rc.primal(op.lhs), rc.primal(op.rhs)
    nm1 = rc.sub_int(n, 1)
    da = rc.mul(g, rc.mul(rc.int_to_float(n, g.type), rc.insert(math.FPowIOp(a, nm1)).result))
    if constant_of(op.rhs) is None:
        nonzero = rc.insert(arith.CmpiOp(n, rc.zero(n.type), "ne")).results[0]
        da = rc.select(nonzero, da, rc.zero(g.type))
    return da, None


@scalar(needs=needs_operands("operand"))
def _absf(rc, op, g, want):
    x = rc.primal(_x(op))
    negative = rc.cmpf("olt", x, rc.zero(g.type))
    return (rc.select(negative, rc.neg(g), g),)


@scalar(needs=needs_operands("operand"))
def _erf(rc, op, g, want):
    x = rc.primal(_x(op))
    gauss = rc.insert(math.ExpOp(rc.neg(rc.mul(x, x)))).result
    return (rc.mul(g, rc.mul(rc.const(2.0 / pymath.sqrt(pymath.pi), g.type), gauss)),)


def _fma_needs(op, want):
    return [v for v, w in ((op.b, want[0]), (op.a, want[1])) if w]


@scalar(needs=_fma_needs)
def _fma(rc, op, g, want):
    return (
        rc.mul(g, rc.primal(op.b)) if want[0] else None,
        rc.mul(g, rc.primal(op.a)) if want[1] else None,
        g,
    )


@scalar(needs=lambda op, want: [op.lhs, op.rhs] if want[0] else [])
def _copysign(rc, op, g, want):
    # copysign(a, b) = |a| sign(b): d/da = sign(a) sign(b); b only moves the
    # sign, so its derivative is zero almost everywhere.
    da = None
    if want[0]:
        a, b = rc.primal(op.lhs), rc.primal(op.rhs)
        one = rc.const(1.0, g.type)
        sign_a = rc.insert(math.CopySignOp(one, a)).result
        sign_b = rc.insert(math.CopySignOp(one, b)).result
        da = rc.mul(g, rc.mul(sign_a, sign_b))
    return da, (rc.zero(g.type) if want[1] else None)


RULES: dict[type[Operation], ScalarRule] = {
    math.ExpOp: _exp,
    math.Exp2Op: _exp2,
    math.ExpM1Op: _expm1,
    math.LogOp: _log,
    math.Log2Op: _log_base(pymath.log(2.0)),
    math.Log10Op: _log_base(pymath.log(10.0)),
    math.Log1pOp: _log1p,
    math.SinOp: _sin,
    math.CosOp: _cos,
    math.TanOp: _tan,
    math.TanhOp: _tanh,
    math.SinhOp: _sinh,
    math.CoshOp: _cosh,
    math.AsinOp: _asin,
    math.AcosOp: _acos,
    math.AtanOp: _atan,
    math.Atan2Op: _atan2,
    math.SqrtOp: _sqrt,
    math.RsqrtOp: _rsqrt,
    math.CbrtOp: _cbrt,
    math.PowFOp: _powf,
    math.FPowIOp: _fpowi,
    math.AbsFOp: _absf,
    math.ErfOp: _erf,
    math.FmaOp: _fma,
    math.CopySignOp: _copysign,
    math.FloorOp: ZERO_DERIVATIVE,
    math.CeilOp: ZERO_DERIVATIVE,
    math.RoundOp: ZERO_DERIVATIVE,
    math.RoundEvenOp: ZERO_DERIVATIVE,
    math.TruncOp: ZERO_DERIVATIVE,
}
