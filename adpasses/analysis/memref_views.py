"""Which memref ops make views, and how to find the memory behind a memref.

A view op returns a memref that addresses (part of) its source's memory:
subview, cast, reinterpret_cast, collapse/expand_shape, memory_space_cast and
the base buffer of extract_strided_metadata. Activity analysis, alias
analysis and the reverse pass's shadow construction all trace through them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, memref
from xdsl.ir import Operation, OpResult, SSAValue

from adpasses.core.types import is_memref_type

VIEW_SOURCE_OPERAND: dict[type[Operation], str] = {
    memref.SubviewOp: "source",
    memref.CastOp: "source",
    memref.ReinterpretCastOp: "source",
    memref.ExtractStridedMetaDataOp: "source",
    memref.CollapseShapeOp: "src",
    memref.ExpandShapeOp: "src",
    memref.MemorySpaceCastOp: "source",
}
"""View op class -> name of the operand whose memory the view addresses."""

ALLOCATION_OPS: tuple[type[Operation], ...] = (memref.AllocOp, memref.AllocaOp)


CHOSEN_SOURCE_OPERANDS: dict[type[Operation], tuple[str, ...]] = {
    arith.SelectOp: ("lhs", "rhs"),
}
"""Op class -> the memref operands one of which its memref result addresses,
chosen at run time. Activity merges their memory; each has a shadow rule
(`adpasses.reverse.rules.SHADOW_RULES`) that builds the same choice of shadows."""


def chosen_sources(op: Operation) -> Sequence[SSAValue] | None:
    """The operands whose memory `op`'s memref result may address, if `op`
    chooses among several at run time (`arith.select` between memrefs)."""
    names = CHOSEN_SOURCE_OPERANDS.get(type(op))
    if names is None or len(op.results) != 1 or not is_memref_type(op.results[0].type):
        return None
    return [getattr(op, name) for name in names]


def view_source(op: Operation) -> SSAValue | None:
    """The source memref of a view op, or None if `op` is not a view."""
    name = VIEW_SOURCE_OPERAND.get(type(op))
    return getattr(op, name) if name is not None else None


def is_view_result(value: SSAValue) -> bool:
    """True for a memref-typed result of a view op (not metadata indices)."""
    return (
        isinstance(value, OpResult)
        and type(value.op) in VIEW_SOURCE_OPERAND
        and value.op.results[0] is value
    )


def memory_object(value: SSAValue) -> SSAValue:
    """The value that owns the memory behind `value`: a function argument,
    an allocation result, or (unknown origin) the first non-view value."""
    while is_view_result(value):
        assert isinstance(value, OpResult)
        source = view_source(value.op)
        assert source is not None
        value = source
    return value


def memory_objects(value: SSAValue) -> list[SSAValue]:
    """Every value that may own the memory behind `value`: `memory_object`
    through views, and through each operand of a run-time choice
    (`arith.select` between memrefs: a rebound array variable)."""
    found: list[SSAValue] = []
    stack = [value]
    while stack:
        root = memory_object(stack.pop())
        sources = chosen_sources(root.op) if isinstance(root, OpResult) else None
        if sources is not None:
            stack.extend(sources)
        elif root not in found:
            found.append(root)
    return found


def is_allocation(value: SSAValue) -> bool:
    return isinstance(value, OpResult) and isinstance(value.op, ALLOCATION_OPS)


def layout_over(view: Operation, new_source: SSAValue, insert: Callable[[Operation], Operation],
                outer: Callable[[SSAValue], SSAValue | None]) -> dict[SSAValue, SSAValue]:
    """For the same view as `view` of `new_source` (a shadow or tangent of
    `view`'s source, of its sizes but maybe not its layout): the operands
    of `view` (a reinterpret_cast's offset, sizes and strides) made from
    its source's metadata or sizes, through index arithmetic and
    broadcasts, made again from `new_source`'s. Offsets and strides of a
    reinterpret_cast count elements of the source's buffer, so the
    primal's would address other elements of a differently laid out
    shadow (a contiguous shadow of a strided primal). `insert` adds an op
    where the new view is built; `outer(v)` is value `v` there, or None
    where it is not at hand (a reverse sweep has the values its cache
    planner decided on: the view's operands, not always the index
    arithmetic between them), and then pure index arithmetic is computed
    again from values that are. Other operands are not in the result (use
    `outer`); an operand that cannot be made again keeps the primal's."""
    from adpasses.dialects.ad import BroadcastOp

    source = view_source(view)
    if not isinstance(view, memref.ReinterpretCastOp) or source is None:
        return {}
    memo: dict[SSAValue, SSAValue | None] = {}
    metadata: list[Operation] = []
    recomputed: dict[SSAValue, SSAValue | None] = {}

    def at_hand(value: SSAValue) -> SSAValue | None:
        """`value` where the view is built: outer's, else computed again."""
        if value in recomputed:
            return recomputed[value]
        found = outer(value)
        owner = value.owner
        if found is None and isinstance(owner, Operation) and not owner.regions and (
                (len(owner.results) == 1 and (owner.dialect_name() == "arith"
                                              or isinstance(owner, (memref.DimOp, BroadcastOp))))
                or isinstance(owner, memref.ExtractStridedMetaDataOp)):
            operands = [at_hand(o) for o in owner.operands]
            if all(o is not None for o in operands):
                new = insert(owner.clone(value_mapper=dict(zip(owner.operands, operands))))
                found = new.results[list(owner.results).index(value)]
        recomputed[value] = found
        return found

    def again(value: SSAValue) -> SSAValue | None:
        if value in memo:
            return memo[value]
        owner = value.owner
        result: SSAValue | None = None
        if isinstance(owner, memref.ExtractStridedMetaDataOp) and owner.source is source:
            if not metadata:
                metadata.append(insert(memref.ExtractStridedMetaDataOp(new_source)))
            result = metadata[0].results[list(owner.results).index(value)]
        elif isinstance(owner, memref.DimOp) and owner.source is source:
            # (the same sizes, but read from `new_source`: what the view
            # is built from stays at hand, and the loops' parallel proof
            # relates the view to the shadow's own sizes)
            index = at_hand(owner.index)
            if index is not None:
                result = insert(memref.DimOp(new_source, index)).results[0]
        elif (isinstance(owner, Operation) and not owner.regions and len(owner.results) == 1
              and (owner.dialect_name() == "arith" or isinstance(owner, BroadcastOp))):
            operands = [again(o) for o in owner.operands]
            if any(o is not None for o in operands):
                operands = [n if n is not None else at_hand(o) for o, n in zip(owner.operands, operands)]
                if all(o is not None for o in operands):
                    new = owner.clone(value_mapper=dict(zip(owner.operands, operands)))
                    result = insert(new).results[0]
        memo[value] = result
        return result

    found = {}
    for operand in view.operands:
        if operand is not source:
            made = again(operand)
            if made is not None:
                found[operand] = made
    return found
