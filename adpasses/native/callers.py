"""The Python side of calling compiled functions: the callable around an
entry shim, and the errors of its failed checks.

Nothing here imports xDSL or builds IR: a module loaded from the disk cache
(adpasses.native.object_cache) gets its callers from the parameters' names
and type texts alone. Types are parsed (importing xDSL) only when an error
message needs them. The shims themselves are built by
`adpasses.native.pyentry`, which defines the status codes they pass here.
"""

from __future__ import annotations

import ctypes
import inspect
import keyword
import sys
from collections.abc import Callable

import numpy as np

from adpasses.core import stop_codes
from adpasses.native.arguments import array_subclass_problem

# numpy's PyArrayObject_fields (64-bit CPython): type, data, nd, dimensions,
# strides, descr, flags; PyArray_Descr: kind, byteorder, elsize.
OB_TYPE, DATA, NDIM, DIMS, STRIDES, DESCR, FLAGS = 8, 16, 24, 32, 40, 56, 64
KIND, BYTEORDER, ELSIZE = 24, 26, 40
C_CONTIGUOUS, ALIGNED, WRITEABLE = 0x1, 0x100, 0x400
NON_NATIVE = ">" if sys.byteorder == "little" else "<"

# Status codes passed to CallErrors: (parameter << 4) | problem, or a
# negative code for failures that concern no single parameter.
RANK, NOT_CONTIGUOUS, READ_ONLY, MISALIGNED, SHAPE, NOT_ARRAY, DTYPE, SCALAR, BAD_STRIDES, BAD_OFFSET, \
    RAISED = range(11)
# RAISED: converting a scalar raised a Python exception; the handler gets
# that exception object first, then the arguments.
STATUS_NARGS, STATUS_STOPPED = -1, -2
PROBLEMS = {
    RANK: "has rank {got}, expected {want}",
    NOT_CONTIGUOUS: "is not C-contiguous, but the parameter has the identity layout; pass "
                    "np.ascontiguousarray(...) or declare a strided layout (strided<[?], offset: ?>)",
    READ_ONLY: "is read-only, but the function writes to it; pass a writeable array (e.g. a copy)",
    MISALIGNED: "is not aligned to its element size; pass a copy",
    SHAPE: "has shape {got}, expected {want}",
    BAD_STRIDES: "has strides {got} (in elements), but the parameter type requires {want}; "
             "use ? for strides the caller does not fix",
    BAD_OFFSET: "cannot be passed: the parameter type has the static offset {want}, but a numpy "
            "array starts at its first element (offset 0); declare offset: ? or offset: 0",
}


def numpy_layout_ok() -> bool:
    """Whether numpy's array and dtype objects have the field offsets the
    shims read (checked on probe objects against numpy's own accessors)."""
    a = np.zeros((3, 5))[:, ::2]
    base = id(a)

    def ptr(addr: int) -> int | None:
        return ctypes.c_void_p.from_address(addr).value

    def i64s(addr: int | None, n: int) -> list[int]:
        return list((ctypes.c_int64 * n).from_address(addr or 0)) if addr else []

    try:
        ok = (
            ptr(base + OB_TYPE) == id(np.ndarray)
            and ptr(base + DATA) == a.ctypes.data
            and ctypes.c_int.from_address(base + NDIM).value == 2
            and i64s(ptr(base + DIMS), 2) == [3, 3]
            and i64s(ptr(base + STRIDES), 2) == list(a.strides)
            and ctypes.c_int.from_address(base + FLAGS).value == a.flags.num
            and ptr(base + DESCR) == id(a.dtype)
        )
        for dt in (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.bool_), np.dtype(">i4")):
            d = id(dt)
            ok = ok and (
                chr(ctypes.c_char.from_address(d + KIND).value[0]) == dt.kind
                and chr(ctypes.c_char.from_address(d + BYTEORDER).value[0]) == dt.byteorder
                and ctypes.c_int64.from_address(d + ELSIZE).value == dt.itemsize
            )
    except (ValueError, OSError):
        return False
    return bool(ok)


FAST_PATH = numpy_layout_ok()


def numpy_dtype(t: object) -> np.dtype:
    from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IndexType, IntegerType

    if isinstance(t, Float64Type):
        return np.dtype(np.float64)
    if isinstance(t, Float32Type):
        return np.dtype(np.float32)
    if isinstance(t, Float16Type):
        return np.dtype(np.float16)
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, IntegerType):
        width = t.width.data
        return np.dtype(np.bool_) if width == 1 else np.dtype(f"int{width}")
    raise TypeError(f"no numpy dtype for {t}")


def is_float_type(t: object) -> bool:
    from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type

    return isinstance(t, (Float64Type, Float32Type, Float16Type))


def is_bool_type(t: object) -> bool:
    from xdsl.dialects.builtin import IntegerType

    return isinstance(t, IntegerType) and t.width.data == 1


class Parameter:
    """A parameter of a compiled function: its name and its MLIR type, as
    an xDSL attribute or as the text of one (a module loaded from the disk
    cache: the type is parsed, importing xDSL, only when an error message
    needs it)."""

    __slots__ = ("name", "_type", "_text")

    def __init__(self, name: str, type: object = None, *, text: str | None = None):
        self.name, self._type, self._text = name, type, text

    @property
    def type(self):  # type: ignore[no-untyped-def]
        if self._type is None:
            from adpasses.core.context import parse_type

            self._type = parse_type(self._text)
        return self._type

    @property
    def text(self) -> str:
        return self._text if self._text is not None else str(self._type)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Parameter) and (self.name, self.text) == (other.name, other.text)

    def __repr__(self) -> str:
        return f"Parameter({self.name!r}, {self.text})"


def converts_itself(value: object, t: Attribute) -> bool:
    """Whether converting `value` to a scalar of type `t` calls a method of
    its class (what PyFloat_AsDouble / PyLong_AsLongLong call): `__float__`
    or `__index__` for a float parameter, `__index__` for an integer one.
    Floats and ints (and their subclasses) are read directly."""
    cls = type(value)
    if is_float_type(t):
        return not isinstance(value, float) and (hasattr(cls, "__float__") or hasattr(cls, "__index__"))
    return not isinstance(value, int) and hasattr(cls, "__index__")


class CallErrors:
    """Turns a failed check into the exception a user should see. Called by
    the shim (or the ctypes fallback) with a status code and the arguments."""

    def __init__(self, fname: str, params: list[Parameter], check_sites: list[str]):
        self.fname, self.params, self.check_sites = fname, params, check_sites
        self.keepalive: tuple = ()  # what the entry calling this object needs alive


    def __call__(self, code: int, *args: object) -> None:
        if code == STATUS_NARGS:
            count = args[0] if args else "?"
            n = len(self.params)
            raise TypeError(f"{self.fname}() takes {n} positional argument{'' if n == 1 else 's'} but "
                            f"{count} {'was' if count == 1 else 'were'} given "
                            f"({', '.join(p.name for p in self.params) or 'none'})")
        if code == STATUS_STOPPED:
            self.stopped(*args)  # type: ignore[arg-type]
        k, problem = code >> 4, code & 15
        if problem == RAISED:
            self.conversion_raised(k, args[1 + k], args[0])  # type: ignore[arg-type]
        if problem == NOT_ARRAY:
            self.not_array(k, args[k])
        if problem == DTYPE:
            self.dtype(k, args[k])
        if problem == SCALAR:
            self.scalar(k, args[k])
        self.array_problem(k, problem, args[k])

    def _param(self, k: int) -> str:
        return f"{self.fname}(): argument {k} ('{self.params[k].name}')"

    def not_array(self, k: int, value: object) -> None:
        if isinstance(value, np.ndarray):
            raise TypeError(array_subclass_problem(value, self._param(k)))
        raise TypeError(f"{self._param(k)} must be a numpy array of {self.params[k].type}, "
                        f"got {type(value).__name__}")

    def dtype(self, k: int, value: np.ndarray) -> None:
        want = numpy_dtype(self.params[k].type.element_type)
        swapped = value.dtype.newbyteorder("=") == want and value.dtype != want
        raise TypeError(f"{self._param(k)} must have dtype {want}, got {value.dtype}"
                        + (" (non-native byte order; pass a.astype(a.dtype.newbyteorder('=')))"
                           if swapped else ""))

    def scalar(self, k: int, value: object) -> None:
        t = self.params[k].type
        if isinstance(value, (int, np.integer)) and not is_float_type(t) and not is_bool_type(t):
            raise OverflowError(f"{self._param(k)} = {value} does not fit in {t}")
        python = "float" if is_float_type(t) else "bool" if is_bool_type(t) else "int"
        article = "an" if str(t)[0] in "aeiou" else "a"
        raise TypeError(f"{self._param(k)} must be {article} {t} scalar, got "
                        f"{type(value).__name__} (pass a Python {python})")

    def conversion_raised(self, k: int, value: object, exc: BaseException) -> None:
        """Converting scalar argument k raised `exc`. If the object's own
        conversion (`__float__`, `__index__`) raised it, `exc` propagates
        unchanged; a plain int that does not fit, or an object that cannot
        be converted at all, gets the message naming the parameter."""
        t = self.params[k].type
        if isinstance(exc, OverflowError) and isinstance(value, (int, np.integer)) and not is_float_type(t):
            self.scalar(k, value)
        if converts_itself(value, t):
            raise exc
        self.scalar(k, value)

    def array_problem(self, k: int, problem: int, value: np.ndarray) -> None:
        t = self.params[k].type
        shape = list(t.get_shape())
        from xdsl.dialects.builtin import DYNAMIC_INDEX

        if problem in (BAD_STRIDES, BAD_OFFSET):
            from adpasses.core.types import memref_strides

            strides, offset = memref_strides(t)
            itemsize = numpy_dtype(t.element_type).itemsize
            text = PROBLEMS[problem].format(
                got=tuple(s // itemsize for s in value.strides),
                want=offset if problem == BAD_OFFSET else tuple("?" if s == DYNAMIC_INDEX else s
                                                            for s in strides))
            raise ValueError(f"{self._param(k)} {text}")
        text = PROBLEMS[problem].format(
            got=(value.ndim if problem == RANK else tuple(value.shape)),
            want=(len(shape) if problem == RANK else tuple("?" if s < 0 else s for s in shape)),
        )
        raise ValueError(f"{self._param(k)} {text}")

    def stopped(self, site: int, index: int, axis: int, size: int) -> None:
        """The compiled code stopped: the entry passes what its thread's error
        slot held when the call returned (and has cleared it,
        adpasses.lowering.thread_state); adpasses.core.stop_codes, the one
        table of stops, says which exception it is."""
        where = self.check_sites[site] if 0 <= site < len(self.check_sites) else "?"
        raise stop_codes.exception(axis, where, index, size, self.fname)


class _PyMethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


METH_FASTCALL = 0x80
_new_cfunction = ctypes.pythonapi.PyCFunction_NewEx
_new_cfunction.restype = ctypes.py_object
_new_cfunction.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]


def builtin_function(name: str, address: int, self: object = None):  # type: ignore[no-untyped-def]
    """A CPython builtin function object calling the shim at `address`, which
    receives `self` as its first argument."""
    method = _PyMethodDef(name.encode(), address, METH_FASTCALL, None)
    fn = _new_cfunction(ctypes.addressof(method), self, None)
    return fn, method  # the PyMethodDef must outlive the function


def make_caller(name: str, params: list[Parameter], shim_address: int, function_address: int,
                check_sites: list[str], code: object = None) -> Callable:
    """The Python callable for compiled `f`: a two-line Python function with
    `f`'s parameter names calling the builtin shim, which checks everything.
    `code` owns the machine code (`llvm_jit.MachineCode`).

    Attributes: `raw` (the builtin: positional arguments only, same checks,
    about 100 ns less per call), `address` (the compiled function, internal
    ABI: see docs/calling_convention.md; valid while the callable lives),
    `parameters`."""
    errors = CallErrors(name, params, check_sites)
    entry, method = builtin_function(name, shim_address, errors)
    # The builtin holds `errors` as its `self`: through it, the method
    # definition it points to and the code it jumps into live as long as
    # the builtin does, whoever holds it (`raw`, a fast path, a cache).
    errors.keepalive = (method, code)
    names = [p.name for p in params]
    plain = name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")
    pyname = name if plain else "compiled"
    # `*args`: the shim counts them (one message for too few and too many);
    # __signature__ still shows the parameter names.
    source = f"def {pyname}(*args):\n    return _entry(*args)\n"
    env: dict[str, object] = {"_entry": entry}
    exec(compile(source, f"<adpasses entry of @{name}>", "exec"), env)
    caller = env[pyname]
    caller.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])
    caller.__doc__ = f"Compiled @{name}({', '.join(names)})"  # type: ignore[attr-defined]
    caller.parameters = params  # type: ignore[attr-defined]
    caller.raw = entry  # type: ignore[attr-defined]
    caller.address = function_address  # type: ignore[attr-defined]
    caller._keepalive = (entry, method)  # type: ignore[attr-defined]
    return caller  # type: ignore[return-value]
