"""Per-call dispatch helpers, compiled once per process as CPython builtins.

- `signature_code(*args)`: a small int naming the argument types (float,
  int, bool, or array dtype, rank and C-contiguity), 10 bits per argument,
  read from the objects directly; 0 when some argument needs the slow path
  (more than 6 arguments, numpy scalars, other dtypes, non-native byte
  order). Reading `a.flags.c_contiguous` from Python alone costs more than
  this whole call.
- `arrays_overlap(*args)`: True if the memory ranges of two of the numpy
  arrays among the arguments intersect (other arguments are ignored).

Both are generated as LLVM IR (see pyentry for the numpy object layout).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from adpasses.pyentry import DATA, DIMS, FLAGS, NDIM, STRIDES, C_CONTIGUOUS, builtin_function

I8, I32, I64, PTR = ir.IntType(8), ir.IntType(32), ir.IntType(64), ir.PointerType()

DTYPE_CODES = {12: 0, 11: 1, 7: 2, 9: 2, 5: 3, 0: 4}  # numpy type_num -> code (f64 f32 i64 i32 bool)
DESCR_OFFSET, TYPE_NUM, BYTEORDER, ELSIZE = 56, 28, 26, 40
MAX_ARGS = 6


def _c(v: int, t: ir.Type = I64) -> ir.Constant:
    return ir.Constant(t, v)


def _field(b: ir.IRBuilder, obj: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
    return b.load(b.gep(obj, [_c(offset)], inbounds=True, source_etype=I8), typ=ty)


def _signature_function(module: ir.Module) -> None:
    fn = ir.Function(module, ir.FunctionType(PTR, [PTR, PTR, I64]), "adpasses_signature_code")
    entry = fn.append_basic_block("entry")
    b = ir.IRBuilder(entry)
    from_long = ir.Function(module, ir.FunctionType(PTR, [I64]), "PyLong_FromLongLong")
    float_type = ir.GlobalVariable(module, I8, "PyFloat_Type")
    long_type = ir.GlobalVariable(module, I8, "PyLong_Type")
    bool_type = ir.GlobalVariable(module, I8, "PyBool_Type")
    for g in (float_type, long_type, bool_type):
        g.linkage = "external"
    array_type = b.inttoptr(_c(id(np.ndarray)), PTR)
    args, nargs = fn.args[1], fn.args[2]
    slow = fn.append_basic_block("slow")
    too_many = b.icmp_signed(">", nargs, _c(MAX_ARGS))
    body = fn.append_basic_block("body")
    b.cbranch(too_many, slow, body)
    b.position_at_end(slow)
    b.ret(b.call(from_long, [_c(0)]))
    b.position_at_end(body)
    code: ir.Value = _c(0)
    for k in range(MAX_ARGS):
        present = b.icmp_signed(">", nargs, _c(k))
        # Compute the code of argument k only when it exists.
        cur = b.block
        compute = fn.append_basic_block(f"arg{k}")
        done = fn.append_basic_block(f"arg{k}.done")
        b.cbranch(present, compute, done)
        b.position_at_end(compute)
        obj = b.load(b.gep(args, [_c(k)], inbounds=True, source_etype=PTR), typ=PTR)
        otype = _field(b, obj, 8, PTR)
        is_float = b.icmp_unsigned("==", otype, float_type)
        is_bool = b.icmp_unsigned("==", otype, bool_type)
        is_int = b.icmp_unsigned("==", otype, long_type)
        is_array = b.icmp_unsigned("==", otype, array_type)
        scalar = b.select(is_float, _c(1), b.select(is_int, _c(2), b.select(is_bool, _c(3), _c(0))))
        array_bb = fn.append_basic_block(f"arg{k}.array")
        merge = fn.append_basic_block(f"arg{k}.merge")
        scalar_end = b.block
        b.cbranch(is_array, array_bb, merge)
        b.position_at_end(array_bb)
        descr = _field(b, obj, DESCR_OFFSET, PTR)
        type_num = _field(b, descr, TYPE_NUM, I32)
        byteorder = _field(b, descr, BYTEORDER, I8)
        dtype_code: ir.Value = _c(-1)
        for num, c in DTYPE_CODES.items():
            dtype_code = b.select(b.icmp_signed("==", type_num, _c(num, I32)), _c(c), dtype_code)
        native = b.icmp_unsigned("!=", byteorder, _c(ord(">"), I8))
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
        zero = b.icmp_unsigned("==", arg_code, _c(0))
        with b.if_then(zero, likely=False):
            b.ret(b.call(from_long, [_c(0)]))
        shifted = b.or_(b.shl(code, _c(10)), arg_code)
        compute_end = b.block
        b.branch(done)
        b.position_at_end(done)
        phi = b.phi(I64)
        phi.add_incoming(code, cur)
        phi.add_incoming(shifted, compute_end)
        code = phi
    b.ret(b.call(from_long, [b.or_(code, b.shl(nargs, _c(60)))]))


def _overlap_function(module: ir.Module) -> None:
    """Returns Py_True/Py_False: do two arrays' byte ranges intersect?"""
    fn = ir.Function(module, ir.FunctionType(PTR, [PTR, PTR, I64]), "adpasses_arrays_overlap")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    bool_from_long = ir.Function(module, ir.FunctionType(PTR, [I64]), "PyBool_FromLong")
    array_type = b.inttoptr(_c(id(np.ndarray)), PTR)
    args, nargs = fn.args[1], fn.args[2]
    lo_buf = b.alloca(I64, size=nargs)
    hi_buf = b.alloca(I64, size=nargs)
    count_slot = b.alloca(I64)
    b.store(_c(0), count_slot)
    # Gather [lo, hi) of every array argument.
    with _loop(b, fn, nargs) as k:
        obj = b.load(b.gep(args, [k], inbounds=True, source_etype=PTR), typ=PTR)
        with b.if_then(b.icmp_unsigned("==", _field(b, obj, 8, PTR), array_type)):
            data = b.ptrtoint(_field(b, obj, DATA, PTR), I64)
            ndim = b.sext(_field(b, obj, NDIM, I32), I64)
            dims, strides = _field(b, obj, DIMS, PTR), _field(b, obj, STRIDES, PTR)
            descr = _field(b, obj, DESCR_OFFSET, PTR)
            itemsize = _field(b, descr, ELSIZE, I64)  # PyArray_Descr.elsize (numpy 2)
            lo_slot, hi_slot, empty_slot = b.alloca(I64), b.alloca(I64), b.alloca(I64)
            b.store(data, lo_slot)
            b.store(b.add(data, itemsize), hi_slot)
            b.store(_c(0), empty_slot)
            with _loop(b, fn, ndim) as d:
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
    found = b.alloca(I64)
    b.store(_c(0), found)
    with _loop(b, fn, count) as i:
        with _loop(b, fn, i) as j:
            lo_i = b.load(b.gep(lo_buf, [i], inbounds=True, source_etype=I64), typ=I64)
            hi_i = b.load(b.gep(hi_buf, [i], inbounds=True, source_etype=I64), typ=I64)
            lo_j = b.load(b.gep(lo_buf, [j], inbounds=True, source_etype=I64), typ=I64)
            hi_j = b.load(b.gep(hi_buf, [j], inbounds=True, source_etype=I64), typ=I64)
            meet = b.and_(b.icmp_signed("<", lo_i, hi_j), b.icmp_signed("<", lo_j, hi_i))
            with b.if_then(meet):
                b.store(_c(1), found)
    b.ret(b.call(bool_from_long, [b.load(found, typ=I64)]))


class _loop:
    """`with _loop(b, fn, n) as k:` emits for k in range(n)."""

    def __init__(self, b: ir.IRBuilder, fn: ir.Function, n: ir.Value):
        self.b, self.fn, self.n = b, fn, n

    def __enter__(self) -> ir.Value:
        b = self.b
        self.pre = b.block
        self.header = self.fn.append_basic_block("loop")
        self.body = self.fn.append_basic_block("loop.body")
        self.exit = self.fn.append_basic_block("loop.exit")
        b.branch(self.header)
        b.position_at_end(self.header)
        self.k = b.phi(I64)
        self.k.add_incoming(_c(0), self.pre)
        b.cbranch(b.icmp_signed("<", self.k, self.n), self.body, self.exit)
        b.position_at_end(self.body)
        return self.k

    def __exit__(self, *exc: object) -> None:
        b = self.b
        self.k.add_incoming(b.add(self.k, _c(1)), b.block)
        b.branch(self.header)
        b.position_at_end(self.exit)


def _check_descr_layout() -> None:
    import ctypes

    for dt in (np.dtype(np.float64), np.dtype(np.float32), np.dtype(">f8")):
        base = id(dt)
        ok = (ctypes.c_int.from_address(base + TYPE_NUM).value == dt.num
              and ctypes.c_int64.from_address(base + ELSIZE).value == dt.itemsize
              and chr(ctypes.c_char.from_address(base + BYTEORDER).value[0]) == dt.byteorder)
        if not ok:
            raise RuntimeError(f"numpy {np.__version__}'s dtype layout is not the one adpasses reads")


_check_descr_layout()

_FUNCTIONS: tuple | None = None


def _compile() -> tuple:
    global _FUNCTIONS
    if _FUNCTIONS is None:
        import llvmlite.binding as llvm

        from adpasses.llvm_jit import _target_machine, optimized_module

        module = ir.Module("adpasses_dispatch")
        _signature_function(module)
        _overlap_function(module)
        mod = optimized_module(str(module))
        engine = llvm.create_mcjit_compiler(mod, _target_machine())
        engine.finalize_object()
        sig, sig_def = builtin_function("signature_code", engine.get_function_address("adpasses_signature_code"))
        ovl, ovl_def = builtin_function("arrays_overlap", engine.get_function_address("adpasses_arrays_overlap"))
        _FUNCTIONS = (sig, ovl, engine, sig_def, ovl_def)
    return _FUNCTIONS


def signature_code(*args: object) -> int:
    return _compile()[0](*args)


def arrays_overlap(*args: object) -> bool:
    return _compile()[1](*args)


def fast_functions() -> tuple:
    """(signature_code, arrays_overlap) as builtins, for hot paths."""
    f = _compile()
    return f[0], f[1]
