"""Forward rules of the arith dialect beyond the op table.

The float ops are entries of the op table (`adpasses/ops/arith.py`), whose
tangent rules `rules.rule_table` derives. `arith.bitcast` back to a float
carries the tangent through a plain round trip and reports any other one;
`arith.select` between memrefs chooses among the operands' tangents.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Operation

from adpasses.analysis.activity import round_trip_source
from adpasses.core.diagnostics import error_at


class BitcastRule:
    """`%y = bitcast (bitcast %x : F to iN) : iN to F` is %x, so its tangent
    is %x's; a float rebuilt from bits integer ops changed has none that
    forward mode can follow: an error, never a zero."""

    def forward(self, fb, op: arith.BitcastOp) -> None:  # type: ignore[no-untyped-def]
        fb.clone(op)
        if not fb.is_active(op.result):
            return
        source = round_trip_source(op)
        if source is None:
            raise error_at(
                op,
                "turns integer bits taken from a float that carries a derivative back into a "
                "float, but not as a direct round trip (arith.bitcast of arith.bitcast %x back "
                "to the type of %x): forward mode cannot follow a derivative through integer "
                "operations on a float's bits; compute it with float ops instead",
            )
        fb.set_tangent(op.result, fb.tangent_or_zero(source))


class SelectMemrefRule:
    """`%m = arith.select %c, %a, %b` between memrefs: the tangent of %m is
    `select %c, tangent(%a), tangent(%b)`, lane by lane."""

    def forward(self, fb, op: arith.SelectOp) -> None:  # type: ignore[no-untyped-def]
        new = fb.clone(op)
        if not fb.activity.is_active_memory(op.result):
            return
        lhs, rhs = fb.memory_tangent(op.lhs, op), fb.memory_tangent(op.rhs, op)
        cond = new.operands[0]
        fb.set_tangent(op.result, [fb.insert(arith.SelectOp(cond, a, b)).results[0]
                                   for a, b in zip(lhs, rhs)])


CHOICE_RULES: dict[type[Operation], SelectMemrefRule] = {arith.SelectOp: SelectMemrefRule()}

RULES: dict[type[Operation], BitcastRule] = {arith.BitcastOp: BitcastRule()}
