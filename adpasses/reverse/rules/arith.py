"""Reverse rules of the arith dialect beyond the op table.

The float ops (addf, mulf, select, extf, ...) are entries of the op table
(`adpasses/ops/arith.py`), whose rules `rules.rule_table` derives. Integer,
index and comparison ops are never active and have no rule; an active op
without a rule is an error the engine reports. `arith.bitcast`
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
from adpasses.analysis.memref_views import chosen_sources


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

RULES: dict[type[Operation], BitcastRule] = {arith.BitcastOp: BitcastRule()}
