"""The special dialect's scalar ops (`dialects/special.py`), one entry each.

The derivatives close over the dialect: d lgamma = digamma, d gamma =
gamma * digamma, d digamma = polygamma(1, .), d polygamma(n, .) =
polygamma(n + 1, .); so reverse, forward and forward-over-reverse
(Hessians) need nothing else. The order n is an integer operand, not
differentiated.
"""

from __future__ import annotations

import math as pymath

from xdsl.dialects.builtin import i32

from adpasses.dialects.special import DigammaOp, GammaOp, LgammaOp, PolygammaOp
from adpasses.ops.entry import TRANSCENDENTAL, Custom, Libm, ScalarOp
from adpasses.ops.partials import call, typed


def _polygamma(x, n, r):  # type: ignore[no-untyped-def]
    return [call(PolygammaOp, x, n + 1), None]


ENTRIES = [
    ScalarOp(LgammaOp, python=(pymath.lgamma,), partials=lambda x, r: [call(DigammaOp, x)],
             llvm=Custom(), cost=TRANSCENDENTAL, domains=("pos",), oracle="_m.lgamma({0})"),
    ScalarOp(GammaOp, python=(pymath.gamma,), partials=lambda x, r: [r * call(DigammaOp, x)],
             llvm=Libm("tgamma"), cost=TRANSCENDENTAL, domains=("pos",), oracle="_m.gamma({0})"),
    ScalarOp(DigammaOp, python=(), partials=lambda x, r: [call(PolygammaOp, x, typed(1, i32))],
             llvm=Custom(), cost=TRANSCENDENTAL, domains=("pos",), oracle="_digamma({0})"),
    ScalarOp(PolygammaOp, python=(), partials=_polygamma,
             llvm=Custom(), cost=TRANSCENDENTAL, domains=("pos", "order"), oracle=None),
]
