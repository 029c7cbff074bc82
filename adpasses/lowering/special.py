"""The special dialect's ops (`dialects/special.py`) in LLVM.

lgamma calls C `lgamma_r` (not `lgamma`, which writes the global
`signgam`: a data race between threads running compiled code); gamma is
the libm call of its entry (`tgamma`). digamma and polygamma have no C
function: each is a small internal LLVM function emitted into the module
on first use (`__adpasses_digamma`, `__adpasses_polygamma`), computing in
f64 (f32/f16 operands are extended and the result rounded back):

- digamma(x): nan for nan and for x a pole below 0 (-1, -2, ...), -1/x
  at 0 (-inf at +0, +inf at -0), as scipy.special.digamma; for x < 0
  the reflection psi(x) = psi(1 - x) - pi / tan(pi x) (tan of the exact
  reduced argument x - round(x)); within 0.25 of the positive root
  x0 = 1.46163... the Taylor series about it (psi(x0 + z) = psi(x0) +
  sum_k (-1)^(k+1) zeta(k+1, x0) z^k), where the recurrence would cancel
  to nothing; else the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10
  and the asymptotic series ln x - 1/(2x) - sum_k B_2k / (2k x^2k).
- polygamma(n, x) for n >= 1: (-1)^(n+1) n! zeta(n+1, x), the Hurwitz
  zeta as the direct sum of (x + k)^-(n+1) up to x + k >= max(12, 2n + 8)
  and the Euler-Maclaurin tail (12 Bernoulli terms); n = 0 is digamma,
  n < 0 nan. At a pole (0, -0, -1, ..., -inf and every float below -2^52)
  (-1)^(n+1) inf, as scipy. For other x < 0 the sum runs |x| more steps;
  below -2^20 it would run too long and the result is nan
  (docs/frontend.md).
Both agree with scipy.special to ~1e-15 relative on (0, 30] and to
~2e-13 near the negative poles (test/test_special_functions.py).

The logistic family and xlogy are a few instructions in place, in the
operand's own type (so they vectorise with the loop around them):

- expit(x) = 1 / (1 + exp(-x)): exp(-x) overflows to inf for x < -709
  and the quotient is then 0, as it should be; no cancellation anywhere.
- log_expit(x) = min(x, 0) - log1p(exp(-|x|)): exp never overflows.
- logit(x) = log(x / (1 - x)).
- xlogy(x, y) = x log y, selected to 0 where x == 0 and y is not NaN
  (scipy's convention: 0 log 0 = 0).
"""

from __future__ import annotations

import math
from fractions import Fraction

from llvmlite import ir
from xdsl.ir import Operation

from adpasses.dialects.special import DigammaOp, ExpitOp, LgammaOp, LogExpitOp, LogitOp, PolygammaOp, XlogyOp
from adpasses.lowering.core import FunctionTranslator

F64 = ir.DoubleType()
I64 = ir.IntType(64)

DIGAMMA_ROOT = 1.4616321449683623
"""The positive zero of digamma (rounded to f64)."""
DIGAMMA_AT_ROOT = -9.241265521729427e-17
"""digamma(DIGAMMA_ROOT) (scipy.special.digamma)."""
ROOT_SERIES = (
    # (-1)^(k+1) zeta(k+1, DIGAMMA_ROOT), k = 1..25 (scipy.special.zeta):
    # the Taylor coefficients of digamma about its root.
    0.9676722454476214, -0.44276316898359214, 0.2584997609556512, -0.16394270544240658,
    0.10782405069126239, -0.07219956125645476, 0.048804288164143145, -0.033161126474847376,
    0.022597648232218125, -0.015424765904948968, 0.010538791616612182, -0.007204534386356875,
    0.004926781395729858, -0.0033698016554393317, 0.00230512632673493, -0.0015769367714301987,
    0.0010788252019162975, -0.000738070938996006, 0.0005049532658346026, -0.0003454680251063082,
    0.00023635601564027086, -0.00016170622091974825, 0.00011063372768747429, -7.569179582195077e-05,
    5.17857579522209e-05,
)
POLYGAMMA_NEGATIVE_LIMIT = -float(2 ** 20)
"""Below this x, polygamma(n >= 1, x) is nan (its sum would take |x| steps)."""


def _bernoulli(count: int) -> list[Fraction]:
    """B_0 .. B_count, exactly."""
    b = [Fraction(1)]
    for m in range(1, count + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b


_B = _bernoulli(24)
DIGAMMA_ASYMPTOTIC = [float(_B[2 * k] / (2 * k)) for k in range(1, 9)]
"""B_2k / 2k: psi(x) ~ ln x - 1/(2x) - sum_k B_2k/(2k) x^-2k."""
ZETA_TAIL = [float(_B[2 * j] / math.factorial(2 * j)) for j in range(1, 13)]
"""B_2j / (2j)!: the Euler-Maclaurin terms of the Hurwitz zeta's tail."""


def _c(x: float) -> ir.Constant:
    return ir.Constant(F64, x)


def _internal(module: ir.Module, name: str, params: list[ir.Type]) -> tuple[ir.Function, bool]:
    existing = module.globals.get(name)
    if existing is not None:
        return existing, False
    fn = ir.Function(module, ir.FunctionType(F64, params), name)
    fn.linkage = "internal"
    return fn, True


def _horner(b: ir.IRBuilder, coefficients, z: ir.Value) -> ir.Value:  # type: ignore[no-untyped-def]
    """sum_k coefficients[k] z^k."""
    acc = _c(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = b.fadd(b.fmul(acc, z), _c(c))
    return acc


def digamma_function(mt) -> ir.Function:  # type: ignore[no-untyped-def]
    fn, new = _internal(mt.llvm, "__adpasses_digamma", [F64])
    if not new:
        return fn
    (x,) = fn.args
    blocks = {n: fn.append_basic_block(n) for n in
              ("entry", "nan", "nonpositive", "zero", "negative", "reflect", "positive", "series", "loop", "step",
               "asymptotic")}
    b = ir.IRBuilder(blocks["entry"])
    floor = mt.intrinsic("llvm.floor", F64)
    b.cbranch(b.fcmp_unordered("uno", x, x), blocks["nan"], blocks["nonpositive"])
    b.position_at_end(blocks["nan"])
    b.ret(_c(math.nan))

    b.position_at_end(blocks["nonpositive"])
    b.cbranch(b.fcmp_ordered("<=", x, _c(0.0)), blocks["zero"], blocks["positive"])
    b.position_at_end(blocks["zero"])  # scipy: -1/x there, -inf at +0 and +inf at -0
    b.cbranch(b.fcmp_ordered("==", x, _c(0.0)), blocks["negative"], blocks["reflect"])
    b.position_at_end(blocks["negative"])
    b.ret(b.fneg(b.fdiv(_c(1.0), x)))
    b.position_at_end(blocks["reflect"])
    is_pole = b.fcmp_ordered("==", x, b.call(floor, [x]))
    reduced = b.fsub(x, b.call(mt.intrinsic("llvm.round", F64), [x]))  # exact, in [-1/2, 1/2]
    tan = b.call(mt.declare("tan", F64, [F64]), [b.fmul(_c(math.pi), reduced)])
    reflection = b.fneg(b.fdiv(_c(math.pi), tan))
    reflected_x = b.fsub(_c(1.0), x)
    b.cbranch(is_pole, blocks["nan"], blocks["positive"])

    b.position_at_end(blocks["positive"])
    y = b.phi(F64)
    y.add_incoming(x, blocks["nonpositive"])
    y.add_incoming(reflected_x, blocks["reflect"])
    base = b.phi(F64)
    base.add_incoming(_c(0.0), blocks["nonpositive"])
    base.add_incoming(reflection, blocks["reflect"])
    z = b.fsub(y, _c(DIGAMMA_ROOT))
    near_root = b.fcmp_ordered("<", b.call(mt.intrinsic("llvm.fabs", F64), [z]), _c(0.25))
    b.cbranch(near_root, blocks["series"], blocks["loop"])

    b.position_at_end(blocks["series"])
    series = b.fmul(_horner(b, ROOT_SERIES, z), z)
    b.ret(b.fadd(base, b.fadd(_c(DIGAMMA_AT_ROOT), series)))

    b.position_at_end(blocks["loop"])
    t = b.phi(F64)
    acc = b.phi(F64)
    t.add_incoming(y, blocks["positive"])
    acc.add_incoming(base, blocks["positive"])
    b.cbranch(b.fcmp_ordered("<", t, _c(10.0)), blocks["step"], blocks["asymptotic"])
    b.position_at_end(blocks["step"])
    t.add_incoming(b.fadd(t, _c(1.0)), blocks["step"])
    acc.add_incoming(b.fsub(acc, b.fdiv(_c(1.0), t)), blocks["step"])
    b.branch(blocks["loop"])

    b.position_at_end(blocks["asymptotic"])
    inv2 = b.fdiv(_c(1.0), b.fmul(t, t))
    tail = b.fmul(_horner(b, DIGAMMA_ASYMPTOTIC, inv2), inv2)
    log = b.call(mt.intrinsic("llvm.log", F64), [t])
    value = b.fsub(b.fsub(log, b.fdiv(_c(0.5), t)), tail)
    b.ret(b.fadd(acc, value))
    return fn


def polygamma_function(mt) -> ir.Function:  # type: ignore[no-untyped-def]
    fn, new = _internal(mt.llvm, "__adpasses_polygamma", [F64, I64])
    if not new:
        return fn
    x, n = fn.args
    blocks = {k: fn.append_basic_block(k) for k in
              ("entry", "digamma", "check", "nan", "poles", "pole", "limit", "start", "loop", "step", "tail", "fact",
               "fact_step", "done")}
    b = ir.IRBuilder(blocks["entry"])
    b.cbranch(b.icmp_signed("==", n, ir.Constant(I64, 0)), blocks["digamma"], blocks["check"])
    b.position_at_end(blocks["digamma"])
    b.ret(b.call(digamma_function(mt), [x]))

    b.position_at_end(blocks["check"])
    bad = b.or_(b.icmp_signed("<", n, ir.Constant(I64, 0)), b.fcmp_unordered("uno", x, x))
    b.cbranch(bad, blocks["nan"], blocks["poles"])
    b.position_at_end(blocks["nan"])
    b.ret(_c(math.nan))

    # A pole (0, -0, -1, ..., every float below -2^52, -inf): zeta(n + 1, x)
    # is +inf there, so (-1)^(n+1) inf, as scipy gives.
    b.position_at_end(blocks["poles"])
    is_pole = b.and_(b.fcmp_ordered("<=", x, _c(0.0)),
                     b.fcmp_ordered("==", x, b.call(mt.intrinsic("llvm.floor", F64), [x])))
    b.cbranch(is_pole, blocks["pole"], blocks["limit"])
    b.position_at_end(blocks["pole"])
    b.ret(b.select(b.trunc(n, ir.IntType(1)), _c(math.inf), _c(-math.inf)))
    b.position_at_end(blocks["limit"])
    b.cbranch(b.fcmp_ordered("<", x, _c(POLYGAMMA_NEGATIVE_LIMIT)), blocks["nan"], blocks["start"])

    # zeta(s, x) = sum_{k < K} (x + k)^-s + zeta(s, x + K), s = n + 1.
    b.position_at_end(blocks["start"])
    pow_ = mt.intrinsic("llvm.pow", F64, 2)
    nf = b.sitofp(n, F64)
    s = b.fadd(nf, _c(1.0))
    start = b.fadd(b.fmul(nf, _c(2.0)), _c(8.0))
    limit = b.select(b.fcmp_ordered("<", start, _c(12.0)), _c(12.0), start)
    minus_s = b.fneg(s)
    b.branch(blocks["loop"])
    b.position_at_end(blocks["loop"])
    t = b.phi(F64)
    acc = b.phi(F64)
    t.add_incoming(x, blocks["start"])
    acc.add_incoming(_c(0.0), blocks["start"])
    b.cbranch(b.fcmp_ordered("<", t, limit), blocks["step"], blocks["tail"])
    b.position_at_end(blocks["step"])
    t.add_incoming(b.fadd(t, _c(1.0)), blocks["step"])
    acc.add_incoming(b.fadd(acc, b.call(pow_, [t, minus_s])), blocks["step"])
    b.branch(blocks["loop"])

    # Euler-Maclaurin: zeta(s, t) ~ t^(1-s)/(s-1) + t^-s/2
    #   + sum_j B_2j/(2j)! s(s+1)...(s+2j-2) t^(-s-2j+1)
    b.position_at_end(blocks["tail"])
    t_minus_s = b.call(pow_, [t, minus_s])
    leading = b.call(pow_, [t, b.fneg(nf)])  # t^(1-s), not t^-s * t: that underflows first
    zeta = b.fadd(b.fdiv(leading, nf), b.fmul(t_minus_s, _c(0.5)))
    inv_t = b.fdiv(_c(1.0), t)
    inv2 = b.fmul(inv_t, inv_t)
    rising = s
    power = b.fmul(t_minus_s, inv_t)
    terms = _c(0.0)
    for j, coefficient in enumerate(ZETA_TAIL, start=1):
        terms = b.fadd(terms, b.fmul(_c(coefficient), b.fmul(rising, power)))
        rising = b.fmul(rising, b.fmul(b.fadd(s, _c(2.0 * j - 1)), b.fadd(s, _c(2.0 * j))))
        power = b.fmul(power, inv2)
    total = b.fadd(acc, b.fadd(zeta, terms))
    b.branch(blocks["fact"])

    # (-1)^(n+1) n!, exact up to n = 22
    b.position_at_end(blocks["fact"])
    k = b.phi(I64)
    fact = b.phi(F64)
    k.add_incoming(ir.Constant(I64, 1), blocks["tail"])
    fact.add_incoming(_c(1.0), blocks["tail"])
    b.cbranch(b.icmp_signed("<=", k, n), blocks["fact_step"], blocks["done"])
    b.position_at_end(blocks["fact_step"])
    k.add_incoming(b.add(k, ir.Constant(I64, 1)), blocks["fact_step"])
    fact.add_incoming(b.fmul(fact, b.sitofp(k, F64)), blocks["fact_step"])
    b.branch(blocks["fact"])
    b.position_at_end(blocks["done"])
    odd = b.trunc(n, ir.IntType(1))
    signed = b.select(odd, fact, b.fneg(fact))
    b.ret(b.fmul(signed, total))
    return fn


def lgamma_function(mt) -> ir.Function:  # type: ignore[no-untyped-def]
    fn, new = _internal(mt.llvm, "__adpasses_lgamma", [F64])
    if not new:
        return fn
    fn.attributes.add("alwaysinline")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    sign = b.alloca(ir.IntType(32))
    lgamma_r = mt.declare("lgamma_r", F64, [F64, sign.type])
    b.ret(b.call(lgamma_r, [fn.args[0], sign]))
    return fn


def _in_f64(ft: FunctionTranslator, op: Operation, helper: ir.Function, extra: list[ir.Value]) -> None:
    x = ft.get(op.operands[0])
    wide = x if x.type == F64 else ft.b.fpext(x, F64)
    result = ft.b.call(helper, [wide, *extra])
    ft.set(op.results[0], result if x.type == F64 else ft.b.fptrunc(result, x.type))


def _lgamma(ft: FunctionTranslator, op: Operation) -> None:
    _in_f64(ft, op, lgamma_function(ft.mt), [])


def _digamma(ft: FunctionTranslator, op: Operation) -> None:
    _in_f64(ft, op, digamma_function(ft.mt), [])


def _polygamma(ft: FunctionTranslator, op: Operation) -> None:
    n = ft.get(op.operands[1])
    if n.type.width < 64:
        n = ft.b.sext(n, I64)
    elif n.type.width > 64:
        n = ft.b.trunc(n, I64)
    _in_f64(ft, op, polygamma_function(ft.mt), [n])


def _call(ft: FunctionTranslator, name: str, x: ir.Value) -> ir.Value:
    return ft.b.call(ft.mt.intrinsic(name, x.type), [x], fastmath=ft.mt.fastmath)


def _libm_call(ft: FunctionTranslator, name: str, x: ir.Value) -> ir.Value:
    """C `name` (`name`f for f32) on x; f16 computes in f32."""
    wide = ir.FloatType() if isinstance(x.type, ir.HalfType) else x.type
    arg = ft.b.fpext(x, wide) if wide != x.type else x
    fn = ft.mt.declare(name + ("f" if isinstance(wide, ir.FloatType) else ""), wide, [wide])
    r = ft.b.call(fn, [arg], fastmath=ft.mt.fastmath)
    return ft.b.fptrunc(r, x.type) if wide != x.type else r


def _expit(ft: FunctionTranslator, op: Operation) -> None:
    x = ft.get(op.operands[0])
    one = ir.Constant(x.type, 1.0)
    e = _call(ft, "llvm.exp", ft.b.fneg(x))
    ft.set(op.results[0], ft.b.fdiv(one, ft.b.fadd(one, e, flags=ft.mt.fastmath), flags=ft.mt.fastmath))


def _log_expit(ft: FunctionTranslator, op: Operation) -> None:
    x = ft.get(op.operands[0])
    zero = ir.Constant(x.type, 0.0)
    low = ft.b.call(ft.mt.intrinsic("llvm.minnum", x.type, 2), [x, zero])
    tail = _libm_call(ft, "log1p", _call(ft, "llvm.exp", ft.b.fneg(_call(ft, "llvm.fabs", x))))
    # minnum(NaN, 0) is 0: put the NaN back.
    nan = ft.b.fcmp_unordered("uno", x, x)
    ft.set(op.results[0], ft.b.select(nan, x, ft.b.fsub(low, tail, flags=ft.mt.fastmath)))


def _logit(ft: FunctionTranslator, op: Operation) -> None:
    x = ft.get(op.operands[0])
    one = ir.Constant(x.type, 1.0)
    ratio = ft.b.fdiv(x, ft.b.fsub(one, x, flags=ft.mt.fastmath), flags=ft.mt.fastmath)
    ft.set(op.results[0], _call(ft, "llvm.log", ratio))


def _xlogy(ft: FunctionTranslator, op: Operation) -> None:
    x, y = ft.get(op.operands[0]), ft.get(op.operands[1])
    product = ft.b.fmul(x, _call(ft, "llvm.log", y), flags=ft.mt.fastmath)
    zero = ir.Constant(x.type, 0.0)
    x_zero = ft.b.fcmp_ordered("oeq", x, zero)
    y_number = ft.b.fcmp_ordered("ord", y, y)
    ft.set(op.results[0], ft.b.select(ft.b.and_(x_zero, y_number), zero, product))


CUSTOM = {LgammaOp: _lgamma, DigammaOp: _digamma, PolygammaOp: _polygamma, ExpitOp: _expit,
          LogExpitOp: _log_expit, LogitOp: _logit, XlogyOp: _xlogy}
"""Lowerings of the special dialect's entries with `llvm=Custom()`."""
