"""Forward rules of the func dialect.

Calls are inlined before the tangent sweep (the forward pass inlines every
callee defined in the module), so a `func.call` reaching it calls a
function without a body: cloned if nothing it touches carries a
derivative, else a located error. `func.return` is built by the engine
(primal results, then tangents, per the result activities).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Operation

from adpasses.core.diagnostics import error_at


class CallRule:
    def forward(self, fb, op: func.CallOp) -> None:  # type: ignore[no-untyped-def]
        touches = any(fb.is_active(v) for v in (*op.operands, *op.results)) or any(
            fb.activity.is_active_memory(v) for v in op.operands if hasattr(v.type, "get_shape"))
        if touches:
            raise error_at(
                op,
                f"calls '{op.callee}', which has no body to differentiate, with values that "
                "carry derivatives; define it in the module or make its arguments const",
            )
        fb.clone(op)


RULES: dict[type[Operation], CallRule] = {func.CallOp: CallRule()}
