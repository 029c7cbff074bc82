"""`ad-elide-shadow-checks`: the bounds checks of a gradient function that
the IR, as it is when this pass runs, proves redundant. Run it last.

The reverse builder does not decide which accesses are checked; it tags:
- a forward-sweep access (load, store, subview, copy) that a reverse-sweep
  access repeats: `ad.twin_id = N`;
- the reverse-sweep access that repeats it at the same indices, on memory
  of the same sizes (a shadow access, a shadow subview, a reload of the
  primal): `ad.twin_of = N`;
- reverse-sweep accesses whose indices run over the accessed memref's own
  sizes (zeroing a shadow, the reverse of a copy): `ad.own_sizes`.

This pass marks `ad.unchecked` a tagged access when:
- `ad.twin_of = N`: its twin is still in the function and still checked
  (`twin_checked`): ops tagged `ad.twin_id = N` exist (all of them: an op
  with no `ad.twin_end`, or both the first- and last-iteration loads that
  transforms/dead_forward put in place of a dead load in a loop), each a
  load/store/subview/copy that is not `ad.unchecked` (or whose indices are in
  bounds by construction), in the forward sweep (before the access), or an
  earlier op of the access's block (forward mode: a tangent access right
  after the primal access it repeats); and
  the twin's memory pairs with the access's (`same_sizes`): the same memory
  (a reload), or a shadow argument that an `ad.shadow_check` of the
  function compares with the twin's argument, or two local allocations of
  one type (a shadow allocation is made with its primal's sizes);
- otherwise (in particular `ad.own_sizes`): its indices are in bounds by
  construction (an `scf.for` induction variable from a constant >= 0 to the
  memref's size in that dimension, or constants below static sizes).
Any other access keeps its check.

What the pass verifies is everything that depends on a check being
executed, which passes may legitimately remove (xDSL's canonicalize, cse
and dce treat a load whose value is unused as dead; its bounds check goes
with it). What it takes from the builder are equalities of values (the
reverse sweep's indices are the forward sweep's, a shadow allocation's
sizes are its primal's), which a correct pass preserves.

After marking, every twin relied on that has no write effect (loads,
subviews) is kept alive by an `ad.keep` after it (one per block), so
canonicalize, cse or dce after this pass cannot remove a check that an
unchecked access depends on either. Before this pass, removing a twin only
costs its repeats their elision (they keep their checks).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, UnitAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass

from adpasses.dialects.ad import (
    BOUNDS_CHECKED_OPS,
    OWN_SIZES_ATTR,
    TWIN_END_ATTR,
    TWIN_ID_ATTR,
    TWIN_OF_ATTR,
    UNCHECKED_ATTR,
    KeepOp,
    ShadowCheckOp,
)
from adpasses.analysis.memref_views import is_allocation, memory_object


@dataclass(frozen=True)
class ElideShadowChecksPass(ModulePass):
    name = "ad-elide-shadow-checks"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp) and function.body.blocks:
                elide_shadow_checks(function)


@dataclass
class Elision:
    """What `elide_shadow_checks` decided, for tests and reports."""

    elided: list[Operation]
    kept: list[Operation]


def elide_shadow_checks(function: func.FuncOp) -> Elision:
    """Mark `ad.unchecked` the tagged accesses of `function` whose bounds
    the IR proves (module docstring); pin the twins relied on."""
    twins = Twins(function)
    result = Elision([], [])
    relied_on: dict[Operation, None] = {}
    for access in twins.tagged:
        if UNCHECKED_ATTR in access.attributes or not isinstance(access, BOUNDS_CHECKED_OPS):
            continue
        group = twins.proving(access)
        if group is not None:
            relied_on.update(dict.fromkeys(group))
        elif not in_bounds_by_construction(access):
            result.kept.append(access)
            continue
        access.attributes[UNCHECKED_ATTR] = UnitAttr()
        result.elided.append(access)
    keep_alive(relied_on)
    return result


class Twins:
    """The twin tags of one function, as the IR is now."""

    def __init__(self, function: func.FuncOp):
        self.function = function
        self.groups: dict[int, list[Operation]] = {}
        self.tagged: list[Operation] = []
        self.checked_pairs: set[tuple[SSAValue, SSAValue]] = set()
        for op in function.walk():
            twin_id = _int_attr(op, TWIN_ID_ATTR)
            if twin_id is not None:
                self.groups.setdefault(twin_id, []).append(op)
            if TWIN_OF_ATTR in op.attributes or OWN_SIZES_ATTR in op.attributes:
                self.tagged.append(op)
            if isinstance(op, ShadowCheckOp):
                self.checked_pairs.add((op.primal, op.shadow))
        # Every block of the body (a user's function may keep cf blocks).
        self.order = {op: k for k, op in enumerate(op for b in function.body.blocks for op in b.ops)}

    def proving(self, access: Operation) -> list[Operation] | None:
        """The twin group whose checks cover `access`, if it is still there
        (module docstring); None if `access` has none."""
        twin_id = _int_attr(access, TWIN_OF_ATTR)
        group = self.groups.get(twin_id, []) if twin_id is not None else []
        if not group:
            return None
        ends = {_int_attr(op, TWIN_END_ATTR) for op in group}
        if None not in ends and not {0, 1} <= ends:
            return None  # one endpoint of a hoisted check is gone
        position = self.order.get(_top_ancestor(access, self.function))
        for twin in group:
            if not twin_checked(twin):
                return None
            twin_position = self.order.get(_top_ancestor(twin, self.function))
            if position is None or twin_position is None:
                return None
            if twin_position >= position and not _earlier_in_block(twin, access):
                return None  # neither in the forward sweep nor just before it
            if not same_sizes(_checked_memref(access), _checked_memref(twin), self.checked_pairs):
                return None
            if isinstance(access, (memref.LoadOp, memref.StoreOp)) \
                    and isinstance(twin, (memref.LoadOp, memref.StoreOp)) \
                    and len(access.indices) != len(twin.indices):
                return None
        return group


def _earlier_in_block(twin: Operation, access: Operation) -> bool:
    """`twin` runs before `access` whenever it does: an earlier op of its
    block (forward mode's tangent access right after its primal access)."""
    block = access.parent_block()
    return block is not None and twin.parent_block() is block and twin.is_before_in_block(access)


def twin_checked(twin: Operation) -> bool:
    """A forward access whose lowering checks its bounds, or whose indices
    are in bounds anyway."""
    if not isinstance(twin, BOUNDS_CHECKED_OPS):
        return False
    return UNCHECKED_ATTR not in twin.attributes or in_bounds_by_construction(twin)


def same_sizes(access_memref: SSAValue, twin_memref: SSAValue,
               checked_pairs: set[tuple[SSAValue, SSAValue]]) -> bool:
    """Whether the memory `access_memref` views has the sizes of the memory
    `twin_memref` views: the same memory, a shadow argument checked against
    the twin's argument at entry, or a local allocation (a shadow of one is
    allocated with its primal's sizes)."""
    a, t = memory_object(access_memref), memory_object(twin_memref)
    if a is t or (t, a) in checked_pairs:
        return True
    return is_allocation(a) and is_allocation(t) and a.type == t.type


def _checked_memref(op: Operation) -> SSAValue:
    """The memref whose sizes the lowering checks `op` against."""
    if isinstance(op, (memref.LoadOp, memref.StoreOp)):
        return op.memref
    if isinstance(op, memref.SubviewOp):
        return op.source
    assert isinstance(op, memref.CopyOp)
    return op.source


def _top_ancestor(op: Operation, function: func.FuncOp) -> Operation | None:
    while True:
        parent = op.parent_op()
        if parent is None:
            return None
        if parent is function:
            return op
        op = parent


def keep_alive(ops: Iterable[Operation]) -> None:
    """One `ad.keep` per block, right after the last of `ops` in it, of the
    results of those `ops` that have results not kept yet (stores and
    copies write: they are never dead)."""
    by_block: dict[Block, list[Operation]] = {}
    for op in ops:
        if not op.results or any(isinstance(use.operation, KeepOp) for use in op.results[0].uses):
            continue
        block = op.parent_block()
        assert block is not None
        by_block.setdefault(block, []).append(op)
    for block, kept in by_block.items():
        position = {op: k for k, op in enumerate(block.ops)}
        kept.sort(key=position.__getitem__)
        keep = KeepOp([r for op in kept for r in op.results])
        keep.location = kept[-1].location
        block.insert_op_after(keep, kept[-1])


# -- in bounds by construction -----------------------------------------------------------


def in_bounds_by_construction(op: Operation) -> bool:
    """A load/store whose every index is a constant below a static size,
    or the induction variable of an `scf.for` from a constant >= 0 to the
    accessed memref's size in that dimension (its `memref.dim`, or the size
    operand of the `memref.alloc` that made it), or to a constant no larger
    than its static size."""
    if not isinstance(op, (memref.LoadOp, memref.StoreOp)):
        return False
    target = op.memref
    shape = target.type.get_shape()
    for d, index in enumerate(op.indices):
        c = constant_int(index)
        if c is not None:
            if not (0 <= c < shape[d]):
                return False
            continue
        if not isinstance(index, BlockArgument) or index.index != 0:
            return False
        loop = index.block.parent_op()
        if not isinstance(loop, scf.ForOp):
            return False
        lb, ub = constant_int(loop.lb), loop.ub
        if lb is None or lb < 0:
            return False
        if isinstance(ub, OpResult) and isinstance(ub.op, memref.DimOp) and ub.op.source is target \
                and constant_int(ub.op.index) == d:
            continue
        if ub is _allocated_size(target, d):
            continue
        hi = constant_int(ub)
        if hi is None or shape[d] < 0 or hi > shape[d]:
            return False
    return True


def _allocated_size(target: SSAValue, d: int) -> SSAValue | None:
    """The size operand of dynamic dimension `d` of the alloc/alloca that made `target`."""
    if not (isinstance(target, OpResult) and isinstance(target.op, (memref.AllocOp, memref.AllocaOp))):
        return None
    shape = target.type.get_shape()
    if shape[d] >= 0:
        return None
    return target.op.dynamic_sizes[sum(1 for s in shape[:d] if s < 0)]


def constant_int(value: SSAValue) -> int | None:
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def _int_attr(op: Operation, name: str) -> int | None:
    attr = op.attributes.get(name)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


__all__ = ["ElideShadowChecksPass", "Elision", "Twins", "elide_shadow_checks", "in_bounds_by_construction",
           "keep_alive"]
