"""`dense_resource<key>` initialisers: the blobs of a file's
`{-# dialect_resources: {builtin: {key: "0x..."}} #-}` block, as dense
elements.

mlir-opt prints large constants (memref.global initial values,
arith.constant) as `dense_resource<blob1>` with the bytes at the end of the
file. xDSL 0.74 parses the block into a store shared by every parse of the
context (and renames a key seen twice), so `LocatingParser` keeps the blobs
of its own file instead and, once the module is parsed, `resolve` replaces
each `DenseResourceAttr` by the `DenseIntOrFPElementsAttr` of its blob:
the passes and the lowering only know dense elements, and the output prints
as `dense<...>`.

A blob is `0x`, the alignment as 4 little-endian bytes, then the elements
in little-endian order, packed (i1 one byte each, index 8 bytes).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    ModuleOp,
)
from xdsl.ir import Attribute, Operation

ELIDED = "__elided__"
"""What mlir-opt prints for elements it left out
(`--mlir-elide-elementsattrs-if-larger`: `dense_resource<__elided__>`;
`--mlir-elide-resource-strings-if-larger` keeps the key and leaves the
block out)."""


def _dtype(element: Attribute) -> np.dtype | None:
    if isinstance(element, Float64Type):
        return np.dtype("<f8")
    if isinstance(element, Float32Type):
        return np.dtype("<f4")
    if isinstance(element, Float16Type):
        return np.dtype("<f2")
    if isinstance(element, IndexType):
        return np.dtype("<i8")
    if isinstance(element, IntegerType) and element.width.data in (1, 8, 16, 32, 64):
        return np.dtype("u1") if element.width.data == 1 else np.dtype(f"<i{element.width.data // 8}")
    return None


def blob_elements(key: str, blob: str, attr: DenseResourceAttr) -> DenseIntOrFPElementsAttr:
    """The dense elements of `blob` for `attr`'s type; ValueError saying
    what is wrong with it."""
    shaped = attr.type
    element = shaped.get_element_type()  # type: ignore[attr-defined]
    shape = shaped.get_shape()  # type: ignore[attr-defined]
    dtype = _dtype(element)
    if dtype is None:
        raise ValueError(f"dense_resource<{key}> of {element} elements is not supported: write it as dense<...>")
    if any(n < 0 for n in shape):
        raise ValueError(f"dense_resource<{key}> needs a static shape, not {shaped}")
    try:
        raw = bytes.fromhex(blob[2:]) if blob.startswith("0x") else None
    except ValueError:
        raw = None
    if raw is None or len(raw) < 4:
        raise ValueError(f"the blob of dense_resource<{key}> is not `0x` then hex digits (the alignment, "
                         "then the data)")
    data = raw[4:]  # after the alignment
    count = int(np.prod(shape)) if shape else 1
    if len(data) != count * dtype.itemsize:
        raise ValueError(f"the blob of dense_resource<{key}> holds {len(data)} bytes of data; {shaped} "
                         f"needs {count * dtype.itemsize} ({count} x {dtype.itemsize})")
    values = np.frombuffer(data, dtype=dtype)
    if isinstance(element, IntegerType) and element.width.data == 1:
        items: list = [int(v != 0) for v in values]
    elif dtype.kind == "f":
        items = [float(v) for v in values]
    else:
        items = [int(v) for v in values]
    return DenseIntOrFPElementsAttr.from_list(shaped, items)  # type: ignore[arg-type]


def resolve(module: ModuleOp, blobs: dict[str, str], error: Callable[[Operation, str], None]) -> None:
    """Replace every dense_resource attribute of `module`'s ops by the dense
    elements of its blob; `error(op, message)` raises for a missing or
    malformed blob."""
    for op in module.walk():
        for store in (op.properties, op.attributes):
            for name, attr in list(store.items()):
                if not isinstance(attr, DenseResourceAttr):
                    continue
                key = attr.resource_handle.data
                blob = blobs.get(key)
                if blob is None:
                    if key == ELIDED:
                        error(op, "dense_resource<__elided__>: mlir-opt left these elements out "
                                  "(--mlir-elide-elementsattrs-if-larger); print the module without that "
                                  "option")
                    else:
                        error(op, f"dense_resource<{key}>: the file has no blob named {key} in a "
                                  "`{-# dialect_resources: {builtin: {...}} #-}` block (mlir-opt leaves the "
                                  "blobs out with --mlir-elide-resource-strings-if-larger); print the module "
                                  "without that option, or write the constant as dense<...>")
                    continue
                try:
                    store[name] = blob_elements(key, blob, attr)
                except ValueError as err:
                    error(op, str(err))
