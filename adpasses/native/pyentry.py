"""Calling compiled functions from Python cheaply and safely.

For every public function `f` the module gets an entry shim
`__py_entry_f`: a CPython METH_FASTCALL function generated in LLVM IR and
wrapped as a builtin function object. It checks the argument count,
converts scalars with the C API (PyFloat_AsDouble, PyLong_AsLongLong),
reads each numpy array's type, data pointer, rank, sizes, strides, flags
and dtype straight from numpy's `PyArrayObject_fields` / `PyArray_Descr`
(stable parts of numpy's C ABI; the offsets are checked against probe
objects when this module is imported), validates rank, dtype, static
sizes, contiguity (identity layouts), writeability (parameters the function
may write) and alignment, calls `f` with the expanded descriptors, and
builds its results with Py_BuildValue.

Nothing is checked in Python on the way in. When a check fails, or the
compiled code stopped on an out-of-bounds access, the shim calls its
`self` object (a `CallErrors`) with a status code and the arguments, and
that Python object raises the TypeError / ValueError / IndexError naming
the parameter or the source location: errors cost Python time, calls do
not. Measured costs are in docs/calling_convention.md.

If numpy's object layout ever differs from the one probed here, callers are
built by `adpasses.native.ctypes_entry` instead (slower, all checks in Python).
"""

from __future__ import annotations

import ctypes
import inspect
import keyword
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from llvmlite import ir
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, SSAValue

from adpasses.core import stop_codes
from adpasses.native.arguments import HONOURED_ARRAY_TYPES, array_subclass_problem
from adpasses.lowering.names import ascii_symbol
from adpasses.lowering.core import I8, I32, I64, PTR, PY_INDEX_AXIS, ModuleTranslator, const_i64, flat_types
from adpasses.analysis.memref_views import memory_object
from adpasses.native.runtime import ERROR_SLOT
from adpasses.core.types import has_identity_layout, memref_strides

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


def numpy_dtype(t: Attribute) -> np.dtype:
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


def written_parameters(f: func.FuncOp) -> set[int]:
    """Indices of memref parameters whose memory the function may write:
    stored to or copied into through any view, or passed to a callee."""
    args = list(f.body.blocks[0].args)  # multi-block bodies: the entry block
    written: set[int] = set()

    def mark(value: SSAValue) -> None:
        obj = memory_object(value)
        if obj in args:
            written.add(args.index(obj))

    for op in f.walk():
        if isinstance(op, memref.StoreOp):
            mark(op.memref)
        elif isinstance(op, memref.CopyOp):
            mark(op.destination)
        elif isinstance(op, func.CallOp):
            for a in op.arguments:
                if isinstance(a.type, MemRefType):
                    mark(a)
    return written


def _is_float_type(t: Attribute) -> bool:
    return isinstance(t, (Float64Type, Float32Type, Float16Type))


def _is_bool_type(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


# -- the LLVM shim ------------------------------------------------------------


class _Shim:
    """Builds `PyObject *__py_entry_f(PyObject *self, PyObject *const *args,
    Py_ssize_t nargs)` for one function."""

    def __init__(self, mt: ModuleTranslator, f: func.FuncOp):
        self.mt, self.f = mt, f
        self.inputs = list(f.function_type.inputs.data)
        self.name = f"__py_entry_{ascii_symbol(f.sym_name.data)}"
        self.fn = ir.Function(mt.llvm, ir.FunctionType(PTR, [PTR, PTR, I64]), self.name)
        self.b = ir.IRBuilder(self.fn.append_basic_block("entry"))
        fail_bb = self.fn.append_basic_block("fail")
        with self.b.goto_block(fail_bb):
            self.fail_code = self.b.phi(I64)
        self.fail_bb = fail_bb
        raised_bb = self.fn.append_basic_block("raised")
        with self.b.goto_block(raised_bb):
            self.raised_code = self.b.phi(I64)
        self.raised_bb = raised_bb
        self.slot = mt.global_ref("adpasses_error_slot", ir.ArrayType(I64, 5))

    # -- small helpers ----------------------------------------------------------

    def c_api(self, name: str, ret: ir.Type, params: list[ir.Type], var_arg: bool = False) -> ir.Function:
        return self.mt.declare(name, ret, params, var_arg)

    def cstring(self, text: str) -> ir.Value:
        return self.b.gep(self.mt.string(text), [const_i64(0), const_i64(0)], inbounds=True)

    def field(self, obj: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
        return self.b.load(self.b.gep(obj, [const_i64(offset)], inbounds=True, source_etype=I8), typ=ty)

    def slot_field(self, k: int) -> ir.Value:
        return self.b.gep(self.slot, [const_i64(0), const_i64(k)], inbounds=True)

    def fail_unless(self, ok: ir.Value, code: int) -> None:
        """Continue if `ok`, else go to the shared failure exit with `code`."""
        cont = self.fn.append_basic_block("ok")
        self.b.cbranch(ok, cont, self.fail_bb)
        self.b.block.instructions[-1].set_weights([1000, 1])
        self.fail_code.add_incoming(ir.Constant(I64, code), self.b.block)
        self.b.position_at_end(cont)

    def python_error_unless(self, ok: ir.Value, code: int) -> None:
        """After a C API conversion whose error value is ambiguous (-1):
        unless `ok`, a pending Python error means the argument was wrong."""
        suspicious = self.fn.append_basic_block("check")
        cont = self.fn.append_basic_block("ok")
        self.b.cbranch(ok, cont, suspicious)
        self.b.position_at_end(suspicious)
        occurred = self.b.call(self.c_api("PyErr_Occurred", PTR, []), [])
        # The exception is kept and handed to the handler (RAISED), which
        # re-raises it unchanged when the object's own conversion raised it.
        no_error = self.b.icmp_unsigned("==", occurred, ir.Constant(PTR, None))
        self.b.cbranch(no_error, cont, self.raised_bb)
        self.raised_code.add_incoming(ir.Constant(I64, (code & ~15) | RAISED), self.b.block)
        self.b.position_at_end(cont)

    # -- the parts of the shim ---------------------------------------------------

    def build(self, written: set[int]) -> str:
        b = self.b
        b.store(const_i64(0), self.slot_field(0))
        nargs = self.fn.args[2]
        self.fail_unless(b.icmp_signed("==", nargs, const_i64(len(self.inputs))), STATUS_NARGS)
        objs = [b.load(b.gep(self.fn.args[1], [const_i64(k)], inbounds=True, source_etype=PTR), typ=PTR)
                for k in range(len(self.inputs))]
        # Every scalar is converted before any array is looked at: a
        # conversion may run Python code (`__float__`, `__index__`) that
        # resizes or frees an array, so no data pointer, size or stride may
        # be read before the last conversion.
        parts: dict[int, list[ir.Value]] = {}
        for k, t in enumerate(self.inputs):
            if not isinstance(t, MemRefType):
                parts[k] = [self.scalar(t, objs[k], k)]
        for k, t in enumerate(self.inputs):
            if isinstance(t, MemRefType):
                parts[k] = self.array(t, objs[k], k, k in written)
        call_args = [v for k in range(len(self.inputs)) for v in parts[k]]
        result = b.call(self.mt.functions[self.f.sym_name.data], call_args)
        stopped = b.icmp_unsigned("!=", b.load(self.slot_field(0), typ=I64), const_i64(0))
        self.fail_unless(b.not_(stopped), STATUS_STOPPED)
        b.ret(self.results(result))
        self.define_failure_exit()
        self.define_raised_exit()
        return self.name

    def scalar(self, t: Attribute, obj: ir.Value, k: int) -> ir.Value:
        b, code = self.b, (k << 4) | SCALAR
        if _is_float_type(t):
            x = b.call(self.c_api("PyFloat_AsDouble", ir.DoubleType(), [PTR]), [obj])
            self.python_error_unless(b.fcmp_unordered("!=", x, ir.Constant(ir.DoubleType(), -1.0)), code)
            return x if isinstance(t, Float64Type) else b.fptrunc(x, flat_types(t)[0])
        if _is_bool_type(t):
            # Only bool and numpy.bool_: truthiness of other objects is a bug.
            cls = self.field(obj, OB_TYPE, PTR)
            is_bool = b.or_(b.icmp_unsigned("==", cls, _object(id(bool))),
                            b.icmp_unsigned("==", cls, _object(id(np.bool_))))
            self.fail_unless(is_bool, code)
            truth = b.call(self.c_api("PyObject_IsTrue", I32, [PTR]), [obj])
            return b.icmp_signed(">", truth, ir.Constant(I32, 0))
        x = b.call(self.c_api("PyLong_AsLongLong", I64, [PTR]), [obj])
        self.python_error_unless(b.icmp_signed("!=", x, const_i64(-1)), code)
        width = flat_types(t)[0].width
        if width == 64:
            return x
        narrow = b.trunc(x, ir.IntType(width))
        self.fail_unless(b.icmp_signed("==", b.sext(narrow, I64), x), code)
        return narrow

    def array(self, t: MemRefType, obj: ir.Value, k: int, written: bool) -> list[ir.Value]:
        """Validate a numpy array against memref type `t`; its descriptor parts."""
        b = self.b
        cls = self.field(obj, OB_TYPE, PTR)
        ndarray = _object(id(np.ndarray))
        exact = b.icmp_unsigned("==", cls, ndarray)
        with b.if_then(b.not_(exact), likely=False):
            # Only classes whose elements are their memory (not a masked
            # array, whose mask the code would ignore): adpasses.native.arguments.
            honoured = [b.icmp_unsigned("==", cls, _object(id(c))) for c in HONOURED_ARRAY_TYPES[1:]]
            ok = honoured[0]
            for other in honoured[1:]:
                ok = b.or_(ok, other)
            self.fail_unless(ok, (k << 4) | NOT_ARRAY)
        shape = list(t.get_shape())
        rank = len(shape)
        self.fail_unless(b.icmp_signed("==", self.field(obj, NDIM, I32), ir.Constant(I32, rank)),
                         (k << 4) | RANK)
        dt = numpy_dtype(t.element_type)
        descr = self.field(obj, DESCR, PTR)
        dtype_ok = b.and_(
            b.and_(b.icmp_unsigned("==", self.field(descr, KIND, I8), ir.Constant(I8, ord(dt.kind))),
                   b.icmp_unsigned("==", self.field(descr, ELSIZE, I64), const_i64(dt.itemsize))),
            b.icmp_unsigned("!=", self.field(descr, BYTEORDER, I8), ir.Constant(I8, ord(NON_NATIVE))))
        self.fail_unless(dtype_ok, (k << 4) | DTYPE)
        flags = self.field(obj, FLAGS, I32)

        def has(bit: int) -> ir.Value:
            return b.icmp_unsigned("!=", b.and_(flags, ir.Constant(I32, bit)), ir.Constant(I32, 0))

        if has_identity_layout(t):
            self.fail_unless(has(C_CONTIGUOUS), (k << 4) | NOT_CONTIGUOUS)
            static_strides = [DYNAMIC_INDEX] * rank  # implied by C-contiguity
        else:
            static_strides, static_offset = memref_strides(t)
            if static_offset not in (0, DYNAMIC_INDEX):
                self.fail_unless(ir.Constant(ir.IntType(1), 0), (k << 4) | BAD_OFFSET)
        if written:
            self.fail_unless(has(WRITEABLE), (k << 4) | READ_ONLY)
        self.fail_unless(has(ALIGNED), (k << 4) | MISALIGNED)
        data = self.field(obj, DATA, PTR)
        sizes, strides = [], []
        if rank:
            dims_ptr, strides_ptr = self.field(obj, DIMS, PTR), self.field(obj, STRIDES, PTR)
            for d in range(rank):
                size = b.load(b.gep(dims_ptr, [const_i64(d)], inbounds=True, source_etype=I64), typ=I64)
                if shape[d] >= 0:
                    self.fail_unless(b.icmp_signed("==", size, const_i64(shape[d])), (k << 4) | SHAPE)
                sizes.append(size)
                byte_stride = b.load(b.gep(strides_ptr, [const_i64(d)], inbounds=True,
                                           source_etype=I64), typ=I64)
                # Aligned arrays have strides that are multiples of the itemsize.
                stride = (b.sdiv(byte_stride, const_i64(dt.itemsize))
                          if dt.itemsize > 1 else byte_stride)
                if static_strides[d] != DYNAMIC_INDEX:
                    # The lowering trusts strides in the type: check them
                    # (any stride is fine for a dimension of size <= 1).
                    same = b.icmp_signed("==", stride, const_i64(static_strides[d]))
                    self.fail_unless(b.or_(same, b.icmp_signed("<=", size, const_i64(1))),
                                     (k << 4) | BAD_STRIDES)
                strides.append(stride)
        return [data, const_i64(0), *sizes, *strides]

    def results(self, result: ir.Value) -> ir.Value:
        """The Python object for the function's results (None, one, a tuple)."""
        b = self.b
        outputs = list(self.f.function_type.outputs.data)
        values = [result] if len(outputs) == 1 else [b.extract_value(result, j) for j in range(len(outputs))]
        build_args: list[ir.Value] = []
        fmt = ""
        for t, v in zip(outputs, values):
            if _is_float_type(t):
                build_args.append(v if isinstance(t, Float64Type) else b.fpext(v, ir.DoubleType()))
                fmt += "d"
            elif _is_bool_type(t):
                build_args.append(b.call(self.c_api("PyBool_FromLong", PTR, [I64]), [b.zext(v, I64)]))
                fmt += "N"
            else:
                build_args.append(v if v.type.width == 64 else b.sext(v, I64))
                fmt += "L"
        fmt = f"({fmt})" if len(outputs) > 1 else fmt
        build = self.c_api("Py_BuildValue", PTR, [PTR], var_arg=True)
        return b.call(build, [self.cstring(fmt), *build_args])

    def define_failure_exit(self) -> None:
        """Call `self(code, *args)` (a CallErrors, which raises); return NULL."""
        b = self.b
        b.position_at_end(self.fail_bb)
        # A failed C API conversion left its own exception; ours replaces it.
        b.call(self.c_api("PyErr_Clear", ir.VoidType(), []), [])
        call = self.c_api("PyObject_CallFunction", PTR, [PTR, PTR], var_arg=True)
        self_obj, args, nargs = self.fn.args
        wrong_count = self.fn.append_basic_block("wrong_count")
        with_args = self.fn.append_basic_block("with_args")
        b.cbranch(b.icmp_signed("==", self.fail_code, const_i64(STATUS_NARGS)), wrong_count, with_args)
        b.position_at_end(wrong_count)
        r1 = b.call(call, [self_obj, self.cstring("LL"), self.fail_code, nargs])
        done = self.fn.append_basic_block("done")
        b.branch(done)
        b.position_at_end(with_args)
        stopped = self.fn.append_basic_block("stopped")
        bad_argument = self.fn.append_basic_block("bad_argument")
        b.cbranch(b.icmp_signed("==", self.fail_code, const_i64(STATUS_STOPPED)), stopped, bad_argument)
        # The compiled code stopped: pass the error slot's contents along.
        # The slot is shared by every compiled function of the process, and
        # another thread may call one (and stop) as soon as Python code runs.
        b.position_at_end(stopped)
        where = [b.load(self.slot_field(k), typ=I64) for k in range(1, 5)]
        r3 = b.call(call, [self_obj, self.cstring("LLLLL"), self.fail_code, *where])
        b.branch(done)
        b.position_at_end(bad_argument)
        objs = [b.load(b.gep(args, [const_i64(k)], inbounds=True, source_etype=PTR), typ=PTR)
                for k in range(len(self.inputs))]
        r2 = b.call(call, [self_obj, self.cstring("L" + "O" * len(objs)), self.fail_code, *objs])
        b.branch(done)
        b.position_at_end(done)
        r = b.phi(PTR)
        r.add_incoming(r1, wrong_count)
        r.add_incoming(r2, bad_argument)
        r.add_incoming(r3, stopped)
        null = ir.Constant(PTR, None)
        with b.if_then(b.icmp_unsigned("!=", r, null), likely=False):
            # The handler always raises; never return a value from a failure.
            b.call(self.c_api("Py_DecRef", ir.VoidType(), [PTR]), [r])
            exc = b.load(self.mt.global_ref("PyExc_RuntimeError", PTR), typ=PTR)
            b.call(self.c_api("PyErr_SetString", ir.VoidType(), [PTR, PTR]),
                   [exc, self.cstring("adpasses: the error handler returned")])
        b.ret(null)


    def define_raised_exit(self) -> None:
        """A scalar conversion raised: fetch the exception and call
        `self(code, exception, *args)` (a CallErrors, which raises either
        that exception or its own); return NULL."""
        b = self.b
        b.position_at_end(self.raised_bb)
        parts = [b.alloca(PTR) for _ in range(3)]  # type, value, traceback
        b.call(self.c_api("PyErr_Fetch", ir.VoidType(), [PTR, PTR, PTR]), parts)
        b.call(self.c_api("PyErr_NormalizeException", ir.VoidType(), [PTR, PTR, PTR]), parts)
        exc_type, exc, tb = (b.load(p, typ=PTR) for p in parts)
        null = ir.Constant(PTR, None)
        with b.if_then(b.icmp_unsigned("!=", tb, null)):
            b.call(self.c_api("PyException_SetTraceback", I32, [PTR, PTR]), [exc, tb])
        self_obj, args, _ = self.fn.args
        objs = [b.load(b.gep(args, [const_i64(k)], inbounds=True, source_etype=PTR), typ=PTR)
                for k in range(len(self.inputs))]
        call = self.c_api("PyObject_CallFunction", PTR, [PTR, PTR], var_arg=True)
        r = b.call(call, [self_obj, self.cstring("LO" + "O" * len(objs)), self.raised_code, exc, *objs])
        decref = self.c_api("Py_DecRef", ir.VoidType(), [PTR])  # Py_XDECREF: NULL is fine
        for part in (exc_type, exc, tb):
            b.call(decref, [part])
        with b.if_then(b.icmp_unsigned("!=", r, null), likely=False):
            b.call(decref, [r])
            runtime_error = b.load(self.mt.global_ref("PyExc_RuntimeError", PTR), typ=PTR)
            b.call(self.c_api("PyErr_SetString", ir.VoidType(), [PTR, PTR]),
                   [runtime_error, self.cstring("adpasses: the error handler returned")])
        b.ret(null)


def _object(address: int) -> ir.Value:
    """A constant pointer to a Python object of this process (types live as
    long as the process; the compiled module never leaves it)."""
    return ir.Constant(I64, address).inttoptr(PTR)


def add_entry_shim(mt: ModuleTranslator, f: func.FuncOp) -> str:
    """Define `__py_entry_<f>`; return its name."""
    return _Shim(mt, f).build(written_parameters(f))


# -- the Python side ------------------------------------------------------------


@dataclass
class Parameter:
    name: str
    type: Attribute


def parameters(f: func.FuncOp) -> list[Parameter]:
    """Parameters named by their MLIR name hints (`%x` -> x), else argN."""
    names: list[str] = []
    for i, arg in enumerate(f.body.blocks[0].args):
        hint = arg.name_hint
        ok = (hint and hint.isidentifier() and not keyword.iskeyword(hint)
              and hint not in names and not hint.startswith("_"))
        names.append(hint if ok else f"arg{i}")
    return [Parameter(n, t) for n, t in zip(names, f.function_type.inputs.data)]


def converts_itself(value: object, t: Attribute) -> bool:
    """Whether converting `value` to a scalar of type `t` calls a method of
    its class (what PyFloat_AsDouble / PyLong_AsLongLong call): `__float__`
    or `__index__` for a float parameter, `__index__` for an integer one.
    Floats and ints (and their subclasses) are read directly."""
    cls = type(value)
    if _is_float_type(t):
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
        if isinstance(value, (int, np.integer)) and not _is_float_type(t) and not _is_bool_type(t):
            raise OverflowError(f"{self._param(k)} = {value} does not fit in {t}")
        python = "float" if _is_float_type(t) else "bool" if _is_bool_type(t) else "int"
        article = "an" if str(t)[0] in "aeiou" else "a"
        raise TypeError(f"{self._param(k)} must be {article} {t} scalar, got "
                        f"{type(value).__name__} (pass a Python {python})")

    def conversion_raised(self, k: int, value: object, exc: BaseException) -> None:
        """Converting scalar argument k raised `exc`. If the object's own
        conversion (`__float__`, `__index__`) raised it, `exc` propagates
        unchanged; a plain int that does not fit, or an object that cannot
        be converted at all, gets the message naming the parameter."""
        t = self.params[k].type
        if isinstance(exc, OverflowError) and isinstance(value, (int, np.integer)) and not _is_float_type(t):
            self.scalar(k, value)
        if converts_itself(value, t):
            raise exc
        self.scalar(k, value)

    def array_problem(self, k: int, problem: int, value: np.ndarray) -> None:
        t = self.params[k].type
        shape = list(t.get_shape())
        if problem in (BAD_STRIDES, BAD_OFFSET):
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
        """The compiled code stopped: an out-of-bounds access, a division by
        zero, a shadow whose shape is not its primal's (axis <= -2, see
        adpasses.lowering.core.FunctionTranslator.fail), or one of the
        adpasses.core.stop_codes (allocation sizes, float-to-int conversions).
        The entry passes what the error slot held when the call returned
        (`ERROR_SLOT[1:5]`): another thread's call may have changed it since."""
        ERROR_SLOT[0] = 0
        where = self.check_sites[site] if 0 <= site < len(self.check_sites) else "?"
        if axis in stop_codes.CODES:  # sizes, allocations, float-to-int conversions
            raise stop_codes.exception(axis, where, index, size)
        if axis == -1:
            raise ZeroDivisionError(f"integer division or modulo by zero (at {where})")
        if axis <= -2:  # ad.shadow_check: the site's text is the message
            text = where.replace("{index}", str(index)).replace("{dim}", str(-2 - axis))
            raise ValueError(f"{self.fname}(): {text.replace('{size}', str(size))}")
        raise IndexError(index_error_text(index, axis, size, where))


def index_error_text(index: int, axis: int, size: int, where: str) -> str:
    """numpy's words for an out-of-bounds index, the location, and the valid
    indices. An axis code with PY_INDEX_AXIS added comes from an access with
    Python's negative indices: its index was wrapped (`i + size` for a
    negative `i`), so a negative index that failed is reported as written."""
    python = axis >= PY_INDEX_AXIS
    if python:
        axis -= PY_INDEX_AXIS
        if index < 0:
            index -= size
    if size <= 0:
        valid = f"axis {axis} is empty: no index is valid"
    elif python:
        valid = f"valid indices are -{size} to {size - 1}"
    else:
        valid = f"valid indices are 0 to {size - 1}"
    return f"index {index} is out of bounds for axis {axis} with size {size} (at {where}); {valid}"


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


def make_caller(name: str, f: func.FuncOp, shim_address: int, function_address: int,
                check_sites: list[str], code: object = None) -> Callable:
    """The Python callable for compiled `f`: a two-line Python function with
    `f`'s parameter names calling the builtin shim, which checks everything.
    `code` owns the machine code (`llvm_jit.MachineCode`).

    Attributes: `raw` (the builtin: positional arguments only, same checks,
    about 100 ns less per call), `address` (the compiled function, internal
    ABI: see docs/calling_convention.md; valid while the callable lives),
    `parameters`."""
    params = parameters(f)
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
