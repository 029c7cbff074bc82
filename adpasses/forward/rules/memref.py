"""Forward rules of the memref dialect: tangent memory beside the data.

Every memref whose memory carries derivatives has a tangent memref (per
lane) of its sizes; each access is repeated on it at the same indices:
- load `v = m[i]`: `tangent(v) = tangent(m)[i]`;
- store `m[i] = v`: `tangent(m)[i] = tangent(v)` (zero if `v` carries no
  derivative: the old tangent is overwritten like the old value);
- copy: the tangents are copied (zeroed if the source carries none);
- alloc/alloca of active memory: a zero-filled tangent of the same sizes;
  dealloc frees it too;
- views (subview, cast, reinterpret_cast, expand/collapse_shape, ...): the
  same view of the tangent (a reinterpret_cast's offset and strides made
  from the tangent's own layout: `memref_views.layout_over`).
`memref.dim`, `memref.rank` and accesses of inactive memory are cloned.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.ir import Operation, SSAValue

from adpasses.analysis.memref_views import VIEW_SOURCE_OPERAND, layout_over, view_source


class LoadRule:
    def forward(self, fb, op: memref.LoadOp) -> None:  # type: ignore[no-untyped-def]
        new = fb.clone(op)
        if not fb.is_active(op.res):
            return
        lanes = fb.memory_tangent(op.memref, op)
        indices = list(new.indices)
        tangents = []
        for lane in lanes:
            load = fb.insert(memref.LoadOp.get(lane, indices))
            fb.access_attributes(new, load)
            tangents.append(load.results[0])
        fb.set_tangent(op.res, tangents)


class StoreRule:
    def forward(self, fb, op: memref.StoreOp) -> None:  # type: ignore[no-untyped-def]
        new = fb.clone(op)
        lanes = fb.memory_tangent(op.memref, op)
        if lanes is None:
            return
        values = fb.tangent_or_zero(op.value)
        for lane, value in zip(lanes, values):
            store = fb.insert(memref.StoreOp.get(value, lane, list(new.indices)))
            fb.access_attributes(new, store)


class CopyRule:
    def forward(self, fb, op: memref.CopyOp) -> None:  # type: ignore[no-untyped-def]
        new = fb.clone(op)
        targets = fb.memory_tangent(op.destination, op)
        if targets is None:
            return
        sources = fb.memory_tangent(op.source, op)
        for k, target in enumerate(targets):
            if sources is None:
                fb.zero_fill(target)
            else:
                copy = fb.insert(memref.CopyOp(sources[k], target))
                fb.access_attributes(new, copy)


class AllocRule:
    """A zero-filled tangent per lane, allocated like the primal (same
    sizes, same attributes: a tape's `ad.workspace`)."""

    def forward(self, fb, op: Operation) -> None:  # type: ignore[no-untyped-def]
        new = fb.clone(op)
        if not fb.activity.is_active_memory(op.results[0]):
            return
        lanes: list[SSAValue] = []
        for _ in range(fb.width):
            lane = fb.insert(new.clone()).results[0]
            fb.zero_fill(lane)
            lanes.append(lane)
        fb.set_tangent(op.results[0], lanes)


class DeallocOpRule:
    """Frees the tangent too, like the primal (a workspace's dealloc keeps
    its `ad.workspace`: the buffer stays for the next call)."""

    def forward(self, fb, op: memref.DeallocOp) -> None:  # type: ignore[no-untyped-def]
        new = fb.clone(op)
        for lane in fb.tangent(op.memref) or ():
            fb.insert(new.clone(value_mapper={new.memref: lane}))


class ViewRule:
    """The tangent of a view is the same view (same offsets, sizes and
    strides) of the source's tangent."""

    def forward(self, fb, op: Operation) -> None:  # type: ignore[no-untyped-def]
        fb.clone(op)
        result = op.results[0]
        if not fb.activity.is_active_memory(result):
            return
        source = view_source(op)
        assert source is not None
        lanes = fb.memory_tangent(source, op)
        tangents = []
        for lane in lanes:
            # (a clone with overrides leaves the primal mapping alone; a
            # reinterpret_cast's layout is made from the tangent's own)
            layout = layout_over(op, lane, fb.insert, fb.primal_value)
            view = fb.clone(op, overrides={source: lane, **layout})
            tangents.append(view.results[0])
        fb.set_tangent(result, tangents)


RULES: dict[type[Operation], object] = {
    memref.LoadOp: LoadRule(),
    memref.StoreOp: StoreRule(),
    memref.CopyOp: CopyRule(),
    memref.AllocOp: AllocRule(),
    memref.AllocaOp: AllocRule(),
    memref.DeallocOp: DeallocOpRule(),
    **{cls: ViewRule() for cls in VIEW_SOURCE_OPERAND},
}
