"""What a Python expression denotes while compiling: typed IR values and
compile-time objects (modules, functions, shapes, tuples)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType

from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IndexType, IntegerType, MemRefType
from xdsl.ir import Attribute, SSAValue


@dataclass
class Scalar:
    """A scalar IR value. `weak` marks a Python literal, which adopts the
    float precision of the other operand (NumPy 2 / NEP 50). `numpy`: in
    Python the value is a numpy scalar (an array element, arithmetic with
    one), so `f"{v!r}"` prints `np.float64(0.1)`; False for Python numbers
    and where the frontend does not follow it (values out of an if,
    arguments: numpy scalars passed in convert to the Python number of
    their kind). `int32`: an int that Python holds as np.int32 (an element
    of an int32 array, numpy's int32 arithmetic on one): computed as an
    `index`, its arithmetic wraps to 32 bits as numpy's does
    (`ArithmeticMixin.binary`)."""

    value: SSAValue
    weak: bool = False
    numpy: bool = False
    int32: bool = False

    @property
    def type(self) -> Attribute:
        return self.value.type

    @property
    def is_float(self) -> bool:
        return isinstance(self.type, (Float64Type, Float32Type, Float16Type))

    @property
    def is_bool(self) -> bool:
        return isinstance(self.type, IntegerType) and self.type.width.data == 1

    @property
    def is_int(self) -> bool:
        return isinstance(self.type, IndexType)


@dataclass
class Array:
    """A memref: an argument, a local array or a view of one."""

    value: SSAValue

    @property
    def type(self) -> MemRefType:
        assert isinstance(self.value.type, MemRefType)
        return self.value.type

    @property
    def ndim(self) -> int:
        return len(self.type.get_shape())

    @property
    def element(self) -> Attribute:
        return self.type.element_type


@dataclass
class ArrayExpr:
    """An elementwise array expression not computed yet (frontend/array_exprs.py):
    the sizes it broadcasts to, the memrefs it reads (each with the result
    dimension each of its dimensions runs along), and `body`, which emits
    the scalar ops of one element from one element of each leaf. One
    linalg.generic computes it when an array is needed."""

    shape: list[SSAValue]
    leaves: list[tuple[SSAValue, tuple[int, ...]]]
    body: Callable[[list[SSAValue]], "Scalar"]

    @property
    def ndim(self) -> int:
        return len(self.shape)


@dataclass
class Shape:
    """`x.shape`: indexable by a constant."""

    array: Array


@dataclass
class TupleValue:
    items: list[object] = field(default_factory=list)


@dataclass
class PyObject:
    """A compile-time Python object: a module, a function, a builtin."""

    obj: object

    @property
    def is_module(self) -> bool:
        return isinstance(self.obj, ModuleType)
