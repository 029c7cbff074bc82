"""Reverse rules of the func dialect.

`func.return` starts the reverse sweep: each active result's adjoint is its
seed. Calls are inlined before differentiation (`ad-inline-calls`), so a
`func.call` reaching the reverse sweep is checkpointed (`ad.checkpoint`,
`rules/checkpoint.py`) or calls a function without a body.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.ir import SSAValue

from adpasses.core.diagnostics import error_at
from adpasses.reverse.rules.checkpoint import CheckpointCallRule, is_checkpointed

CHECKPOINT = CheckpointCallRule()


class ReturnRule:
    def needs(self, op: func.ReturnOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        return ()

    def reverse(self, rc, op: func.ReturnOp) -> None:  # type: ignore[no-untyped-def]
        for value, seed in zip(op.arguments, rc.sweep.seeds):
            if seed is not None:
                rc.add_adjoint(value, seed)


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
