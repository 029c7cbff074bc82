"""Forward rules of the `ad` dialect: tapes of generated gradients.

Forward over reverse differentiates a gradient function, whose forward
sweep pushes values on tapes that its reverse sweep pops. A tape of values
that carry derivatives (memory, to the activity analysis: a push stores,
a pop loads) gets a tangent tape per lane, created and freed with it:
each push pushes the value's tangent (zero if it has none) on the tangent
tape, and each pop pops it. Both are LIFO and see the same sequence of
pushes and pops, so the pop of the tangent tape returns the tangent of
the value the primal pop returns: the inner gradient's decision to tape a
value (or to recompute it: then the recomputation is differentiated like
any op) stays valid, with its tangent taped beside it. Tapes lowered to
memrefs (`ad-lower-tapes`) are memory to the memref rules.

`ad.shadow_check` and `ad.keep` move no data and are cloned.
"""

from __future__ import annotations

from xdsl.ir import Operation

from adpasses.dialects.ad import TapeCreateOp, TapeFreeOp, TapePopOp, TapePushOp, TapeReserveOp


class CreateRule:
    def forward(self, fb, op: TapeCreateOp) -> None:  # type: ignore[no-untyped-def]
        new = fb.clone(op)
        if fb.activity.is_active_memory(op.tape):
            fb.set_tangent(op.tape, [fb.insert(new.clone()).results[0] for _ in range(fb.width)])


class PushRule:
    def forward(self, fb, op: TapePushOp) -> None:  # type: ignore[no-untyped-def]
        fb.clone(op)
        lanes = fb.memory_tangent(op.tape, op)
        if lanes is None:
            return
        for lane, value in zip(lanes, fb.tangent_or_zero(op.value)):
            fb.insert(TapePushOp(value, lane)).location = op.location


class ReserveRule:
    """Room on the tangent tapes too: the same pushes follow."""

    def forward(self, fb, op: TapeReserveOp) -> None:  # type: ignore[no-untyped-def]
        fb.clone(op)
        for lane in fb.tangent(op.tape) or ():
            fb.insert(TapeReserveOp(lane, fb.primal_value(op.count))).location = op.location


class PopRule:
    def forward(self, fb, op: TapePopOp) -> None:  # type: ignore[no-untyped-def]
        fb.clone(op)
        lanes = fb.memory_tangent(op.tape, op)
        if lanes is None:
            return
        # Popped even if this value's tangent is not needed: the tangent
        # tape must stay in step with the primal one.
        popped = []
        for lane in lanes:
            pop = fb.insert(TapePopOp(lane))
            pop.location = op.location
            popped.append(pop.results[0])
        fb.set_tangent(op.value, popped)


class FreeRule:
    def forward(self, fb, op: TapeFreeOp) -> None:  # type: ignore[no-untyped-def]
        fb.clone(op)
        for lane in fb.tangent(op.tape) or ():
            fb.insert(TapeFreeOp(lane)).location = op.location


RULES: dict[type[Operation], object] = {
    TapeCreateOp: CreateRule(),
    TapePushOp: PushRule(),
    TapeReserveOp: ReserveRule(),
    TapePopOp: PopRule(),
    TapeFreeOp: FreeRule(),
}
