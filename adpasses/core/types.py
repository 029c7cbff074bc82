"""Small predicates and facts about the builtin types adpasses handles."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    ComplexType,
    DYNAMIC_INDEX,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    TensorType,
    UnrankedTensorType,
    VectorType,
    NoneAttr,
    StridedLayoutAttr,
)
from xdsl.ir import Attribute

FLOAT_TYPES = (Float16Type, Float32Type, Float64Type)


def is_float_type(t: Attribute) -> bool:
    return isinstance(t, FLOAT_TYPES)


def is_float_aggregate(t: Attribute) -> bool:
    """A vector, tensor or complex value made of floats: it carries
    derivatives, but no rule of ours reads or writes one, so an op that
    takes or makes one is opaque to the activity analysis."""
    if isinstance(t, ComplexType):
        return True
    return isinstance(t, (VectorType, TensorType, UnrankedTensorType)) and is_float_type(t.element_type)


def is_memref_type(t: Attribute) -> bool:
    return isinstance(t, MemRefType)


def is_int_like(t: Attribute) -> bool:
    """Integers, booleans (i1) and index: never active."""
    return isinstance(t, (IntegerType, IndexType))


def byte_size(t: Attribute) -> int:
    """Size in bytes of one scalar of type `t` as stored in memory."""
    if isinstance(t, Float64Type) or isinstance(t, IndexType):
        return 8
    if isinstance(t, Float32Type):
        return 4
    if isinstance(t, Float16Type):
        return 2
    if isinstance(t, IntegerType):
        return max(1, (t.width.data + 7) // 8)
    raise ValueError(f"no byte size for type {t}")


def memref_strides(t: MemRefType) -> tuple[list[int], int]:
    """Strides (in elements) and offset of a memref type; DYNAMIC_INDEX marks `?`.

    The identity layout gives row-major strides computed from static sizes;
    a dynamic size makes the strides of outer dimensions dynamic.
    """
    layout = t.layout
    shape = list(t.get_shape())
    if isinstance(layout, StridedLayoutAttr):
        strides = [
            DYNAMIC_INDEX if isinstance(s, NoneAttr) else s.data for s in layout.strides.data
        ]
        off = layout.offset
        offset = DYNAMIC_INDEX if isinstance(off, NoneAttr) else off.data
        return strides, offset
    strides: list[int] = []
    running = 1
    for size in reversed(shape):
        strides.append(running)
        if running != DYNAMIC_INDEX:
            running = DYNAMIC_INDEX if size == DYNAMIC_INDEX else running * size
    strides.reverse()
    return strides, 0


def has_identity_layout(t: MemRefType) -> bool:
    return not isinstance(t.layout, StridedLayoutAttr)
