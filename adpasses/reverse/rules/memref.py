"""Reverse rules of the memref dialect: shadows beside the data.

- load `v = m[i]`: in reverse, `shadow(m)[i] += adj(v)` (O(1) per access;
  never a dense array per access, unlike tape-based AD).
- store `m[i] = v`: in reverse, `adj(v) += shadow(m)[i]; shadow(m)[i] = 0`
  (the overwritten value's derivative is consumed).
- copy: the same, element by element.
- alloc/alloca of active memory: a zeroed shadow is created when the reverse
  of the allocating block starts (`GradientBuilder.create_shadow_allocation`)
  and freed here, at the reverse of the allocation.
- views (subview, cast, reinterpret_cast, ...) are never reversed: the
  shadow of a view is the same view of the shadow, built on demand by
  `ReverseContext.shadow`, which needs the view's index operands.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import memref
from xdsl.ir import Operation, SSAValue

from adpasses.analysis.memref_views import is_view_result, view_source


def shadow_needs(value: SSAValue) -> list[SSAValue]:
    """Primal values needed to rebuild the shadow of `value`: view
    operands, and what shadow rules read (the condition of a select
    between memrefs), through every memref the shadow is built from."""
    from adpasses.reverse.rules import shadow_rule_for

    needs: list[SSAValue] = []
    work = [value]
    while work:
        value = work.pop()
        owner = value.owner
        if is_view_result(value):
            assert isinstance(owner, Operation)
            source = view_source(owner)
            assert source is not None
            needs.extend(o for o in owner.operands if o is not source)
            work.append(source)
        elif isinstance(owner, Operation) and (rule := shadow_rule_for(owner)) is not None:
            needs.extend(rule.needs(owner))
            work.extend(rule.sources(owner))
    return needs


class LoadRule:
    def needs(self, op: memref.LoadOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        return [*op.indices, *shadow_needs(op.memref)]

    def reverse(self, rc, op: memref.LoadOp) -> None:  # type: ignore[no-untyped-def]
        g = rc.adjoint(op.res)
        if g is None:
            return
        indices = [rc.primal(i) for i in op.indices]
        rc.accumulate(rc.shadow(op.memref), indices, g, repeats=op)


class StoreRule:
    def needs(self, op: memref.StoreOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        return [*op.indices, *shadow_needs(op.memref)]

    def reverse(self, rc, op: memref.StoreOp) -> None:  # type: ignore[no-untyped-def]
        shadow = rc.shadow(op.memref)
        indices = [rc.primal(i) for i in op.indices]
        g = rc.load(shadow, indices, repeats=op)
        rc.store(rc.zero(g.type), shadow, indices, repeats=op)
        rc.add_adjoint(op.value, g)


class CopyRule:
    def needs(self, op: memref.CopyOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        source_needs = shadow_needs(op.source) if activity.is_active_memory(op.source) else []
        return [*source_needs, *shadow_needs(op.destination)]

    def reverse(self, rc, op: memref.CopyOp) -> None:  # type: ignore[no-untyped-def]
        target = rc.shadow(op.destination)
        source = rc.shadow(op.source) if rc.activity.is_active_memory(op.source) else None
        rank = len(op.destination.type.get_shape())
        sizes = [rc.insert(memref.DimOp(target, rc.index(d))).results[0]
                 for d in range(rank)]

        def body(inner, indices):  # type: ignore[no-untyped-def]
            g = inner.load(target, indices, own_sizes=True)
            if source is not None:
                # In bounds if the forward copy checked that the
                # destination is no larger than the source.
                inner.accumulate(source, indices, g, repeats=op)
            inner.store(inner.zero(g.type), target, indices, own_sizes=True)

        rc.loop_nest(sizes, body)


class AllocRule:
    """Frees the shadow created when the reverse of the block started."""

    def needs(self, op: Operation, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        return list(op.dynamic_sizes)

    def reverse(self, rc, op: Operation) -> None:  # type: ignore[no-untyped-def]
        if isinstance(op, memref.AllocOp):
            rc.insert(memref.DeallocOp.get(rc.shadow(op.memref)))


RULES = {
    memref.LoadOp: LoadRule(),
    memref.StoreOp: StoreRule(),
    memref.CopyOp: CopyRule(),
    memref.AllocOp: AllocRule(),
    memref.AllocaOp: AllocRule(),
}
