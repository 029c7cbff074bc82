"""The special dialect's scalar ops (`dialects/special.py`), one entry each.

The derivatives close over the dialect: d lgamma = digamma, d gamma =
gamma * digamma, d digamma = polygamma(1, .), d polygamma(n, .) =
polygamma(n + 1, .); so reverse, forward and forward-over-reverse
(Hessians) need nothing else. The order n is an integer operand, not
differentiated.

The functions of scipy.special the frontend compiles (`SCIPY_SPECIAL`:
their names there -> the op): the entries here, and math's erf. Their
derivatives close over the table too: d expit = r (1 - r), d log_expit =
expit(-x), d logit = 1 / (x (1 - x)), d erfc = -2/sqrt(pi) exp(-x^2),
d xlogy = (log y, x / y). scipy is never imported by adpasses: the
frontend looks the names up in the scipy.special a program imported
(`adpasses.ops.scipy_special_op`).
"""

from __future__ import annotations

import math as pymath

from xdsl.dialects.builtin import i32

from xdsl.dialects import math

from adpasses.dialects.special import (
    DigammaOp,
    ErfcOp,
    ExpitOp,
    GammaOp,
    LgammaOp,
    LogExpitOp,
    LogitOp,
    PolygammaOp,
    XlogyOp,
)
from adpasses.ops.entry import TRANSCENDENTAL, Custom, Libm, ScalarOp
from adpasses.ops.partials import c, call, cmpf, select, typed


def _polygamma(x, n, r):  # type: ignore[no-untyped-def]
    return [call(PolygammaOp, x, n + 1), None]


def _xlogy(x, y, r):  # type: ignore[no-untyped-def]
    # x log y: d/dx = log y; d/dy = x / y, and 0 where x == 0 (xlogy(0, y)
    # is 0 for every y, so it does not move with y there, even at y = 0).
    return [call(math.LogOp, y), select(cmpf("oeq", x, 0), 0, x / y)]


ENTRIES = [
    ScalarOp(LgammaOp, python=(pymath.lgamma,), partials=lambda x, r: [call(DigammaOp, x)],
             llvm=Custom(), cost=TRANSCENDENTAL, domains=("pos",), oracle="_lgamma({0})"),
    ScalarOp(GammaOp, python=(pymath.gamma,), partials=lambda x, r: [r * call(DigammaOp, x)],
             llvm=Libm("tgamma"), cost=TRANSCENDENTAL, domains=("pos",), oracle="_tgamma({0})"),
    ScalarOp(DigammaOp, python=(), partials=lambda x, r: [call(PolygammaOp, x, typed(1, i32))],
             llvm=Custom(), cost=TRANSCENDENTAL, domains=("pos",), oracle="_digamma({0})"),
    ScalarOp(PolygammaOp, python=(), partials=_polygamma,
             llvm=Custom(), cost=TRANSCENDENTAL, domains=("pos", "order"), oracle=None),
    ScalarOp(ExpitOp, python=(), partials=lambda x, r: [r * (1 - r)],
             llvm=Custom(), cost=TRANSCENDENTAL, domains=("any",),
             oracle="(1.0 / (1.0 + _m.exp(-({0}))))"),
    ScalarOp(LogExpitOp, python=(), partials=lambda x, r: [call(ExpitOp, -x)],
             llvm=Custom(), cost=TRANSCENDENTAL, domains=("any",),
             oracle="(min({0}, 0.0) - _m.log1p(_m.exp(-_abs({0}))))"),
    ScalarOp(LogitOp, python=(), partials=lambda x, r: [1 / (x * (1 - x))],
             llvm=Custom(), cost=TRANSCENDENTAL, domains=("prob",),
             oracle="_m.log(({0}) / (1.0 - ({0})))"),
    ScalarOp(ErfcOp, python=(pymath.erfc,),
             partials=lambda x, r: [c(-2.0 / pymath.sqrt(pymath.pi)) * call(math.ExpOp, -(x * x))],
             llvm=Libm("erfc"), cost=TRANSCENDENTAL, domains=("any",), oracle="_m.erfc({0})"),
    ScalarOp(XlogyOp, python=(), partials=_xlogy,
             llvm=Custom(), cost=TRANSCENDENTAL, domains=("any", "pos"),
             oracle="(0.0 if ({0}) == 0.0 else ({0}) * _m.log({1}))"),
]

SCIPY_SPECIAL = {
    "gammaln": LgammaOp, "gamma": GammaOp, "digamma": DigammaOp, "psi": DigammaOp,
    "expit": ExpitOp, "log_expit": LogExpitOp, "logit": LogitOp,
    "erf": math.ErfOp, "erfc": ErfcOp, "xlogy": XlogyOp,
}
"""scipy.special's elementwise functions the frontend compiles, by name:
on numbers and, elementwise, on arrays (scipy.special.polygamma(n, x),
whose order comes first, and logsumexp, a reduction, are the frontend's
own: frontend/special_calls.py)."""
