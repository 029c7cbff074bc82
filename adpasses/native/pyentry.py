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
not. Measured costs are in docs/calling_convention.md. That Python side
(`CallErrors`, `make_caller`, the field offsets) is
`adpasses.native.callers`, which imports no xDSL. Python type objects the
shims compare with (`ndarray`, `bool`) are external symbols, not constant
addresses: the object code is the same in every process.

If numpy's object layout ever differs from the one probed here, callers are
built by `adpasses.native.ctypes_entry` instead (slower, all checks in Python).
"""

from __future__ import annotations

import keyword

import numpy as np
from llvmlite import ir
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, Float64Type, MemRefType, ModuleOp
from xdsl.ir import Attribute, OpResult, SSAValue

from adpasses.analysis.memory_writes import WriteEffects, is_structured_op
from adpasses.analysis.memref_views import memory_objects
from adpasses.core.types import has_identity_layout, memref_strides
from adpasses.lowering import thread_state
from adpasses.lowering.core import I8, I32, I64, PTR, ModuleTranslator, const_i64, flat_types, opaque
from adpasses.lowering.names import ascii_symbol
from adpasses.native.arguments import HONOURED_ARRAY_TYPES
from adpasses.native.array_results import ArrayArgument, ResultBuilder
from adpasses.native.callers import (  # noqa: F401 (re-exported: the shims' status codes and fields)
    ALIGNED,
    BAD_OFFSET,
    BAD_STRIDES,
    BYTEORDER,
    C_CONTIGUOUS,
    DATA,
    DESCR,
    DIMS,
    DTYPE,
    ELSIZE,
    FAST_PATH,
    FLAGS,
    KIND,
    MISALIGNED,
    NDIM,
    NON_NATIVE,
    NOT_ARRAY,
    NOT_CONTIGUOUS,
    OB_TYPE,
    RAISED,
    RANK,
    READ_ONLY,
    SCALAR,
    SHAPE,
    STATUS_NARGS,
    STATUS_STOPPED,
    STRIDES,
    WRITEABLE,
    CallErrors,
    Parameter,
    is_bool_type,
    is_float_type,
    make_caller,
    numpy_dtype,
    numpy_layout_ok,
)
from adpasses.native.runtime import python_object_symbol


def written_parameters(f: func.FuncOp) -> set[int]:
    """Indices of memref parameters whose memory the function may write:
    stored to or copied into through any view, an output of a linalg op,
    or passed to a callee that may write that argument. A callee in the
    module is judged from its body (`WriteEffects`: the arguments it writes,
    through its own calls), so an array a helper only reads stays unwritten,
    as it is when the helper is inlined (grad then gives it no throwaway
    shadow); an external callee may write every array it is given."""
    args = list(f.body.blocks[0].args)  # multi-block bodies: the entry block
    written: set[int] = set()
    module = f
    while module.parent_op() is not None:
        module = module.parent_op()  # type: ignore[assignment]
    effects = WriteEffects(module)

    def mark(value: SSAValue) -> None:
        for obj in memory_objects(value):  # through views and run-time choices (arith.select)
            if obj in args:
                written.add(args.index(obj))
            elif isinstance(obj, OpResult) and isinstance(obj.op, func.CallOp):
                # An array a call returns may be (a view of) one it was given.
                for a in obj.op.arguments:
                    if isinstance(a.type, MemRefType):
                        mark(a)

    for op in f.walk():
        if isinstance(op, memref.StoreOp):
            mark(op.memref)
        elif isinstance(op, memref.CopyOp):
            mark(op.destination)
        elif isinstance(op, func.CallOp) or is_structured_op(op):
            for target in effects.targets(op):
                if target.memref is not None:
                    mark(target.memref)
    return written


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
        # Where a stop's site, index, axis and size are copied from the
        # thread's error slot before the GIL is taken back.
        self.stop = opaque(self.b.alloca(ir.ArrayType(I64, 4)))
        self.array_arguments: list[ArrayArgument] = []

    # -- small helpers ----------------------------------------------------------

    def c_api(self, name: str, ret: ir.Type, params: list[ir.Type], var_arg: bool = False) -> ir.Function:
        return self.mt.declare(name, ret, params, var_arg)

    def cstring(self, text: str) -> ir.Value:
        return self.b.gep(self.mt.string(text), [const_i64(0), const_i64(0)], inbounds=True)

    def field(self, obj: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
        return self.b.load(self.b.gep(obj, [const_i64(offset)], inbounds=True, source_etype=I8), typ=ty)

    def python_object(self, obj: object) -> ir.Value:
        """The address of a Python type object of this process, as an
        external symbol the JIT linker resolves (adpasses.native.runtime):
        never a constant, so that the object code does not depend on where
        this process put the type, and the disk cache can load it in another
        (adpasses.native.object_cache)."""
        return self.mt.global_ref(python_object_symbol(obj), I8)

    def entry_alloca(self, ty: ir.Type) -> ir.Value:
        """A stack slot made at the start of the shim (not in a branch)."""
        entry = self.fn.entry_basic_block
        builder = ir.IRBuilder(entry)
        builder.position_at_start(entry)
        return opaque(builder.alloca(ty))

    def stop_field(self, k: int) -> ir.Value:
        return self.b.gep(self.stop, [const_i64(0), const_i64(k)], inbounds=True,
                          source_etype=ir.ArrayType(I64, 4))

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

    def build(self, written: set[int], release_gil: bool) -> str:
        b = self.b
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
                self.array_arguments.append(ArrayArgument(objs[k], t, parts[k]))
        call_args = [v for k in range(len(self.inputs)) for v in parts[k]]
        # This thread's error slot, made on its first call: before the GIL
        # is released, so that a failed allocation raises MemoryError here.
        slot = b.call(thread_state.entry_slot(self.mt), [])
        with b.if_then(b.icmp_unsigned("==", slot, ir.Constant(PTR, None)), likely=False):
            b.call(self.c_api("PyErr_NoMemory", PTR, []), [])
            b.ret(ir.Constant(PTR, None))
        # From here to PyEval_RestoreThread nothing touches a Python object:
        # every argument has been read (the caller's references keep the
        # arrays alive), and results and errors are built after.
        tstate = b.call(self.c_api("PyEval_SaveThread", PTR, []), []) if release_gil else None
        result = b.call(self.mt.functions[self.f.sym_name.data], call_args)
        stopped = thread_state.take_stop(self.mt, b, slot, self.stop)
        if tstate is not None:
            b.call(self.c_api("PyEval_RestoreThread", ir.VoidType(), [PTR]), [tstate])
        self.fail_unless(b.not_(stopped), STATUS_STOPPED)
        b.ret(self.results(result))
        self.define_failure_exit()
        self.define_raised_exit()
        return self.name

    def scalar(self, t: Attribute, obj: ir.Value, k: int) -> ir.Value:
        b, code = self.b, (k << 4) | SCALAR
        if is_float_type(t):
            x = b.call(self.c_api("PyFloat_AsDouble", ir.DoubleType(), [PTR]), [obj])
            self.python_error_unless(b.fcmp_unordered("!=", x, ir.Constant(ir.DoubleType(), -1.0)), code)
            return x if isinstance(t, Float64Type) else b.fptrunc(x, flat_types(t)[0])
        if is_bool_type(t):
            # Only bool and numpy.bool_: truthiness of other objects is a bug.
            cls = self.field(obj, OB_TYPE, PTR)
            is_bool = b.or_(b.icmp_unsigned("==", cls, self.python_object(bool)),
                            b.icmp_unsigned("==", cls, self.python_object(np.bool_)))
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
        ndarray = self.python_object(np.ndarray)
        exact = b.icmp_unsigned("==", cls, ndarray)
        with b.if_then(b.not_(exact), likely=False):
            # Only classes whose elements are their memory (not a masked
            # array, whose mask the code would ignore): adpasses.native.arguments.
            honoured = [b.icmp_unsigned("==", cls, self.python_object(c)) for c in HONOURED_ARRAY_TYPES[1:]]
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
        """The Python object for the function's results (None, one, a
        tuple; arrays for memrefs: adpasses.native.array_results)."""
        outputs = list(self.f.function_type.outputs.data)
        if not outputs:
            return self.b.call(self.c_api("Py_BuildValue", PTR, [PTR], var_arg=True), [self.cstring("")])
        return ResultBuilder(self, self.array_arguments).build(outputs, result)

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
        # The compiled code stopped: pass along what it recorded in this
        # thread's error slot (copied out before the GIL was taken back).
        b.position_at_end(stopped)
        where = [b.load(self.stop_field(k), typ=I64) for k in range(4)]
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




def add_entry_shim(mt: ModuleTranslator, f: func.FuncOp) -> str:
    """Define `__py_entry_<f>`; return its name."""
    return _Shim(mt, f).build(written_parameters(f), releases_gil(mt.module, f))


# Ops whose work grows with their operands: a function containing one (or a
# call of a function defined in the module, which may) runs long enough for
# releasing the GIL to pay.
_LOOPS = (scf.ForOp, scf.WhileOp, scf.ParallelOp, memref.CopyOp)


def releases_gil(module: ModuleOp, f: func.FuncOp) -> bool:
    """Whether f's entry releases the GIL around the compiled call: unless
    f is straight-line code (one block, no loop, no memref.copy, no call of
    a function with a body), whose whole run costs less than giving the GIL
    up and taking it back (about 50 ns: docs/calling_convention.md)."""
    defined = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks}
    if len(f.body.blocks) > 1:
        return True
    for op in f.walk():
        if isinstance(op, _LOOPS) or any(len(region.blocks) > 1 for region in op.regions):
            return True
        if isinstance(op, func.CallOp) and op.callee.root_reference.data in defined:
            return True
    return False


# -- the Python side: adpasses.native.callers ---------------------------------


def parameters(f: func.FuncOp) -> list[Parameter]:
    """Parameters named by their MLIR name hints (`%x` -> x), else argN."""
    names: list[str] = []
    for i, arg in enumerate(f.body.blocks[0].args):
        hint = arg.name_hint
        ok = (hint and hint.isidentifier() and not keyword.iskeyword(hint)
              and hint not in names and not hint.startswith("_"))
        names.append(hint if ok else f"arg{i}")
    return [Parameter(n, t) for n, t in zip(names, f.function_type.inputs.data)]
