"""Which memory object an access touches, and which of its elements.

Every memref value addresses (part of) one *memory object*: a function
argument, an allocation (`memref.alloc`/`alloca`), or a value of unknown
origin (a call result, `memref.get_global`, a memref carried through an
scf.for/scf.if/scf.while, ...). Views (subview, cast, reinterpret_cast,
collapse/expand_shape, memory_space_cast) are traced back to the object.

A `ViewMap` says how the indices of a view select an element of its object,
in two coordinate systems, each as affine forms over the view's indices
(`ViewIndex(k)` placeholders) and SSA values (dynamic offsets):

- `dims`: one index per dimension of the object. Known when the chain of
  views only has cast, memory_space_cast, subviews with constant strides and
  expand_shape with static sizes.
- `linear`: the element offset from the object's element (0, ..., 0). Known
  when every stride along the chain (and the object's own) is a constant;
  reinterpret_cast and collapse_shape only have this one.

A `Location` instantiates a map for one access: the placeholders become the
access's index forms (one element) or bounded unknowns (every element of a
view, for memref.copy), or the whole object is meant (dims and linear None).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
)
from xdsl.ir import Attribute, OpResult, SSAValue

from adpasses.analysis.affine_index import Affine, Fresh, Interval, ViewIndex, affine_form, layout_strides
from adpasses.core.ir_facts import is_function_parameter
from adpasses.dialects.ad import BroadcastOp
from adpasses.analysis.memref_views import is_view_result, memory_object, view_source


class ObjectKind(Enum):
    ARGUMENT = "argument"
    ALLOCATION = "allocation"
    UNKNOWN = "unknown origin"


@dataclass(frozen=True)
class MemoryObject:
    """The memory behind a memref: `value` is the function argument, the
    allocation result, or the first value of unknown origin."""

    value: SSAValue
    kind: ObjectKind


@dataclass(frozen=True)
class DescriptorOffset:
    """The (runtime) offset of an object's element 0 from its aligned base
    pointer; reinterpret_cast offsets are relative to that pointer."""

    value: SSAValue

    def __repr__(self) -> str:
        return f"offset(%{self.value.name_hint or '?'})"


def object_of(value: SSAValue) -> MemoryObject:
    root = memory_object(value)
    if is_function_parameter(root):
        return MemoryObject(root, ObjectKind.ARGUMENT)
    if isinstance(root, OpResult) and isinstance(root.op, (memref.AllocOp, memref.AllocaOp)):
        return MemoryObject(root, ObjectKind.ALLOCATION)
    return MemoryObject(root, ObjectKind.UNKNOWN)


# -- layouts ---------------------------------------------------------------------


def is_injective(t: Attribute) -> bool:
    """Do distinct in-bounds indices always address distinct elements?

    True for the identity layout. A strided layout qualifies when its
    strides are static and each one exceeds the span of the smaller ones
    (a dynamic stride might be 0 or overlap: numpy views can do that)."""
    if not isinstance(t, MemRefType):
        return False
    if isinstance(t.layout, NoneAttr):
        return True
    layout = layout_strides(t)
    if layout is None:
        return False
    dims: list[tuple[int, int]] = []  # (|stride|, size) of the non-unit dimensions
    for stride, size in zip(layout[0], t.get_shape()):
        if size != 1:
            if stride is None:
                return False
            dims.append((abs(stride), size))
    dims.sort()
    span = 0  # elements spanned by the dimensions with smaller strides
    for k, (stride, size) in enumerate(dims):
        if stride <= span:
            return False
        if size == DYNAMIC_INDEX:  # unbounded: only the largest stride may be
            if k != len(dims) - 1:
                return False
            continue
        span += (size - 1) * stride
    return True


# -- view maps -------------------------------------------------------------------


@dataclass(frozen=True)
class ViewMap:
    obj: MemoryObject
    dims: tuple[Affine | None, ...] | None
    linear: Affine | None


Replace = Callable[[object], "Affine | None"]


def _one(form: Affine | None, replace: Replace) -> Affine | None:
    return None if form is None else form.substitute(replace)


def _each(
    dims: tuple[Affine | None, ...] | None, replace: Replace
) -> tuple[Affine | None, ...] | None:
    return None if dims is None else tuple(_one(d, replace) for d in dims)


def _placeholders(rank: int) -> list[Affine]:
    return [Affine.symbol(ViewIndex(k)) for k in range(rank)]


def object_map(obj: MemoryObject) -> ViewMap:
    t = obj.value.type
    if not isinstance(t, MemRefType):
        return ViewMap(obj, None, None)  # unranked: elements unknown
    index = _placeholders(t.get_num_dims())
    linear: Affine | None = None
    layout = layout_strides(t)
    if layout is not None and all(s is not None for s in layout[0]):
        linear = Affine()
        for p, stride in zip(index, layout[0]):
            assert stride is not None
            linear = linear + p.scale(stride)
    return ViewMap(obj, tuple(index), linear)


def _substitute(vm: ViewMap, source_index: list[Affine | None]) -> ViewMap:
    """Re-express `vm` (over its view's indices Q_d) over a new view's
    indices: Q_d = source_index[d] (None: not affine)."""

    def replace(sym: object) -> Affine | None:
        if isinstance(sym, ViewIndex):
            return source_index[sym.position]
        return Affine.symbol(sym)

    return ViewMap(vm.obj, _each(vm.dims, replace), _one(vm.linear, replace))


def _mixed(static: tuple[int, ...], dynamic: list[SSAValue], cache: dict) -> list[Affine]:
    operands = iter(dynamic)
    return [
        affine_form(next(operands), cache) if s == DYNAMIC_INDEX else Affine(s) for s in static
    ]


def _kept_dims(sizes: tuple[int, ...], result_shape: tuple[int, ...]) -> list[int] | None:
    """Which source dims a (possibly rank-reducing) subview keeps, matched
    greedily as MLIR does; unit dims that do not match are dropped. When
    several unit dims could be the dropped one, any choice addresses the
    same elements (an in-bounds index of a unit dim is 0)."""
    kept: list[int] = []
    for d, size in enumerate(sizes):
        if len(kept) < len(result_shape) and size == result_shape[len(kept)]:
            kept.append(d)
        elif size != 1:
            return None
    return kept if len(kept) == len(result_shape) else None


def _through_subview(op: memref.SubviewOp, src: ViewMap, cache: dict) -> ViewMap:
    offsets = _mixed(op.static_offsets.get_values(), list(op.offsets), cache)
    steps = _mixed(op.static_strides.get_values(), list(op.strides), cache)
    result_type = op.result.type
    assert isinstance(result_type, MemRefType)
    kept = _kept_dims(op.static_sizes.get_values(), result_type.get_shape())
    if kept is None:
        return ViewMap(src.obj, None, None)
    source_index: list[Affine | None] = list(offsets)
    for k, d in enumerate(kept):
        step = steps[d]
        source_index[d] = (
            offsets[d] + Affine.symbol(ViewIndex(k), step.const) if step.is_constant else None
        )
    return _substitute(src, source_index)


def _object_offset(obj: MemoryObject) -> Affine | None:
    t = obj.value.type
    layout = layout_strides(t) if isinstance(t, MemRefType) else None
    if layout is None:
        return None
    offset = layout[1]
    return Affine(offset) if offset is not None else Affine.symbol(DescriptorOffset(obj.value))


def _size_of(value: SSAValue, view: SSAValue, d: int, md: memref.ExtractStridedMetaDataOp) -> bool:
    """`value` is the size of dimension `d` of `view` (`md` its metadata)."""
    if value is md.results[2 + d]:
        return True
    owner = value.owner
    return (isinstance(owner, memref.DimOp) and owner.source is view
            and isinstance(owner.index.owner, arith.ConstantOp)
            and isinstance(owner.index.owner.value, IntegerAttr) and owner.index.owner.value.value.data == d)


def _is_zero(value: SSAValue) -> bool:
    owner = value.owner
    return (isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr)
            and owner.value.value.data == 0)


def _restrided_source(op: memref.ReinterpretCastOp) -> list[Affine | None] | None:
    """For a reinterpret_cast of a view S made from S's own metadata (the
    frontend's broadcast of S, `x[i, :] * x[i, :]`): per dimension of S,
    the index of S the new view's index d addresses (None: index d, or 0
    where the size of S is 1 and its stride made 0), or None when the cast
    is anything else. Dimension d of the new view must have

    - S's stride and S's size: index d of S; or
    - stride `select(size_d(S) == 1, 0, stride_d(S))` and size
      `ad.broadcast(a, b)` with a or b S's size: where S's size is 1 every
      index is element 0, else the broadcast size is S's size."""
    source = op.source
    offsets, sizes, strides = list(op.offsets), list(op.sizes), list(op.strides)
    rank = len(op.static_sizes.get_values())
    if (len(offsets) != 1 or len(sizes) != rank or len(strides) != rank
            or not isinstance(source.type, MemRefType) or len(source.type.get_shape()) != rank):
        return None
    md = offsets[0].owner
    if not isinstance(md, memref.ExtractStridedMetaDataOp) or md.source is not source or offsets[0] is not md.results[1]:
        return None
    index: list[Affine | None] = []
    for d in range(rank):
        stride, size = strides[d], sizes[d]
        own_stride = md.results[2 + rank + d]
        if stride is own_stride and _size_of(size, source, d, md):
            index.append(Affine.symbol(ViewIndex(d)))
            continue
        select = stride.owner
        if not (isinstance(select, arith.SelectOp) and _is_zero(select.lhs) and select.rhs is own_stride):
            return None
        test = select.cond.owner
        if not (isinstance(test, arith.CmpiOp) and test.predicate.value.data == 0  # eq
                and _size_of(test.lhs, source, d, md) and isinstance(test.rhs.owner, arith.ConstantOp)
                and isinstance(test.rhs.owner.value, IntegerAttr) and test.rhs.owner.value.value.data == 1):
            return None
        broadcast = size.owner
        if not (isinstance(broadcast, BroadcastOp)
                and (_size_of(broadcast.lhs, source, d, md) or _size_of(broadcast.rhs, source, d, md))):
            return None
        index.append(None)
    return index


def _through_reinterpret_cast(op: memref.ReinterpretCastOp, src: ViewMap, cache: dict) -> ViewMap:
    restrided = _restrided_source(op)
    if restrided is not None:
        return _substitute(src, restrided)
    # Offsets of a reinterpret_cast count from the aligned base pointer,
    # whatever the source view's offset: only linear positions carry over.
    offset = _mixed(op.static_offsets.get_values(), list(op.offsets), cache)[0]
    strides = _mixed(op.static_strides.get_values(), list(op.strides), cache)
    base = _object_offset(src.obj)
    if base is None or not all(s.is_constant for s in strides):
        return ViewMap(src.obj, None, None)
    linear = offset - base
    for p, stride in zip(_placeholders(len(strides)), strides):
        linear = linear + p.scale(stride.const)
    return ViewMap(src.obj, None, linear)


def _groups(reassociation: ArrayAttr) -> list[list[int]]:
    groups: list[list[int]] = []
    for group in reassociation.data:
        assert isinstance(group, ArrayAttr)
        groups.append([d.value.data for d in group.data if isinstance(d, IntegerAttr)])
    return groups


def _through_collapse(op: memref.CollapseShapeOp, src: ViewMap) -> ViewMap:
    # A collapsed index is a row-major position inside its group; only the
    # linear offset stays affine, and only if the group is contiguous.
    source_type = op.src.type
    assert isinstance(source_type, MemRefType)
    sizes = source_type.get_shape()
    if src.linear is None:
        return ViewMap(src.obj, None, None)
    stride = [src.linear.terms.get(ViewIndex(d), 0) for d in range(len(sizes))]
    offset = {k: v for k, v in src.linear.terms.items() if not isinstance(k, ViewIndex)}
    linear = Affine(src.linear.const, offset)
    for g, group in enumerate(_groups(op.reassociation)):
        for outer, inner in zip(group, group[1:]):
            if sizes[inner] == DYNAMIC_INDEX or stride[outer] != stride[inner] * sizes[inner]:
                return ViewMap(src.obj, None, None)
        linear = linear + Affine.symbol(ViewIndex(g), stride[group[-1]])
    return ViewMap(src.obj, None, linear)


def _through_expand(op: memref.ExpandShapeOp, src: ViewMap) -> ViewMap:
    # Source index d = row-major position of the group's indices: affine
    # when the sizes of all but the group's first dimension are static.
    result_type = op.result.type
    assert isinstance(result_type, MemRefType)
    sizes = result_type.get_shape()
    source_index: list[Affine | None] = []
    for group in _groups(op.reassociation):
        index: Affine | None = Affine()
        weight = 1
        for d in reversed(group):
            assert index is not None
            index = index + Affine.symbol(ViewIndex(d), weight)
            if d != group[0]:
                if sizes[d] == DYNAMIC_INDEX:
                    index = None
                    break
                weight *= sizes[d]
        source_index.append(index)
    return _substitute(src, source_index)


def view_map(value: SSAValue, memo: dict[SSAValue, ViewMap], forms: dict) -> ViewMap:
    """How the indices of memref `value` select elements of its object."""
    if value in memo:
        return memo[value]
    if not is_view_result(value):
        result = object_map(object_of(value))
    else:
        assert isinstance(value, OpResult)
        op = value.op
        source = view_source(op)
        assert source is not None
        src = view_map(source, memo, forms)
        if isinstance(op, (memref.CastOp, memref.MemorySpaceCastOp)):
            result = src  # same descriptor, only the static type changes
        elif isinstance(op, memref.SubviewOp):
            result = _through_subview(op, src, forms)
        elif isinstance(op, memref.ReinterpretCastOp):
            result = _through_reinterpret_cast(op, src, forms)
        elif isinstance(op, memref.CollapseShapeOp):
            result = _through_collapse(op, src)
        elif isinstance(op, memref.ExpandShapeOp):
            result = _through_expand(op, src)
        else:  # e.g. the base buffer of extract_strided_metadata
            result = ViewMap(src.obj, None, None)
    memo[value] = result
    return result


# -- locations -------------------------------------------------------------------


@dataclass(frozen=True)
class Location:
    """Elements of `obj` an access touches (dims/linear None: unknown, i.e.
    possibly any element). `ranges` bounds the unknowns of a view footprint."""

    obj: MemoryObject
    dims: tuple[Affine | None, ...] | None
    linear: Affine | None
    ranges: Mapping[object, Interval] = field(default_factory=dict)


def whole_object(obj: MemoryObject) -> Location:
    return Location(obj, None, None)


def _instantiate(vm: ViewMap, index: list[Affine], ranges: Mapping[object, Interval]) -> Location:
    def replace(sym: object) -> Affine | None:
        if isinstance(sym, ViewIndex):
            return index[sym.position]
        return Affine.symbol(sym)

    dims = _each(vm.dims, replace)
    if dims and all(d is None for d in dims):
        dims = None  # no dimension known: say so once
    return Location(vm.obj, dims, _one(vm.linear, replace), ranges)


def element(vm: ViewMap, indices: list[Affine]) -> Location:
    """The one element an access with these index forms touches."""
    return _instantiate(vm, indices, {})


def footprint(vm: ViewMap, view_type: Attribute) -> Location:
    """Every element of a view: index k ranges over [0, size_k - 1]."""
    if not isinstance(view_type, MemRefType):
        return whole_object(vm.obj)
    index: list[Affine] = []
    ranges: dict[object, Interval] = {}
    for k, size in enumerate(view_type.get_shape()):
        unknown = Fresh(f"?{k}")
        ranges[unknown] = (0, None if size == DYNAMIC_INDEX else size - 1)
        index.append(Affine.symbol(unknown))
    return _instantiate(vm, index, ranges)
