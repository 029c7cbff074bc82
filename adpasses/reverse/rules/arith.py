"""Reverse rules of the arith dialect.

Integer, index and comparison ops are never active and have no rule; an
active op without a rule is an error the engine reports. `arith.bitcast`
back to a float carries the derivative through a plain round trip and
reports any other one (`BitcastRule`); `arith.select` between memrefs has a
shadow rule (`SelectShadow`, in `SHADOW_RULES`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from adpasses.analysis.activity import round_trip_source
from adpasses.core.diagnostics import error_at
from adpasses.dialects.arith_ext import RemFOp
from adpasses.analysis.memref_views import chosen_sources
from adpasses.reverse.rules import (
    ScalarRule,
    needs_operands,
    no_needs,
    scalar,
)


@scalar(needs=no_needs)
def _addf(rc, op, g, want):
    return g, g


@scalar(needs=no_needs)
def _subf(rc, op, g, want):
    return g, rc.neg(g) if want[1] else None


@scalar(needs=no_needs)
def _negf(rc, op, g, want):
    return (rc.neg(g),)


def _mulf_needs(op, want):
    # d(a*b) = b*da + a*db: each operand's adjoint needs the other operand.
    return [v for v, w in ((op.rhs, want[0]), (op.lhs, want[1])) if w]


@scalar(needs=_mulf_needs)
def _mulf(rc, op, g, want):
    return (
        rc.mul(g, rc.primal(op.rhs)) if want[0] else None,
        rc.mul(g, rc.primal(op.lhs)) if want[1] else None,
    )


def _divf_needs(op, want):
    # d(a/b) = da/b - (a/b) db/b: the quotient is reused, not recomputed.
    return [op.rhs] + ([op.result] if want[1] else [])


@scalar(needs=_divf_needs)
def _divf(rc, op, g, want):
    da = rc.div(g, rc.primal(op.rhs))
    db = rc.neg(rc.mul(da, rc.primal(op.result))) if want[1] else None
    return (da if want[0] else None), db


@scalar(needs=lambda op, want: [op.lhs, op.rhs] if want[1] else [])
def _remf(rc, op, g, want):
    # a rem b = a - b*trunc(a/b): da = g, db = -g*trunc(a/b).
    if not want[1]:
        return g, None
    from xdsl.dialects import math

    q = rc.insert(math.TruncOp(rc.div(rc.primal(op.lhs), rc.primal(op.rhs)))).result
    return g, rc.neg(rc.mul(g, q))


def _max_like(lhs_wins_pred: str) -> ScalarRule:
    """max/min: the adjoint goes to the operand that was selected (lhs on ties)."""

    @scalar(needs=needs_operands("lhs", "rhs"))
    def rule(rc, op, g, want):
        pick_lhs = rc.cmpf(lhs_wins_pred, rc.primal(op.lhs), rc.primal(op.rhs))
        zero = rc.zero(g.type)
        return (
            rc.select(pick_lhs, g, zero) if want[0] else None,
            rc.select(pick_lhs, zero, g) if want[1] else None,
        )

    return rule


@scalar(needs=needs_operands("cond"))
def _select(rc, op, g, want):
    # Operands: cond (i1, never active), lhs (taken when true), rhs.
    cond = rc.primal(op.cond)
    zero = rc.zero(g.type)
    return (
        None,
        rc.select(cond, g, zero) if want[1] else None,
        rc.select(cond, zero, g) if want[2] else None,
    )


@scalar(needs=no_needs)
def _extf(rc, op, g, want):
    return (rc.insert(arith.TruncFOp(g, op.input.type)).result,)


@scalar(needs=no_needs)
def _truncf(rc, op, g, want):
    return (rc.insert(arith.ExtFOp(g, op.input.type)).result,)


class BitcastRule:
    """`arith.bitcast` back to a float: through a plain round trip
    (`%i = bitcast %x : f64 to i64; %y = bitcast %i : i64 to f64`), %y is
    %x and so is its derivative. A float rebuilt from bits that integer ops
    changed (`xori` on the sign bit, ...) has no derivative the reverse
    sweep can follow: an error, never a zero (activity's `bits`)."""

    def needs(self, op: arith.BitcastOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        if round_trip_source(op) is None:
            raise error_at(
                op,
                "turns integer bits taken from a float that carries a derivative back into a "
                "float, but not as a direct round trip (arith.bitcast of arith.bitcast %x back "
                "to the type of %x): reverse mode cannot follow a derivative through integer "
                "operations, memory or loops on a float's bits; compute it with float ops "
                "(arith.negf, math.absf, math.copysign, ...) instead",
            )
        return ()

    def reverse(self, rc, op: arith.BitcastOp) -> None:  # type: ignore[no-untyped-def]
        g = rc.adjoint(op.result)
        source = round_trip_source(op)
        if g is not None and source is not None:
            rc.add_adjoint(source, g)


class SelectShadow:
    """`%m = arith.select %c, %a, %b` between memrefs: %m addresses the
    memory of %a or of %b, so its shadow is `select %c, shadow(%a),
    shadow(%b)` (activity merges the memory of %a and %b)."""

    def sources(self, op: arith.SelectOp) -> Sequence[SSAValue]:
        sources = chosen_sources(op)
        assert sources is not None
        return sources

    def needs(self, op: arith.SelectOp) -> Sequence[SSAValue]:
        return [op.cond]

    def shadow(self, rc, op: arith.SelectOp) -> SSAValue:  # type: ignore[no-untyped-def]
        return rc.select(rc.primal(op.cond), rc.shadow(op.lhs), rc.shadow(op.rhs))


SHADOW_RULES = {arith.SelectOp: SelectShadow()}

RULES: dict[type[Operation], ScalarRule | BitcastRule] = {
    arith.AddfOp: _addf,
    arith.SubfOp: _subf,
    arith.NegfOp: _negf,
    arith.MulfOp: _mulf,
    arith.DivfOp: _divf,
    RemFOp: _remf,
    arith.MaximumfOp: _max_like("oge"),
    arith.MaxnumfOp: _max_like("oge"),
    arith.MinimumfOp: _max_like("ole"),
    arith.MinnumfOp: _max_like("ole"),
    arith.SelectOp: _select,
    arith.ExtFOp: _extf,
    arith.TruncFOp: _truncf,
    arith.BitcastOp: BitcastRule(),
}
"""Ops whose results can be active. sitofp/uitofp take an integer, so their
float result never depends on an active value: no rule needed."""
