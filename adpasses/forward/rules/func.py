"""Forward rules of the func dialect.

Calls are inlined before the tangent sweep (the forward pass inlines every
callee defined in the module), except calls of functions with a custom
rule (tagged `ad.custom_call`, adpasses/transforms/custom_calls.py): their
forward rule gives the tangents. Any other `func.call` reaching it calls a
function without a body: cloned if nothing it touches carries a
derivative, else a located error. `func.return` is built by the engine
(primal results, then tangents, per the result activities).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Operation

from adpasses.core.custom_rules import custom_rule_of_call, no_body_advice, no_forward_rule_advice, tangent_positions
from adpasses.core.diagnostics import error_at
from adpasses.core.types import is_float_type, is_memref_type


class CallRule:
    def forward(self, fb, op: func.CallOp) -> None:  # type: ignore[no-untyped-def]
        rule = custom_rule_of_call(op)
        if rule is not None:
            # A custom rule gives the tangents of the results: needed only if
            # one carries a derivative (a call whose result is unused, e.g.
            # an augmented primal's output in forward over reverse, is not).
            touches = any(fb.is_active(r) for r in op.results)
        else:
            touches = any(fb.is_active(v) for v in (*op.operands, *op.results)) or any(
                fb.activity.is_active_memory(v) for v in op.operands if hasattr(v.type, "get_shape"))
        if not touches:
            fb.clone(op)
            return
        if rule is None:
            raise error_at(
                op,
                f"calls '{op.callee}', which has no body to differentiate, with values that "
                "carry derivatives; " + no_body_advice(op.callee.string_value(), "forward"),
            )
        if rule.forward is None:
            raise error_at(
                op,
                f"calls @{rule.primal}, which has a custom reverse rule (custom_vjp) but no forward "
                "rule, and its result's tangent is needed: forward mode (jvp, jacfwd, fwddiff, and "
                "hessian/hvp where the function's value feeds the gradient) needs a forward rule; "
                + no_forward_rule_advice(rule.primal),
            )
        self._by_forward_rule(fb, op, rule.forward)

    def _by_forward_rule(self, fb, op: func.CallOp, forward: str) -> None:  # type: ignore[no-untyped-def]
        """One call of the forward rule per lane: f's arguments, then the
        lane's tangent of each float argument (zero where none)."""
        primals = [fb.primal_value(o) for o in op.operands]
        float_results = [r for r in op.results if is_float_type(r.type)]
        types = [r.type for r in op.results] + [r.type for r in float_results]
        calls = []
        for lane in range(fb.width):
            tangents = []
            for k in tangent_positions([o.type for o in op.operands]):
                o = op.operands[k]
                if is_memref_type(o.type):
                    lanes = fb.memory_tangent(o, op)
                    if lanes is None:
                        raise error_at(op, f"calls @{op.callee.root_reference.data} with an array "
                                           f"(argument {k}) whose memory carries no derivative; its "
                                           "forward rule needs a tangent array: pass a zero one "
                                           "from the caller")
                    tangents.append(lanes[lane])
                else:
                    tangents.append(fb.tangent_or_zero(o)[lane])
            calls.append(fb.insert(func.CallOp(forward, primals + tangents, types)))
        fb.map_results(op, calls[0], len(op.results))
        m = len(op.results)
        for j, r in enumerate(float_results):
            fb.set_tangent(r, [call.results[m + j] for call in calls])


RULES: dict[type[Operation], CallRule] = {func.CallOp: CallRule()}
