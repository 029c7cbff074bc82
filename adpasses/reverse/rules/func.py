"""Reverse rules of the func dialect.

`func.return` starts the reverse sweep: each active result's adjoint is its
seed; each dup (memref) result's seed, a memref of the result's sizes, is
added into the shadow of the returned memory, element by element (Enzyme's
seeding of a returned pointer's shadow). The seed is only read. Calls are
inlined before differentiation (`ad-inline-calls`), so a `func.call`
reaching the reverse sweep is checkpointed (`ad.checkpoint`,
`rules/checkpoint.py`) or calls a function without a body.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import SSAValue

from adpasses.dialects.ad import ShadowCheckOp

from adpasses.core.diagnostics import error_at
from adpasses.reverse.rules.checkpoint import CheckpointCallRule, is_checkpointed

CHECKPOINT = CheckpointCallRule()


class ReturnRule:
    def needs(self, op: func.ReturnOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        return ()

    def reverse(self, rc, op: func.ReturnOp) -> None:  # type: ignore[no-untyped-def]
        for value, seed in zip(op.arguments, rc.sweep.seeds):
            if seed is None:
                continue
            if isinstance(value.type, MemRefType):
                if rc.activity.is_active_memory(value):
                    self.seed_memory(rc, value, seed)
                continue
            rc.add_adjoint(value, seed)

    @staticmethod
    def seed_memory(rc, value: SSAValue, seed: SSAValue) -> None:  # type: ignore[no-untyped-def]
        """shadow(value)[i...] += seed[i...] over the result's sizes; the
        seed must have them (`ad.shadow_check`, a ValueError otherwise)."""
        primal = rc.primal(value)
        rc.insert(ShadowCheckOp(primal, seed))
        shadow = rc.shadow(value)
        sizes = [rc.insert(memref.DimOp(shadow, rc.index(d))).results[0]
                 for d in range(len(value.type.get_shape()))]
        rc.loop_nest(sizes, lambda inner, idx: inner.accumulate(
            shadow, idx, inner.load(seed, idx), own_sizes=True))


class CallRule:
    """A call left after inlining: a checkpointed call (`ad.checkpoint`,
    `rules/checkpoint.py`) is recomputed in the reverse sweep; any other
    calls a function without a body."""

    def needs(self, op: func.CallOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        if is_checkpointed(op):
            return CHECKPOINT.needs(op, activity)
        return ()

    def memory_needs(self, op: func.CallOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        if is_checkpointed(op):
            return CHECKPOINT.memory_needs(op, activity)
        return ()

    def reverse(self, rc, op: func.CallOp) -> None:  # type: ignore[no-untyped-def]
        if is_checkpointed(op):
            CHECKPOINT.reverse(rc, op)
            return
        raise error_at(
            op,
            f"calls '{op.callee}', which has no body to differentiate; "
            "define it in the module or make its arguments const",
        )


RULES = {
    func.ReturnOp: ReturnRule(),
    func.CallOp: CallRule(),
}
