"""The math dialect's scalar ops, one entry each (see `adpasses/ops/entry.py`).

Where a derivative is a function of the op's own result (exp, tanh, sqrt,
...), the partial reads the result rather than the operand, so the cache
planner can reuse the forward value instead of recomputing the function.
Constants written `c(...)` before the expression they start are emitted
first (the order of the generated code, see `partials.py`).
"""

from __future__ import annotations

import math as pymath

import numpy as np
from xdsl.dialects import math

from adpasses.ops.entry import (
    CHEAP,
    DIVISION,
    TRANSCENDENTAL,
    Custom,
    Intrinsic,
    Libm,
    ScalarOp,
    ToInt,
)
from adpasses.ops.partials import c, call, cmpf, cmpi, select, to_float


def _log_base(ln_base: float):  # type: ignore[no-untyped-def]
    return lambda x, r: [1 / (x * ln_base)]


def _one_minus_x2_sqrt(x):  # type: ignore[no-untyped-def]
    return call(math.SqrtOp, c(1.0) - x * x)


def _atan2(y, x, r):  # type: ignore[no-untyped-def]
    # atan2(y, x): d/dy = x/(x^2+y^2), d/dx = -y/(x^2+y^2)
    inv = 1 / (x * x + y * y)
    return [inv * x, -(inv * y)]


def _powf(a, b, r):  # type: ignore[no-untyped-def]
    # d a^b = b a^(b-1) da + a^b log(a) db; a^(b-1) is computed directly
    # (not r/a) so that a = 0 gives the right limit. The two limits where
    # that is 0 * inf = NaN take the value of the derivative where it
    # exists, as JAX does: d/da = 0 for b = 0 (a^0 is constant), and
    # d/db = 0 for a = 0 (0^b is 0 for b > 0; log(a) is replaced by 0).
    da = b * call(math.PowFOp, a, b - 1)
    da = select(cmpf("oeq", b, 0), 0, da)
    safe_a = select(cmpf("oeq", a, 0), 1, a)
    return [da, r * call(math.LogOp, safe_a)]


def _fpowi(a, n, r):  # type: ignore[no-untyped-def]
    # d a^n = n a^(n-1), and 0 for n = 0: there a^(n-1) is infinite at a = 0
    # and 0 * inf would be NaN.
    if n.constant == 0:
        return [0, None]
    nm1 = n - 1
    da = to_float(n) * call(math.FPowIOp, a, nm1)
    if n.constant is None:
        da = select(cmpi("ne", n, 0), da, 0)
    return [da, None]


def _erf(x, r):  # type: ignore[no-untyped-def]
    gauss = call(math.ExpOp, -(x * x))
    return [c(2.0 / pymath.sqrt(pymath.pi)) * gauss]


def _copysign(a, b, r):  # type: ignore[no-untyped-def]
    # copysign(a, b) = |a| sign(b): d/da = sign(a) sign(b); b only moves the
    # sign, so its derivative is zero almost everywhere.
    one = c(1.0)
    return [call(math.CopySignOp, one, a) * call(math.CopySignOp, one, b), 0]


def _piecewise_constant(x, r):  # type: ignore[no-untyped-def]
    return [None]


ENTRIES = [
    ScalarOp(math.ExpOp, python=(pymath.exp, np.exp), partials=lambda x, r: [r],
             llvm=Intrinsic("llvm.exp"), cost=TRANSCENDENTAL, domains=("small",), oracle="_m.exp({0})"),
    ScalarOp(math.Exp2Op, python=(pymath.exp2, np.exp2), partials=lambda x, r: [r * pymath.log(2.0)],
             llvm=Intrinsic("llvm.exp2"), cost=TRANSCENDENTAL, domains=("small",), oracle="_m.exp2({0})"),
    ScalarOp(math.ExpM1Op, python=(pymath.expm1, np.expm1),
             partials=lambda x, r: [r + 1],  # d expm1(x) = exp(x) = expm1(x) + 1
             llvm=Libm("expm1"), cost=TRANSCENDENTAL, domains=("small",), oracle="_m.expm1({0})"),
    ScalarOp(math.LogOp, python=(pymath.log, np.log), partials=lambda x, r: [1 / x],
             llvm=Intrinsic("llvm.log"), cost=TRANSCENDENTAL, domains=("pos",), oracle="_m.log({0})"),
    ScalarOp(math.Log2Op, python=(pymath.log2, np.log2), partials=_log_base(pymath.log(2.0)),
             llvm=Intrinsic("llvm.log2"), cost=TRANSCENDENTAL, domains=("pos",), oracle="_m.log2({0})"),
    ScalarOp(math.Log10Op, python=(pymath.log10, np.log10), partials=_log_base(pymath.log(10.0)),
             llvm=Intrinsic("llvm.log10"), cost=TRANSCENDENTAL, domains=("pos",), oracle="_m.log10({0})"),
    ScalarOp(math.Log1pOp, python=(pymath.log1p, np.log1p), partials=lambda x, r: [1 / (x + 1)],
             llvm=Libm("log1p"), cost=TRANSCENDENTAL, domains=("pos",), oracle="_m.log1p({0})"),
    ScalarOp(math.SinOp, python=(pymath.sin, np.sin), partials=lambda x, r: [call(math.CosOp, x)],
             llvm=Intrinsic("llvm.sin"), cost=TRANSCENDENTAL, domains=("any",), oracle="_m.sin({0})"),
    ScalarOp(math.CosOp, python=(pymath.cos, np.cos), partials=lambda x, r: [-call(math.SinOp, x)],
             llvm=Intrinsic("llvm.cos"), cost=TRANSCENDENTAL, domains=("any",), oracle="_m.cos({0})"),
    ScalarOp(math.TanOp, python=(pymath.tan, np.tan), partials=lambda x, r: [c(1.0) + r * r],
             llvm=Libm("tan"), cost=TRANSCENDENTAL, domains=("unit",), oracle="_m.tan({0})"),
    ScalarOp(math.TanhOp, python=(pymath.tanh, np.tanh), partials=lambda x, r: [c(1.0) - r * r],
             llvm=Intrinsic("llvm.tanh"), cost=TRANSCENDENTAL, domains=("any",), oracle="_m.tanh({0})"),
    ScalarOp(math.SinhOp, python=(pymath.sinh, np.sinh), partials=lambda x, r: [call(math.CoshOp, x)],
             llvm=Libm("sinh"), cost=TRANSCENDENTAL, domains=("small",), oracle="_m.sinh({0})"),
    ScalarOp(math.CoshOp, python=(pymath.cosh, np.cosh), partials=lambda x, r: [call(math.SinhOp, x)],
             llvm=Libm("cosh"), cost=TRANSCENDENTAL, domains=("small",), oracle="_m.cosh({0})"),
    ScalarOp(math.AsinOp, python=(pymath.asin, np.arcsin), partials=lambda x, r: [1 / _one_minus_x2_sqrt(x)],
             llvm=Libm("asin"), cost=TRANSCENDENTAL, domains=("unit",), oracle="_m.asin({0})"),
    ScalarOp(math.AcosOp, python=(pymath.acos, np.arccos),
             partials=lambda x, r: [-(1 / _one_minus_x2_sqrt(x))],
             llvm=Libm("acos"), cost=TRANSCENDENTAL, domains=("unit",), oracle="_m.acos({0})"),
    ScalarOp(math.AsinhOp, python=(pymath.asinh, np.arcsinh),
             partials=lambda x, r: [1 / call(math.SqrtOp, x * x + 1)],  # d asinh(x) = 1/sqrt(x^2 + 1)
             llvm=Libm("asinh"), cost=TRANSCENDENTAL, domains=("any",), oracle="_m.asinh({0})"),
    ScalarOp(math.AcoshOp, python=(pymath.acosh, np.arccosh),
             partials=lambda x, r: [1 / call(math.SqrtOp, x * x - 1)],  # d acosh(x) = 1/sqrt(x^2 - 1)
             llvm=Libm("acosh"), cost=TRANSCENDENTAL, domains=("above1",), oracle="_m.acosh({0})"),
    ScalarOp(math.AtanhOp, python=(pymath.atanh, np.arctanh),
             partials=lambda x, r: [1 / (c(1.0) - x * x)],  # d atanh(x) = 1/(1 - x^2)
             llvm=Libm("atanh"), cost=TRANSCENDENTAL, domains=("unit",), oracle="_m.atanh({0})"),
    ScalarOp(math.AtanOp, python=(pymath.atan, np.arctan), partials=lambda x, r: [1 / (c(1.0) + x * x)],
             llvm=Libm("atan"), cost=TRANSCENDENTAL, domains=("any",), oracle="_m.atan({0})"),
    ScalarOp(math.Atan2Op, python=(pymath.atan2, np.arctan2), partials=_atan2,
             llvm=Libm("atan2"), cost=TRANSCENDENTAL, domains=("any", "pos"), oracle="_m.atan2({0}, {1})"),
    ScalarOp(math.SqrtOp, python=(pymath.sqrt, np.sqrt), partials=lambda x, r: [c(0.5) / r],
             llvm=Intrinsic("llvm.sqrt"), cost=DIVISION, domains=("pos",), oracle="_m.sqrt({0})"),
    ScalarOp(math.RsqrtOp, python=(),
             partials=lambda x, r: [c(-0.5) * (r * (r * r))],  # d x^(-1/2) = -1/2 x^(-3/2) = -r^3/2
             llvm=Custom(), cost=DIVISION, domains=("pos",), oracle="(1.0 / _m.sqrt({0}))"),
    ScalarOp(math.CbrtOp, python=(pymath.cbrt, np.cbrt), partials=lambda x, r: [1 / (c(3.0) * (r * r))],
             llvm=Libm("cbrt"), cost=TRANSCENDENTAL, domains=("pos",), oracle="_m.cbrt({0})"),
    ScalarOp(math.PowFOp, python=(pymath.pow, np.power), partials=_powf,
             llvm=Intrinsic("llvm.pow"), cost=TRANSCENDENTAL, domains=("pos", "small"), oracle="_m.pow({0}, {1})"),
    ScalarOp(math.FPowIOp, python=(), partials=_fpowi,
             llvm=Custom(), cost=TRANSCENDENTAL, domains=("any", "int"), oracle=None),
    ScalarOp(math.AbsFOp, python=(pymath.fabs, np.fabs),
             partials=lambda x, r: [select(cmpf("olt", x, 0), -1, 1)],
             llvm=Intrinsic("llvm.fabs"), cost=CHEAP, domains=("any",), oracle="_abs({0})"),
    ScalarOp(math.ErfOp, python=(pymath.erf,), partials=_erf,
             llvm=Libm("erf"), cost=TRANSCENDENTAL, domains=("any",), oracle="_m.erf({0})"),
    ScalarOp(math.FmaOp, python=(), partials=lambda a, b, d, r: [b, a, 1],
             llvm=Intrinsic("llvm.fma"), cost=CHEAP, domains=("any", "any", "any"),
             oracle="_fma({0}, {1}, {2})"),
    ScalarOp(math.CopySignOp, python=(pymath.copysign, np.copysign), partials=_copysign,
             llvm=Intrinsic("llvm.copysign"), cost=CHEAP, domains=("any", "any"),
             oracle="_copysign({0}, {1})"),
    ScalarOp(math.FloorOp, python=(np.floor, ToInt(pymath.floor)), partials=_piecewise_constant,
             llvm=Intrinsic("llvm.floor"), cost=CHEAP, domains=("any",), oracle="_floor({0})",
             ints_unchanged=True),
    ScalarOp(math.CeilOp, python=(np.ceil, ToInt(pymath.ceil)), partials=_piecewise_constant,
             llvm=Intrinsic("llvm.ceil"), cost=CHEAP, domains=("any",), oracle="_ceil({0})",
             ints_unchanged=True),
    ScalarOp(math.RoundOp, python=(), partials=_piecewise_constant,
             llvm=Intrinsic("llvm.round"), cost=CHEAP, domains=("any",), oracle="_round({0})"),
    ScalarOp(math.RoundEvenOp, python=(np.rint,), partials=_piecewise_constant,
             llvm=Intrinsic("llvm.roundeven"), cost=CHEAP, domains=("any",), oracle="_roundeven({0})"),
    ScalarOp(math.TruncOp, python=(np.trunc, ToInt(pymath.trunc)), partials=_piecewise_constant,
             llvm=Intrinsic("llvm.trunc"), cost=CHEAP, domains=("any",), oracle="_trunc({0})",
             ints_unchanged=True),
]
