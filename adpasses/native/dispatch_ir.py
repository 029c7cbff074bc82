"""LLVM IR of the per-call dispatch builtins (see dispatch.py).

All three are CPython METH_FASTCALL functions
`PyObject *f(PyObject *self, PyObject *const *args, Py_ssize_t nargs)` that
read Python floats, ints, bools and numpy arrays straight from their object
layout: `ob_type`, numpy's `PyArrayObject_fields` (data, nd, dimensions,
strides, descr, flags) and `PyArray_Descr` (type_num, byteorder, elsize).
These offsets are stable parts of the CPython / numpy 2 ABI on 64-bit
platforms; `check_layouts()` verifies them on probe objects at import.
"""

from __future__ import annotations

import ctypes

import numpy as np
from llvmlite import ir

from adpasses.core.llvm_loops import counted_loop
from adpasses.native.runtime import NUMPY_SCALARS, python_object_symbol

I8, I32, I64, PTR = ir.IntType(8), ir.IntType(32), ir.IntType(64), ir.PointerType()

OB_TYPE = 8
DATA, NDIM, DIMS, STRIDES, DESCR, FLAGS = 16, 24, 32, 40, 56, 64  # PyArrayObject_fields
BYTEORDER, TYPE_NUM, ELSIZE = 26, 28, 40                          # PyArray_Descr (numpy 2)
C_CONTIGUOUS = 0x1
DTYPE_CODES = {12: 0, 11: 1, 7: 2, 9: 2, 5: 3, 0: 4}  # numpy type_num -> code (f64 f32 i64 i32 bool)
MAX_ARGS = 6  # 10 bits of code per argument, the count in bits 60..63
SCALAR_CODES = {np.float64: 4, np.float32: 5, np.int64: 6, np.int32: 7, np.bool_: 8}
"""Codes of numpy scalar arguments (Python's float, int, bool: 1, 2, 3;
arrays: 16 and up)."""


def check_layouts() -> None:
    a = np.zeros((3, 5))[:, ::2]
    base = id(a)
    array_ok = (
        ctypes.c_void_p.from_address(base + OB_TYPE).value == id(np.ndarray)
        and ctypes.c_void_p.from_address(base + DATA).value == a.ctypes.data
        and ctypes.c_int.from_address(base + NDIM).value == 2
        and list((ctypes.c_int64 * 2).from_address(ctypes.c_void_p.from_address(base + DIMS).value)) == [3, 3]
        and list((ctypes.c_int64 * 2).from_address(ctypes.c_void_p.from_address(base + STRIDES).value))
        == list(a.strides)
        and ctypes.c_void_p.from_address(base + DESCR).value == id(a.dtype)
        and ctypes.c_int.from_address(base + FLAGS).value == a.flags.num
    )
    descr_ok = all(
        ctypes.c_int.from_address(id(dt) + TYPE_NUM).value == dt.num
        and ctypes.c_int64.from_address(id(dt) + ELSIZE).value == dt.itemsize
        and chr(ctypes.c_char.from_address(id(dt) + BYTEORDER).value[0]) == dt.byteorder
        for dt in (np.dtype(np.float64), np.dtype(np.float32), np.dtype(">f8"))
    )
    if not (array_ok and descr_ok):
        raise RuntimeError(f"numpy {np.__version__}'s object layout is not the one adpasses reads; "
                           "please report this with your numpy version")


def _c(v: int, t: ir.Type = I64) -> ir.Constant:
    return ir.Constant(t, v)


def _field(b: ir.IRBuilder, obj: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
    return b.load(b.gep(obj, [_c(offset)], inbounds=True, source_etype=I8), typ=ty)


def _ndarray_type(module: ir.Module) -> ir.Value:
    return _python_object(module, np.ndarray)


def _python_object(module: ir.Module, obj: object) -> ir.Value:
    """A Python type object, by its symbol (adpasses.native.runtime): no
    address of this process is in the code, which the disk cache may load
    in another one."""
    name = python_object_symbol(obj)
    g = module.globals.get(name)
    if g is None:
        g = ir.GlobalVariable(module, I8, name)
        g.linkage = "external"
    return g


def _builtin(module: ir.Module, name: str) -> ir.Function:
    return ir.Function(module, ir.FunctionType(PTR, [PTR, PTR, I64]), name)


def _code_of(module: ir.Module) -> ir.Function:
    """`i64 code_of(args, nargs)`: the signature code, 0 for the slow path."""
    fn = ir.Function(module, ir.FunctionType(I64, [PTR, I64]), "adpasses_code_of")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    types = {}
    for name in ("PyFloat_Type", "PyLong_Type", "PyBool_Type"):
        types[name] = ir.GlobalVariable(module, I8, name)
        types[name].linkage = "external"
    array_type = _ndarray_type(module)
    # A Python float, int or bool has the code of its kind (1, 2, 3); a
    # numpy scalar that converts without running Python code
    # (runtime.NUMPY_SCALARS) a code of its own (SCALAR_CODES): jit compiles
    # a version for it (NEP 50: strong; a numpy scalar result), and grad
    # registers its fast path under it too.
    scalar_classes = [(1, types["PyFloat_Type"]), (2, types["PyLong_Type"]), (3, types["PyBool_Type"])]
    scalar_classes += [(SCALAR_CODES[c], _python_object(module, c)) for kind in NUMPY_SCALARS.values() for c in kind]
    args, nargs = fn.args
    slow = fn.append_basic_block("slow")
    body = fn.append_basic_block("body")
    b.cbranch(b.icmp_signed(">", nargs, _c(MAX_ARGS)), slow, body)
    b.position_at_end(slow)
    b.ret(_c(0))
    b.position_at_end(body)
    code: ir.Value = _c(0)
    for k in range(MAX_ARGS):
        # The code of argument k, computed only when it exists.
        before = b.block
        compute = fn.append_basic_block(f"arg{k}")
        done = fn.append_basic_block(f"arg{k}.done")
        b.cbranch(b.icmp_signed(">", nargs, _c(k)), compute, done)
        b.position_at_end(compute)
        obj = b.load(b.gep(args, [_c(k)], inbounds=True, source_etype=PTR), typ=PTR)
        otype = _field(b, obj, OB_TYPE, PTR)
        scalar: ir.Value = _c(0)
        for code_, cls in scalar_classes:
            scalar = b.select(b.icmp_unsigned("==", otype, cls), _c(code_), scalar)
        array_bb = fn.append_basic_block(f"arg{k}.array")
        merge = fn.append_basic_block(f"arg{k}.merge")
        scalar_end = b.block
        b.cbranch(b.icmp_unsigned("==", otype, array_type), array_bb, merge)
        b.position_at_end(array_bb)
        descr = _field(b, obj, DESCR, PTR)
        type_num = _field(b, descr, TYPE_NUM, I32)
        dtype_code: ir.Value = _c(-1)
        for num, c in DTYPE_CODES.items():
            dtype_code = b.select(b.icmp_signed("==", type_num, _c(num, I32)), _c(c), dtype_code)
        native = b.icmp_unsigned("!=", _field(b, descr, BYTEORDER, I8), _c(ord(">"), I8))
        ndim = b.sext(_field(b, obj, NDIM, I32), I64)
        flags = _field(b, obj, FLAGS, I32)
        contiguous = b.zext(b.icmp_unsigned("!=", b.and_(flags, _c(C_CONTIGUOUS, I32)), _c(0, I32)), I64)
        array_code = b.add(b.add(_c(16), b.mul(dtype_code, _c(64))), b.add(b.mul(ndim, _c(2)), contiguous))
        ok = b.and_(b.and_(native, b.icmp_signed(">=", dtype_code, _c(0))), b.icmp_signed("<", ndim, _c(24)))
        array_code = b.select(ok, array_code, _c(0))
        array_end = b.block
        b.branch(merge)
        b.position_at_end(merge)
        arg_code = b.phi(I64)
        arg_code.add_incoming(scalar, scalar_end)
        arg_code.add_incoming(array_code, array_end)
        with b.if_then(b.icmp_unsigned("==", arg_code, _c(0)), likely=False):
            b.ret(_c(0))
        shifted = b.or_(b.shl(code, _c(10)), arg_code)
        compute_end = b.block
        b.branch(done)
        b.position_at_end(done)
        phi = b.phi(I64)
        phi.add_incoming(code, before)
        phi.add_incoming(shifted, compute_end)
        code = phi
    b.ret(b.or_(code, b.shl(nargs, _c(60))))
    return fn


def signature_code_function(module: ir.Module, code_of: ir.Function) -> None:
    """`signature_code(*args)`: the code as a Python int."""
    fn = _builtin(module, "adpasses_signature_code")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    from_long = ir.Function(module, ir.FunctionType(PTR, [I64]), "PyLong_FromLongLong")
    b.ret(b.call(from_long, [b.call(code_of, [fn.args[1], fn.args[2]])]))


def dispatch_function(module: ir.Module, code_of: ir.Function) -> None:
    """`table(*args)` for a builtin whose `self` is an int64 numpy array
    [count, fallback, code_0, target_0, code_1, target_1, ...]: calls the
    target registered for the arguments' signature code, else the fallback
    (targets and fallback are PyObject pointers kept alive by the owner).
    METH_FASTCALL | METH_KEYWORDS: a call with keywords (`kwnames` not
    NULL) always goes to the fallback, keywords passed through."""
    fn = ir.Function(module, ir.FunctionType(PTR, [PTR, PTR, I64, PTR]), "adpasses_dispatch")
    table_obj, args, nargs, kwnames = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    vectorcall = ir.Function(module, ir.FunctionType(PTR, [PTR, PTR, I64, PTR]), "PyObject_Vectorcall")
    table = _field(b, table_obj, DATA, PTR)

    def entry(k: ir.Value) -> ir.Value:
        return b.load(b.gep(table, [k], inbounds=True, source_etype=I64), typ=I64)

    code = b.call(code_of, [args, nargs])
    no_keywords = b.icmp_unsigned("==", kwnames, ir.Constant(PTR, None))
    code = b.select(no_keywords, code, _c(0))
    count = b.select(b.icmp_unsigned("==", code, _c(0)), _c(0), entry(_c(0)))
    found = b.alloca(I64)
    b.store(entry(_c(1)), found)  # the fallback unless a code matches
    call = fn.append_basic_block("call")
    with counted_loop(b, count, "scan") as loop:
        slot = b.add(_c(2), b.mul(loop.index, _c(2)))
        with b.if_then(b.icmp_unsigned("==", entry(slot), code)):
            b.store(entry(b.add(slot, _c(1))), found)
            b.branch(call)  # the first match wins
    b.branch(call)
    b.position_at_end(call)
    target = b.inttoptr(b.load(found, typ=I64), PTR)
    b.ret(b.call(vectorcall, [target, args, nargs, kwnames]))


def overlap_function(module: ir.Module) -> None:
    """`arrays_overlap(*args)`: Py_True if the byte ranges [lowest, highest
    element + itemsize) of two non-empty numpy arrays among args intersect."""
    fn = _builtin(module, "adpasses_arrays_overlap")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    bool_from_long = ir.Function(module, ir.FunctionType(PTR, [I64]), "PyBool_FromLong")
    array_type = _ndarray_type(module)
    args, nargs = fn.args[1], fn.args[2]
    # Two i64 per argument: on the stack for up to STACK_ARGS arguments, on
    # the heap beyond (a call with a million arguments must not move the
    # stack pointer 16 MB past its guard page).
    small = b.icmp_unsigned("<=", nargs, _c(STACK_ARGS))
    stack_buf = b.alloca(I64, size=_c(2 * STACK_ARGS))
    malloc = ir.Function(module, ir.FunctionType(PTR, [I64]), "PyMem_RawMalloc")
    free = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), "PyMem_RawFree")
    heap_buf = ir.Constant(PTR, None)
    with b.if_then(b.not_(small), likely=False) as _:
        heap_allocated = b.call(malloc, [b.mul(nargs, _c(16))])  # nargs < 2**60: CPython's limit
        with b.if_then(b.icmp_unsigned("==", heap_allocated, ir.Constant(PTR, None)), likely=False):
            b.ret(b.call(ir.Function(module, ir.FunctionType(PTR, []), "PyErr_NoMemory"), []))
        heap_block = b.block
    joined = b.phi(PTR)
    joined.add_incoming(heap_buf, fn.entry_basic_block)
    joined.add_incoming(heap_allocated, heap_block)
    lo_buf = b.select(small, stack_buf, joined)
    hi_buf = b.gep(lo_buf, [b.select(small, _c(STACK_ARGS), nargs)], inbounds=True, source_etype=I64)
    count_slot, lo_slot, hi_slot, empty_slot, found = (b.alloca(I64) for _ in range(5))
    b.store(_c(0), count_slot)
    with counted_loop(b, nargs, "args") as k_loop:
        k = k_loop.index
        obj = b.load(b.gep(args, [k], inbounds=True, source_etype=PTR), typ=PTR)
        with b.if_then(b.icmp_unsigned("==", _field(b, obj, OB_TYPE, PTR), array_type)):
            data = b.ptrtoint(_field(b, obj, DATA, PTR), I64)
            ndim = b.sext(_field(b, obj, NDIM, I32), I64)
            dims, strides = _field(b, obj, DIMS, PTR), _field(b, obj, STRIDES, PTR)
            itemsize = _field(b, _field(b, obj, DESCR, PTR), ELSIZE, I64)
            b.store(data, lo_slot)
            b.store(b.add(data, itemsize), hi_slot)
            b.store(_c(0), empty_slot)
            with counted_loop(b, ndim, "dims") as d_loop:
                d = d_loop.index
                n = b.load(b.gep(dims, [d], inbounds=True, source_etype=I64), typ=I64)
                s = b.load(b.gep(strides, [d], inbounds=True, source_etype=I64), typ=I64)
                span = b.mul(b.sub(n, _c(1)), s)
                neg = b.icmp_signed("<", span, _c(0))
                b.store(b.add(b.load(lo_slot, typ=I64), b.select(neg, span, _c(0))), lo_slot)
                b.store(b.add(b.load(hi_slot, typ=I64), b.select(neg, _c(0), span)), hi_slot)
                with b.if_then(b.icmp_signed("==", n, _c(0))):
                    b.store(_c(1), empty_slot)
            with b.if_then(b.icmp_signed("==", b.load(empty_slot, typ=I64), _c(0))):
                c = b.load(count_slot, typ=I64)
                b.store(b.load(lo_slot, typ=I64), b.gep(lo_buf, [c], inbounds=True, source_etype=I64))
                b.store(b.load(hi_slot, typ=I64), b.gep(hi_buf, [c], inbounds=True, source_etype=I64))
                b.store(b.add(c, _c(1)), count_slot)
    count = b.load(count_slot, typ=I64)
    b.store(_c(0), found)
    with counted_loop(b, count, "pairs") as i_loop:
        i = i_loop.index
        with counted_loop(b, i, "pairs.inner") as j_loop:
            j = j_loop.index
            lo_i = b.load(b.gep(lo_buf, [i], inbounds=True, source_etype=I64), typ=I64)
            hi_i = b.load(b.gep(hi_buf, [i], inbounds=True, source_etype=I64), typ=I64)
            lo_j = b.load(b.gep(lo_buf, [j], inbounds=True, source_etype=I64), typ=I64)
            hi_j = b.load(b.gep(hi_buf, [j], inbounds=True, source_etype=I64), typ=I64)
            with b.if_then(b.and_(b.icmp_signed("<", lo_i, hi_j), b.icmp_signed("<", lo_j, hi_i))):
                b.store(_c(1), found)
    with b.if_then(b.not_(small), likely=False):
        b.call(free, [joined])
    b.ret(b.call(bool_from_long, [b.load(found, typ=I64)]))


STACK_ARGS = 64


def dispatch_module() -> ir.Module:
    module = ir.Module("adpasses_dispatch")
    code_of = _code_of(module)
    signature_code_function(module, code_of)
    dispatch_function(module, code_of)
    overlap_function(module)
    return module
