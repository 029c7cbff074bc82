"""The portable, slower way to call compiled functions: ctypes.

Used when numpy's object layout is not the one `adpasses.native.pyentry` reads
(`pyentry.FAST_PATH` is False), or on request
(`compile_module(..., binding="ctypes")`, which the benchmark uses to
compare). Every check happens in Python with numpy's public attributes,
with the same messages as the fast path (`pyentry.CallErrors`).

For every public function `f` the module gets a C-ABI wrapper
`void __c_entry_f(i64 *results, <f's expanded parameters>)` that stores
each result into an 8-byte slot (floats as double, integers and bools as
i64, a memref as its descriptor's parts), so ctypes never has to pass LLVM aggregates by value.
"""

from __future__ import annotations

import ctypes
import inspect
import keyword
from collections.abc import Callable

import numpy as np
from llvmlite import ir
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, Float64Type, MemRefType
from xdsl.ir import Attribute

from adpasses.core import stop_codes
from adpasses.lowering import thread_state
from adpasses.native.arguments import is_honoured_array
from adpasses.lowering.names import ascii_symbol
from adpasses.lowering.core import I64, PTR, ModuleTranslator, const_i64, flat_types
from adpasses.native.pyentry import (
    BAD_OFFSET,
    BAD_STRIDES,
    DTYPE,
    MISALIGNED,
    NOT_ARRAY,
    NOT_CONTIGUOUS,
    RANK,
    RAISED,
    READ_ONLY,
    SCALAR,
    SHAPE,
    STATUS_STOPPED,
    CallErrors,
    is_bool_type,
    is_float_type,
    numpy_dtype,
    parameters,
    written_parameters,
)
from adpasses.core.types import has_identity_layout, memref_strides

F64 = ir.DoubleType()

# The conversions the shim calls (PyDLL functions: a pending Python error is raised).
_as_double = ctypes.pythonapi.PyFloat_AsDouble
_as_double.argtypes, _as_double.restype = [ctypes.py_object], ctypes.c_double
_as_long_long = ctypes.pythonapi.PyLong_AsLongLong
_as_long_long.argtypes, _as_long_long.restype = [ctypes.py_object], ctypes.c_longlong


def add_c_entry(mt: ModuleTranslator, f: func.FuncOp) -> str:
    """Define `__c_entry_<f>`; return its name."""
    name = f"__c_entry_{ascii_symbol(f.sym_name.data)}"
    target = mt.functions[f.sym_name.data]
    # ctypes has no half type: f16 scalars arrive as double.
    params = [F64 if isinstance(t, ir.HalfType) else t for t in target.function_type.args]
    fn = ir.Function(mt.llvm, ir.FunctionType(ir.VoidType(), [PTR, *params]), name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    outputs = list(f.function_type.outputs.data)
    n_slots = result_slots(outputs)

    def out(k: int) -> ir.Value:
        return b.gep(fn.args[0], [const_i64(k)], inbounds=True, source_etype=I64)

    # This thread's error slot (adpasses.lowering.thread_state), made on its
    # first call; if that fails the call does not run and reports it.
    error_slot = b.call(thread_state.entry_slot(mt), [])
    with b.if_then(b.icmp_unsigned("==", error_slot, ir.Constant(PTR, None)), likely=False):
        for k, v in enumerate((1, -1, thread_state.SLOT_BYTES, stop_codes.ALLOCATION_FAILED,
                               stop_codes.describe_allocation(stop_codes.ERROR_SLOT, 8))):
            b.store(const_i64(v), out(n_slots + k))
        b.ret_void()
    args = [b.fptrunc(a, t) if a.type != t else a for a, t in zip(fn.args[1:], target.function_type.args)]
    result = b.call(target, args)
    if len(outputs) == 1 and not isinstance(outputs[0], MemRefType):
        values = [result]
    else:  # one struct of every result's flattened parts (memref descriptors included)
        values = [b.extract_value(result, k) for k in range(n_slots)] if outputs else []
    flat = [t for t in outputs for t in ([t] if not isinstance(t, MemRefType) else [None] * len(flat_types(t)))]
    for k, (t, v) in enumerate(zip(flat, values)):
        slot = b.gep(fn.args[0], [const_i64(k)], inbounds=True, source_etype=I64)
        if t is None:  # a part of a memref descriptor: its pointer, offset, sizes, strides
            b.store(b.ptrtoint(v, I64) if v.type == PTR else v, slot)
        elif is_float_type(t):
            b.store(v if isinstance(t, Float64Type) else b.fpext(v, F64), slot)
        else:
            b.store(v if v.type.width == 64 else
                    (b.zext(v, I64) if is_bool_type(t) else b.sext(v, I64)), slot)
    # After the results, the stop this call recorded (flag, site, index,
    # axis, size), taken out of the thread's slot: the caller reads it from
    # its own buffer, which no other thread's call touches.
    stopped = thread_state.take_stop(mt, b, error_slot, out(n_slots + 1))
    b.store(b.zext(stopped, I64), out(n_slots))
    b.ret_void()
    return name


def result_slots(outputs: list) -> int:
    """8-byte slots of the results: one per number, the flattened parts
    of each memref descriptor."""
    return sum(len(flat_types(t)) if isinstance(t, MemRefType) else 1 for t in outputs)


def _ctype(t: ir.Type):  # type: ignore[no-untyped-def]
    if isinstance(t, ir.DoubleType):
        return ctypes.c_double
    if isinstance(t, ir.FloatType):
        return ctypes.c_float
    if isinstance(t, ir.HalfType):
        return ctypes.c_double  # see add_c_entry
    if isinstance(t, ir.PointerType):
        return ctypes.c_void_p
    if isinstance(t, ir.IntType):
        return {1: ctypes.c_bool, 8: ctypes.c_int8, 16: ctypes.c_int16, 32: ctypes.c_int32}.get(
            t.width, ctypes.c_int64)
    raise TypeError(f"no ctypes type for {t}")


_free = ctypes.CDLL(None).free
_free.argtypes, _free.restype = [ctypes.c_void_p], None


class _Memory:
    """What a returned array's `__array_interface__` points into: a buffer
    the compiled code handed over (freed with this object: numpy holds it as
    the array's base), or an argument's memory (kept alive by `owner`).
    The shim does the same with numpy's C API (adpasses.native.array_results)."""

    def __init__(self, interface: dict, pointer: int | None, owner: object = None):
        self.__array_interface__ = interface
        self._pointer, self._owner = pointer, owner

    def __del__(self) -> None:
        if self._pointer:
            _free(self._pointer)
            _runtime_handed()[1] += 1


def _runtime_handed():  # type: ignore[no-untyped-def]
    from adpasses.native import runtime

    return runtime._HANDED


def array_result(parts: list[int], dtype: np.dtype, rank: int, args: tuple, buffers: list) -> np.ndarray:
    """The numpy array of a memref result from its descriptor's parts (as
    ints), with the shim's rules: the argument itself, a view of an
    argument or of an earlier result, or an array owning the buffer."""
    pointer = parts[0] & ((1 << 64) - 1)
    offset, sizes, strides = parts[1], parts[2:2 + rank], parts[2 + rank:]
    byte_strides = tuple(s * dtype.itemsize for s in strides)
    for a in args:
        if isinstance(a, np.ndarray) and pointer and a.__array_interface__["data"][0] == pointer:
            if (a.dtype == dtype and offset == 0 and list(a.shape) == sizes
                    and list(a.strides) == list(byte_strides)):
                return a
            return _view(pointer, offset, sizes, byte_strides, dtype, not a.flags.writeable, None, a)
    for p, array in buffers:
        if pointer and p == pointer:
            return _view(pointer, offset, sizes, byte_strides, dtype, False, None, array)
    if not pointer:
        return np.empty(sizes, dtype)
    _runtime_handed()[0] += 1
    result = _view(pointer, offset, sizes, byte_strides, dtype, False, pointer, None)
    buffers.append((pointer, result))
    return result


def _view(pointer: int, offset: int, sizes: list[int], strides: tuple, dtype: np.dtype, readonly: bool,
          owned: int | None, owner: object) -> np.ndarray:
    interface = {"data": (pointer + offset * dtype.itemsize, readonly), "shape": tuple(sizes),
                 "strides": strides, "typestr": dtype.str, "version": 3}
    return np.asarray(_Memory(interface, owned, owner))


class _Arguments:
    """Python-side checks and descriptor expansion for one function: one
    converter per parameter, chosen once."""

    def __init__(self, f: func.FuncOp, errors: CallErrors):
        self.errors = errors
        self.types = list(f.function_type.inputs.data)
        written = written_parameters(f)
        self.converters = [
            self.array_converter(k, t, k in written) if isinstance(t, MemRefType)
            else self.scalar_converter(k, t)
            for k, t in enumerate(self.types)
        ]
        self.array_positions = [k for k, t in enumerate(self.types) if isinstance(t, MemRefType)]
        self.scalar_positions = [k for k, t in enumerate(self.types) if not isinstance(t, MemRefType)]

    def expand(self, args: tuple) -> list[object]:
        # Scalars first: a conversion may run Python code (`__float__`,
        # `__index__`) that resizes or frees an array, so no array's data
        # pointer or shape is read before the last conversion (as the shim).
        parts: list[list[object]] = [[]] * len(args)
        for k in self.scalar_positions:
            parts[k] = self.converters[k](args[k])
        for k in self.array_positions:
            parts[k] = self.converters[k](args[k])
        return [v for part in parts for v in part]

    def fail(self, k: int, problem: int, a: object) -> None:
        """Raise through CallErrors, which reads only argument k."""
        self.errors((k << 4) | problem, *[a if j == k else None for j in range(len(self.types))])

    def scalar_converter(self, k: int, t: Attribute) -> Callable[[object], list[object]]:
        # The C API conversions the shim calls, so both bindings accept the
        # same objects; ctypes.pythonapi raises the pending Python error.
        if is_float_type(t):
            def convert_float(a: object) -> list[object]:
                if a.__class__ is float:
                    return [a]
                try:
                    return [_as_double(a)]
                except Exception as exc:  # noqa: BLE001 - CallErrors decides
                    self.raised(k, a, exc)
                    raise

            return convert_float
        if is_bool_type(t):
            def convert_bool(a: object) -> list[object]:
                if a.__class__ is not bool and a.__class__ is not np.bool_:
                    self.fail(k, SCALAR, a)
                return [bool(a)]

            return convert_bool
        bits = flat_types(t)[0].width
        low, high = -(1 << (bits - 1)), 1 << (bits - 1)

        def convert_int(a: object) -> list[object]:
            try:
                value = a if a.__class__ is int else _as_long_long(a)
            except Exception as exc:  # noqa: BLE001 - CallErrors decides
                self.raised(k, a, exc)
                raise
            if not low <= value < high:  # type: ignore[operator]
                self.fail(k, SCALAR, a)
            return [value]

        return convert_int

    def raised(self, k: int, a: object, exc: BaseException) -> None:
        """Raise what the shim raises when converting argument k raised."""
        self.errors((k << 4) | RAISED, exc, *[a if j == k else None for j in range(len(self.types))])

    def array_converter(self, k: int, t: MemRefType, written: bool) -> Callable[[object], list[object]]:
        shape = list(t.get_shape())
        dt = numpy_dtype(t.element_type)
        identity = has_identity_layout(t)
        fixed, offset = ([DYNAMIC_INDEX] * len(shape), 0) if identity else memref_strides(t)

        def convert(a: object) -> list[object]:
            if not is_honoured_array(a):
                self.fail(k, NOT_ARRAY, a)
            assert isinstance(a, np.ndarray)
            flags = a.flags
            problem = (RANK if a.ndim != len(shape) else DTYPE if a.dtype != dt
                       else NOT_CONTIGUOUS if identity and not flags.c_contiguous
                       else READ_ONLY if written and not flags.writeable
                       else MISALIGNED if not flags.aligned
                       else SHAPE if any(0 <= s != n for s, n in zip(shape, a.shape))
                       else BAD_OFFSET if offset not in (0, DYNAMIC_INDEX) else None)
            strides = [s // dt.itemsize for s in a.strides]
            if problem is None and any(f != DYNAMIC_INDEX and f != s and n > 1
                                       for f, s, n in zip(fixed, strides, a.shape)):
                problem = BAD_STRIDES
            if problem is not None:
                self.fail(k, problem, a)
            return [a.__array_interface__["data"][0], 0, *a.shape, *strides]

        return convert


def make_ctypes_caller(name: str, f: func.FuncOp, c_entry_address: int, function_address: int,
                       check_sites: list[str], code: object = None) -> Callable:
    """The Python callable for `f` through ctypes (same checks and errors).
    `code` owns the machine code (`llvm_jit.MachineCode`): the callable
    holds it.

    The entry is called with the GIL released (`CFUNCTYPE`), like the
    shims: generated code keeps no state that two calls share (each thread
    has its error slot, each call its tape buffers: adpasses.lowering.
    thread_state), and each call has its own result buffer."""
    params = parameters(f)
    errors = CallErrors(name, params, check_sites)
    checks = _Arguments(f, errors)
    arg_types = [_ctype(t) for p in f.function_type.inputs.data for t in flat_types(p)]
    c_function = ctypes.CFUNCTYPE(None, ctypes.c_void_p, *arg_types)(c_entry_address)
    outputs = list(f.function_type.outputs.data)
    n_slots = result_slots(outputs)
    kinds = [("a", numpy_dtype(t.element_type), len(t.get_shape())) if isinstance(t, MemRefType)
             else "f" if is_float_type(t) else "b" if is_bool_type(t) else "i" for t in outputs]
    Buffer = ctypes.c_int64 * (n_slots + 5)  # results, then the error slot
    as_double = ctypes.c_double.from_buffer

    def read(out, j: int, kind: str) -> object:  # type: ignore[no-untyped-def]
        return as_double(out, 8 * j).value if kind == "f" else bool(out[j]) if kind == "b" else out[j]

    def results(out, args: tuple) -> object:  # type: ignore[no-untyped-def]
        values, buffers, position = [], [], 0
        for kind in kinds:
            if isinstance(kind, tuple):
                _, dtype, rank = kind
                parts = list(out[position:position + 2 + 2 * rank])
                values.append(array_result(parts, dtype, rank, args, buffers))
                position += 2 + 2 * rank
            else:
                values.append(read(out, position, kind))
                position += 1
        if len(values) == 1:
            return values[0]
        return tuple(values) if values else None

    def call(*args: object) -> object:
        if len(args) != len(params):
            errors(-1, len(args))
        out = Buffer()
        c_function(ctypes.addressof(out), *checks.expand(args))
        if out[n_slots]:
            errors(STATUS_STOPPED, *out[n_slots + 1:n_slots + 5])
        return results(out, args)

    plain = name.isidentifier() and not keyword.iskeyword(name)
    call.__name__ = name if plain else "compiled"
    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_ONLY) for p in params])
    call.__doc__ = f"Compiled @{name}({', '.join(p.name for p in params)}) (ctypes binding)"
    call.parameters = params  # type: ignore[attr-defined]
    call.raw = call  # type: ignore[attr-defined]
    call.address = function_address  # type: ignore[attr-defined]
    call._keepalive = (c_function, code)  # type: ignore[attr-defined]
    return call

