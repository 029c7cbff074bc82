"""Argument types: what a compiled version of a Python function is specialised on.

A function is compiled once per signature: for each argument its kind
(float, int, bool, or a numpy array with its dtype, rank and whether it is
C-contiguous). C-contiguous arrays get the identity memref layout (unit
strides LLVM can vectorise); other views the fully dynamic strided layout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The array dtypes compiled code takes (their MLIR types: `mlir_dtype`).
DTYPE_NAMES = ("float64", "float32", "int64", "int32", "bool")


def mlir_dtype(name: str):  # type: ignore[no-untyped-def]
    """The MLIR element type of a dtype name (xDSL is imported here, when
    something is compiled, not to read a signature)."""
    from xdsl.dialects.builtin import IntegerType, f32, f64, i1

    return {"float64": f64, "float32": f32, "int64": IntegerType(64), "int32": IntegerType(32),
            "bool": i1}[name]


_NATIVE_DTYPES = {np.dtype(name): name for name in DTYPE_NAMES}


NUMPY_SCALAR_KINDS = {np.float64: "np.float64", np.float32: "np.float32", np.int64: "np.int64",
                      np.int32: "np.int32", np.bool_: "np.bool_"}
"""numpy scalar classes an argument keeps (their own signature): strong
under NEP 50 (`x32 * np.float64(2.0)` is float64, where `x32 * 2.0` is
float32), printed and returned as numpy scalars."""


@dataclass(frozen=True)
class ScalarArg:
    kind: str  # "float", "int", "bool" (Python numbers) or a NUMPY_SCALAR_KINDS value

    def mlir_type(self):  # type: ignore[no-untyped-def]
        from xdsl.dialects.builtin import IndexType, f32, f64, i1

        return {"float": f64, "int": IndexType(), "bool": i1, "np.float64": f64, "np.float32": f32,
                "np.int64": IndexType(), "np.int32": IndexType(), "np.bool_": i1}[self.kind]

    @property
    def flags(self) -> tuple[bool, bool, bool]:
        """(weak, numpy, int32) of the parameter's value (frontend Scalar):
        a Python number is weak (NEP 50), a numpy scalar strong; an np.int32
        is an `index` whose arithmetic wraps to 32 bits."""
        numpy = self.kind.startswith("np.")
        return (not numpy, numpy, self.kind == "np.int32")


@dataclass(frozen=True)
class ArrayArg:
    dtype: str
    ndim: int
    contiguous: bool

    def mlir_type(self):  # type: ignore[no-untyped-def]
        from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, NoneAttr, StridedLayoutAttr

        element = mlir_dtype(self.dtype)
        shape = [DYNAMIC_INDEX] * self.ndim
        if self.contiguous:
            return MemRefType(element, shape)
        layout = StridedLayoutAttr([NoneAttr()] * self.ndim, NoneAttr())
        return MemRefType(element, shape, layout)


ArgType = ScalarArg | ArrayArg


def arg_type(value: object, position: int, name: str) -> ArgType:
    """The ArgType of a call argument; TypeError naming it if unsupported."""
    if isinstance(value, np.ndarray):
        dtype = value.dtype
        name_of_dtype = _NATIVE_DTYPES.get(dtype)
        if name_of_dtype is not None:
            return ArrayArg(name_of_dtype, value.ndim, bool(value.flags.c_contiguous))
        if dtype.name not in DTYPE_NAMES or not dtype.isnative:
            raise TypeError(
                f"argument {position} ('{name}'): arrays of dtype {dtype} are not supported; "
                f"use one of {', '.join(DTYPE_NAMES)}"
            )
        return ArrayArg(dtype.name, value.ndim, bool(value.flags.c_contiguous))
    numpy_kind = NUMPY_SCALAR_KINDS.get(value.__class__)  # exactly these classes (subclasses convert)
    if numpy_kind is not None:
        return ScalarArg(numpy_kind)
    if isinstance(value, (bool, np.bool_)):
        return ScalarArg("bool")
    if isinstance(value, (int, np.integer)):
        return ScalarArg("int")
    if isinstance(value, (float, np.floating)):
        return ScalarArg("float")
    raise TypeError(
        f"argument {position} ('{name}') has type {type(value).__name__}; compiled functions take "
        "floats, ints, bools and numpy arrays"
    )


def signature_key(args: tuple) -> tuple:
    """A cheap hashable key of the argument types (the cache key)."""
    key = []
    for a in args:
        cls = a.__class__
        if cls is float:
            key.append("f")
        elif cls is int:
            key.append("i")
        elif cls is np.ndarray:
            key.append((a.dtype.char, a.ndim, a.flags.c_contiguous))
        elif cls is bool:
            key.append("b")
        else:
            key.append(_slow_key(a))
    return tuple(key)


def _slow_key(a: object) -> object:
    numpy_kind = NUMPY_SCALAR_KINDS.get(a.__class__)
    if numpy_kind is not None:
        return numpy_kind
    if isinstance(a, np.ndarray):
        return (a.dtype.char, a.ndim, bool(a.flags.c_contiguous))
    if isinstance(a, (bool, np.bool_)):
        return "b"
    if isinstance(a, (int, np.integer)):
        return "i"
    if isinstance(a, (float, np.floating)):
        return "f"
    return ("?", type(a))

