"""Arguments of compiled calls as the compiled code may take them: scalars
converted once, and arrays whose data is all their meaning.

Compiled code reads an array's memory (data pointer, sizes, strides) and a
scalar's value. Two kinds of Python objects break that contract:

- Scalars whose conversion runs Python code (`__float__`, `__index__` of a
  numpy scalar or a user class). That code may resize or free an array, so
  every entry path converts all scalars *before* it reads any array
  pointer: the entry shims (`pyentry`), the ctypes binding
  (`ctypes_entry`), and the general paths of `jit`, `grad` and `autodiff`,
  which call `plain_arguments` first. An exception raised by the object's
  own conversion propagates unchanged. (Calls that reach a fast path have
  a signature code, which only exact floats, ints, bools, arrays and
  numpy's own float64/float32/int64/int32/bool scalars get: no Python code
  can run during their conversion.)
- ndarray subclasses whose elements do not mean what their memory holds:
  a `numpy.ma.MaskedArray` carries a mask the compiled code would ignore,
  other subclasses may redefine indexing or arithmetic. Only plain arrays
  and `numpy.memmap` (plain memory in a file) are taken; any other
  subclass is a TypeError naming the argument and what to pass instead.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

HONOURED_ARRAY_TYPES = (np.ndarray, np.memmap)
"""Array classes whose elements are exactly the memory the compiled code reads."""

_PLAIN = (float, int, bool, np.ndarray)
_NUMPY_KEPT = (np.float64, np.float32, np.int64, np.int32, np.bool_)


def array_subclass_problem(value: np.ndarray, name: str) -> str:
    """Why an ndarray subclass cannot be passed, and what to pass instead
    (`name` is the argument as the message shows it)."""
    cls = type(value)
    if isinstance(value, np.ma.MaskedArray):
        return (f"{name} is a numpy.ma.MaskedArray: compiled code reads the array's memory and "
                "would ignore its mask; pass x.filled(value) (masked elements replaced by value) "
                "or np.asarray(x) (the data, mask dropped)")
    return (f"{name} is a {cls.__module__}.{cls.__qualname__} (an ndarray subclass): compiled code "
            "reads only the array's memory, not what the subclass adds; pass np.asarray(x)")


def is_honoured_array(value: object) -> bool:
    return value.__class__ is np.ndarray or type(value) in HONOURED_ARRAY_TYPES


def plain_arguments(fname: str, params: Sequence[str], args: Sequence[object],
                    keep_numpy: bool = False) -> tuple:
    """`args` with numpy scalars converted to Python floats, ints and bools
    (running their conversion once, here, before any array is read), after
    checking that every array is one whose memory is its meaning. Other
    objects are left for the type checks that follow. `keep_numpy`: numpy's
    own float64/float32/int64/int32/bool scalars (exactly these classes,
    whose conversion runs no Python code) are kept: jit compiles a version
    for them (NEP 50: they are strong, and Python returns numpy scalars)."""
    out: list[object] | None = None
    for k, a in enumerate(args):
        cls = a.__class__
        if cls in _PLAIN or (keep_numpy and cls in _NUMPY_KEPT):
            continue
        if isinstance(a, np.ndarray):
            if not is_honoured_array(a):
                name = params[k] if k < len(params) else f"arg{k}"
                raise TypeError(array_subclass_problem(a, f"{fname}(): argument {k} ('{name}')"))
            continue
        if isinstance(a, np.bool_):
            converted: object = bool(a)
        elif isinstance(a, (float, int)):
            continue  # a float or int subclass: its value is read directly, no method runs
        elif isinstance(a, np.floating):
            converted = float(a)
        elif isinstance(a, np.integer):
            converted = operator.index(a)
        else:
            continue
        if out is None:
            out = list(args)
        out[k] = converted
    return tuple(args) if out is None else tuple(out)
