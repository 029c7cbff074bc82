"""Reverse rules of the func dialect.

`func.return` starts the reverse sweep: each active result's adjoint is its
seed; each dup (memref) result's seed, a memref of the result's sizes, is
added into the shadow of the returned memory, element by element (Enzyme's
seeding of a returned pointer's shadow). The seed is only read. Calls are
inlined before differentiation (`ad-inline-calls`), so a `func.call`
reaching the reverse sweep is checkpointed (`ad.checkpoint`,
`rules/checkpoint.py`), a call that its custom rule differentiates (tagged
`ad.custom_call`, adpasses/transforms/custom_calls.py; conventions in
adpasses/core/custom_rules.py), or a call of a function without a body (an
error if it carries derivatives).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, Block, SSAValue

from adpasses.core.custom_rules import (
    CustomRule,
    custom_rule_of_call,
    forwarded_arguments,
    no_body_advice,
    tangent_positions,
)
from adpasses.dialects.ad import ShadowCheckOp
from adpasses.core.diagnostics import error_at
from adpasses.core.types import is_float_type, is_memref_type
from adpasses.ops.partials import emit_contraction
from adpasses.reverse.rules.checkpoint import CheckpointCallRule, is_checkpointed

from adpasses.reverse.rules.revolve import REVOLVE, is_revolve_call

CHECKPOINT = CheckpointCallRule()


class ReturnRule:
    def needs(self, op: func.ReturnOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        return ()

    def reverse(self, rc, op: func.ReturnOp) -> None:  # type: ignore[no-untyped-def]
        for value, seeds in zip(op.arguments, rc.sweep.seeds):
            if seeds is None:
                continue
            seed = seeds[rc.lane]  # called once per lane
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


def _primal_results(op: func.CallOp, rule: CustomRule) -> Sequence[SSAValue]:
    """The call's results that are the primal function's (an augmented
    primal's last `residuals` results are residuals)."""
    return op.results[: len(op.results) - (rule.residuals or 0)]


def _residuals(op: func.CallOp, rule: CustomRule) -> list[SSAValue]:
    """The values the reverse rule reads as residuals: the call's residual
    results, except those the augmented primal returns unchanged from an
    argument, for which the argument (available without a tape if it is
    outside the loop, or reloadable)."""
    first = len(op.results) - (rule.residuals or 0)
    forwarded = forwarded_arguments(op, rule)
    return [op.operands[forwarded[k]] if k in forwarded else r
            for k, r in enumerate(op.results[first:])]


def _array_residuals(op: func.CallOp, rule: CustomRule) -> list[SSAValue]:
    """The array residuals of a custom call: operands the augmented primal
    returns unchanged, whose contents the reverse rule reads. They are
    memory needs (`cache.plan.plan_memory`): reused where no write may
    change them after the call, snapshot before the call otherwise (the
    caller overwriting an array after passing it, a time loop updating it).
    A snapshot holds the contents the call starts with, so an augmented
    primal that writes its array residual is an error here."""
    from xdsl.traits import SymbolTable

    from adpasses.analysis.memory_writes import WriteEffects, written_arguments

    forwarded = forwarded_arguments(op, rule)
    arrays = list(dict.fromkeys(op.operands[j] for j in forwarded.values()
                                if is_memref_type(op.operands[j].type)))
    if not arrays:
        return []
    module = op
    while module.parent_op() is not None:
        module = module.parent_op()  # type: ignore[assignment]
    aug = SymbolTable.lookup_symbol(module, op.callee)
    assert isinstance(aug, func.FuncOp)
    written = written_arguments(WriteEffects(module), aug)
    for j in forwarded.values():
        if is_memref_type(op.operands[j].type) and (written is None or j in written):
            raise error_at(op, f"the augmented primal @{aug.sym_name.data} writes argument {j}, which it "
                               "also returns as an array residual: the reverse rule would read the "
                               "array's contents after the call's writes, which the gradient cannot "
                               "restore; write into another array, or save the numbers you need as "
                               "residuals")
    return arrays


class CallRule:
    """A call left after inlining: a checkpointed call (`ad.checkpoint`,
    `rules/checkpoint.py`) is recomputed in the reverse sweep; a call of a
    function with a custom rule:

    - with a reverse rule (the call is of the augmented primal): the reverse
      sweep calls `reverse(residuals..., cotangents of the float results)`
      and adds its results to the adjoints of the float arguments. The rule
      needs the residuals (taped when the call is in a loop);
    - with only a forward rule: one call of the forward rule per active
      float scalar argument, and per element of an active float memref
      argument, with a unit tangent for it and zeros for the others; that
      argument's adjoint (or shadow element) gets `sum_j cotangent_j *
      tangent_j`. The rule needs the call's scalar arguments.

    Any other call calls a function without a body (an error if active).
    """

    def needs(self, op: func.CallOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        if is_revolve_call(op):
            return REVOLVE.needs(op, activity)
        if is_checkpointed(op):
            return CHECKPOINT.needs(op, activity)
        rule = custom_rule_of_call(op)
        if rule is None:
            return ()
        if rule.residuals is not None:
            return _residuals(op, rule)
        return [o for o in op.operands if not is_memref_type(o.type)]

    def memory_needs(self, op: func.CallOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        if is_revolve_call(op):
            return REVOLVE.memory_needs(op, activity)
        if is_checkpointed(op):
            return CHECKPOINT.memory_needs(op, activity)
        rule = custom_rule_of_call(op)
        if rule is not None and rule.residuals is not None:
            return _array_residuals(op, rule)
        return ()

    def forward(self, sweep, op: func.CallOp, clone: func.CallOp) -> None:  # type: ignore[no-untyped-def]
        """Forward-sweep code of a revolve call: its snapshots and first descent."""
        if is_revolve_call(op):
            sweep.forward_state[op] = REVOLVE.forward(sweep, op, clone)

    def reverse(self, rc, op: func.CallOp) -> None:  # type: ignore[no-untyped-def]
        if is_checkpointed(op):
            if rc.width != 1:
                raise error_at(op, "is a checkpointed call (ad.checkpoint), which vector reverse "
                                   "mode (width > 1) does not support yet; differentiate with width 1 "
                                   "or without checkpointing")
            (REVOLVE if is_revolve_call(op) else CHECKPOINT).reverse(rc, op)
            return
        rule = custom_rule_of_call(op)
        if rule is None:
            raise error_at(
                op,
                f"calls '{op.callee}', which has no body to differentiate; "
                + no_body_advice(op.callee.string_value(), "reverse"),
            )
        results = [r for r in _primal_results(op, rule) if is_float_type(r.type)]
        if all(rc.adjoint(r) is None for r in results):
            return
        floats = [o for o in op.operands if is_float_type(o.type)]
        if rule.residuals is not None:
            residuals, snapshots = self._residual_values(rc, op, rule)
            cotangents = [rc.adjoint_or_zero(r) for r in results]
            shadows, scratch = self._shadows(rc, op)
            assert rule.reverse is not None
            call = func.CallOp(rule.reverse, residuals + cotangents + shadows, [o.type for o in floats])
            if rc.sweep.strong_zero and not shadows and cotangents:
                back = self._unless_all_zero(rc, call, cotangents)
            else:
                back = rc.insert(call).results
            for buffer in scratch:
                rc.insert(memref.DeallocOp.get(buffer))
            for buffer in snapshots:
                rc.sweep.release_scratch(rc, buffer)
            for operand, ct in zip(floats, back):
                rc.add_adjoint(operand, ct)
            return
        assert rule.forward is not None
        self._reverse_by_forward_rule(rc, op, rule, floats, results)

    @staticmethod
    def _residual_values(rc, op: func.CallOp, rule: CustomRule) -> tuple[list[SSAValue], list[SSAValue]]:  # type: ignore[no-untyped-def]
        """The residuals the reverse rule reads, and the snapshot buffers
        among them (released after the rule). An array residual is the
        call's operand: where later code may overwrite it, the plan
        snapshots its contents at the call (`_array_residuals`), and the
        rule reads them restored into a scratch buffer, not the memory as
        the reverse sweep finds it."""
        values, snapshots = [], []
        for r in _residuals(op, rule):
            if is_memref_type(r.type) and rc.sweep.plan.memory_kind(op, r) == "snapshot":
                restored = rc.sweep.restore_snapshot(rc, op, r)
                values.append(restored)
                snapshots.append(restored)
            else:
                values.append(rc.primal(r))
        return values, snapshots

    @staticmethod
    def _unless_all_zero(rc, call: func.CallOp, cotangents: list[SSAValue]) -> list[SSAValue]:  # type: ignore[no-untyped-def]
        """Strong zero for a custom reverse rule: the rule runs only if some
        cotangent is not zero (or is nan); else its cotangents are zero,
        whatever inf or nan the rule would multiply a zero by. (A rule with
        array arguments reads their shadows too: it is called as it is.)"""
        nonzero: SSAValue | None = None
        for ct in cotangents:
            test = rc.insert(arith.CmpfOp(ct, rc.zero(ct.type), "une")).results[0]
            nonzero = test if nonzero is None else rc.insert(arith.OrIOp(nonzero, test)).results[0]
        assert nonzero is not None
        types = list(call.result_types)
        zeros = [rc.zero(t) for t in types]
        then_block, else_block = Block(), Block()
        then_block.add_ops([call, scf.YieldOp(*call.results)])
        else_block.add_op(scf.YieldOp(*zeros))
        guarded = rc.insert(scf.IfOp(nonzero, types, [then_block], [else_block]))
        call.location = guarded.location
        return list(guarded.results)

    def _shadows(self, rc, op: func.CallOp) -> tuple[list[SSAValue], list[SSAValue]]:  # type: ignore[no-untyped-def]
        """The shadow of each float memref argument, into which the reverse
        rule accumulates that argument's cotangent; a zeroed scratch buffer
        (freed after the call) for one whose memory carries no derivative."""
        shadows, scratch = [], []
        for o in op.operands:
            if not (is_memref_type(o.type) and is_float_type(o.type.element_type)):
                continue
            if rc.activity.is_active_memory(o):
                shadows.append(rc.shadow(o))
                continue
            view, buffer, _ = _zeroed_like(rc, o)
            shadows.append(view)
            scratch.append(buffer)
        return shadows, scratch

    def _reverse_by_forward_rule(self, rc, op, rule, floats, results) -> None:  # type: ignore[no-untyped-def]
        """Reverse mode by a forward (jvp) rule, which is linear in its
        tangents: one call per active float scalar argument (a unit tangent
        for it, zeros elsewhere), adding `sum_j g_j * tangent_j` to its
        adjoint; and for an active float array argument one call per
        element, in a loop over it (its tangent buffer holds 1.0 at that
        element, zeros elsewhere), adding the contraction into its shadow
        at that element. Tangents of the other arrays are zeroed buffers.
        An array argument costs one rule call per element: a rule that
        should scale with the array gives a reverse rule (custom_vjp)."""
        primals = [rc.primal(o) for o in op.operands]
        types = [r.type for r in op.results] + [r.type for r in results]
        m = len(op.results)
        gs = [rc.adjoint(r) for r in results]
        tangent_of: dict[int, SSAValue] = {}
        scratch: list[SSAValue] = []
        arrays: list[tuple[int, SSAValue, list[SSAValue]]] = []
        for k in tangent_positions([o.type for o in op.operands]):
            o = op.operands[k]
            if is_memref_type(o.type):
                view, buffer, sizes = _zeroed_like(rc, o)
                tangent_of[k] = view
                scratch.append(buffer)
                if rc.activity.is_active_memory(o):
                    arrays.append((k, buffer, sizes))
            else:
                tangent_of[k] = rc.zero(o.type)

        def contraction(sink, tangents: dict[int, SSAValue]) -> SSAValue | None:  # type: ignore[no-untyped-def]
            call = sink.insert(func.CallOp(rule.forward, primals + list(tangents.values()), types))
            return emit_contraction(sink, [(g, t) for g, t in zip(gs, call.results[m:]) if g is not None],
                                    strong_zero=rc.sweep.strong_zero)

        for k, operand in enumerate(op.operands):
            if k not in tangent_of or is_memref_type(operand.type) or not rc.activity.is_active(operand):
                continue
            total = contraction(rc, {**tangent_of, k: rc.const(1.0, operand.type)})
            if total is not None:
                rc.add_adjoint(operand, total)
        for k, buffer, sizes in arrays:
            shadow = rc.shadow(op.operands[k])
            element = buffer.type.element_type

            def one_element(inner, idx: list[SSAValue], k: int = k, buffer: SSAValue = buffer,  # type: ignore[no-untyped-def]
                            shadow: SSAValue = shadow, element: Attribute = element) -> None:
                inner.store(inner.const(1.0, element), buffer, idx, own_sizes=True)
                total = contraction(inner, tangent_of)
                inner.store(inner.zero(element), buffer, idx, own_sizes=True)
                if total is not None:
                    inner.accumulate(shadow, idx, total)
            rc.loop_nest(sizes, one_element)
        for buffer in scratch:
            rc.insert(memref.DeallocOp.get(buffer))


def _zeroed_like(rc, o: SSAValue) -> tuple[SSAValue, SSAValue, list[SSAValue]]:  # type: ignore[no-untyped-def]
    """A zeroed buffer of memref `o`'s primal sizes, allocated in the
    reverse sweep (the caller frees it): (a view of o's type, the buffer,
    its sizes)."""
    primal = rc.primal(o)
    mtype = o.type
    dims = [rc.insert(memref.DimOp(primal, rc.index(d))).results[0]
            for d, size in enumerate(mtype.get_shape()) if size < 0]
    plain = memref.MemRefType(mtype.element_type, mtype.get_shape())
    buffer = rc.insert(memref.AllocOp.get(mtype.element_type, shape=mtype.get_shape(),
                                          dynamic_sizes=dims)).results[0]
    sizes = [rc.index(size) if size >= 0 else rc.insert(memref.DimOp(
        buffer, rc.index(d))).results[0] for d, size in enumerate(mtype.get_shape())]
    zero = rc.zero(mtype.element_type)
    rc.loop_nest(sizes, lambda inner, idx: inner.store(zero, buffer, idx, own_sizes=True))
    view = rc.insert(memref.CastOp.get(buffer, mtype)).results[0] if plain != mtype else buffer
    return view, buffer, sizes

RULES = {
    func.ReturnOp: ReturnRule(),
    func.CallOp: CallRule(),
}
