"""Calling compiled functions from Python cheaply and safely.

For every public function `f` the lowering's module gets an LLVM entry shim
`__py_entry_f(...)` that takes, per memref parameter, the address of the
numpy array object (`id(a)`) and reads data pointer, rank, sizes, strides
and flags straight from numpy's `PyArrayObject_fields` (a stable part of
numpy's C ABI; the offsets are checked against a probe array when this
module is imported). It validates rank, static sizes, contiguity (identity
layouts), writeability (parameters the function may write), alignment, then
calls `f` with the expanded descriptors and stores its results in a small
output buffer. It returns a status: 0, -1 for an out-of-bounds access (the
runtime error slot says where), or a code naming the parameter and problem.

The Python side (`make_caller`) is a function generated once per compiled
function: a type and dtype check per array, one ctypes call, one read.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np
from llvmlite import ir
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, SSAValue

from adpasses.lowering.core import I8, I32, I64, PTR, ModuleTranslator, const_i64, flat_types
from adpasses.memref_views import memory_object
from adpasses.runtime import ERROR_SLOT
from adpasses.types import has_identity_layout

# numpy's PyArrayObject_fields (64-bit CPython): data, nd, dimensions, strides, flags.
DATA, NDIM, DIMS, STRIDES, FLAGS = 16, 24, 32, 40, 64
C_CONTIGUOUS, ALIGNED, WRITEABLE = 0x1, 0x100, 0x400

RANK, NOT_CONTIGUOUS, READ_ONLY, MISALIGNED, SHAPE = range(5)
PROBLEMS = {
    RANK: "has rank {got}, expected {want}",
    NOT_CONTIGUOUS: "is not C-contiguous, but the parameter has the identity layout; pass "
                    "np.ascontiguousarray(...) or declare a strided layout (strided<[?], offset: ?>)",
    READ_ONLY: "is read-only, but the function writes to it; pass a writeable array (e.g. a copy)",
    MISALIGNED: "is not aligned to its element size; pass a copy",
    SHAPE: "has shape {got}, expected {want}",
}


def _check_numpy_layout() -> None:
    a = np.zeros((3, 5))[:, ::2]
    base = id(a)
    ok = (
        ctypes.c_void_p.from_address(base + DATA).value == a.ctypes.data
        and ctypes.c_int.from_address(base + NDIM).value == 2
        and list((ctypes.c_int64 * 2).from_address(
            ctypes.c_void_p.from_address(base + DIMS).value)) == [3, 3]
        and list((ctypes.c_int64 * 2).from_address(
            ctypes.c_void_p.from_address(base + STRIDES).value)) == list(a.strides)
        and ctypes.c_int.from_address(base + FLAGS).value == a.flags.num
    )
    if not ok:
        raise RuntimeError(
            f"numpy {np.__version__}'s array object layout is not the one adpasses "
            "reads; please report this with your numpy version"
        )


_check_numpy_layout()


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
    """Indices of memref parameters whose memory the function may write."""
    args = list(f.body.block.args)
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


# -- the LLVM shim ------------------------------------------------------------

def _shim_param(t: Attribute) -> ir.Type:
    if isinstance(t, MemRefType):
        return I64
    if isinstance(t, (Float32Type, Float16Type, Float64Type)):
        return ir.DoubleType()
    if isinstance(t, IntegerType) and t.width.data == 1:
        return I8
    return flat_types(t)[0]


def add_entry_shim(mt: ModuleTranslator, f: func.FuncOp) -> str:
    """Define `__py_entry_<f>`; return its name."""
    name = f"__py_entry_{f.sym_name.data}"
    target = mt.functions[f.sym_name.data]
    inputs = list(f.function_type.inputs.data)
    shim = ir.Function(mt.llvm, ir.FunctionType(I32, [*(_shim_param(t) for t in inputs), PTR]), name)
    b = ir.IRBuilder(shim.append_basic_block("entry"))
    written = written_parameters(f)
    slot = mt.global_ref("adpasses_error_slot", ir.ArrayType(I64, 5))
    flag = b.gep(slot, [const_i64(0), const_i64(0)], inbounds=True)
    b.store(const_i64(0), flag)

    def fail_unless(cond: ir.Value, k: int, problem: int) -> None:
        with b.if_then(b.not_(cond), likely=False):
            b.ret(ir.Constant(I32, 1 + 8 * k + problem))

    def field(obj: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
        return b.load(b.gep(obj, [const_i64(offset)], inbounds=True, source_etype=I8), typ=ty)

    call_args: list[ir.Value] = []
    for k, (t, arg) in enumerate(zip(inputs, shim.args)):
        if not isinstance(t, MemRefType):
            if isinstance(t, (Float32Type, Float16Type)):
                call_args.append(b.fptrunc(arg, flat_types(t)[0]))
            elif isinstance(t, IntegerType) and t.width.data == 1:
                call_args.append(b.trunc(arg, ir.IntType(1)))
            else:
                call_args.append(arg)
            continue
        obj = b.inttoptr(arg, PTR)
        shape = list(t.get_shape())
        rank = len(shape)
        fail_unless(b.icmp_signed("==", field(obj, NDIM, I32), ir.Constant(I32, rank)), k, RANK)
        flags = field(obj, FLAGS, I32)

        def has(bit: int) -> ir.Value:
            return b.icmp_unsigned("!=", b.and_(flags, ir.Constant(I32, bit)), ir.Constant(I32, 0))

        if has_identity_layout(t):
            fail_unless(has(C_CONTIGUOUS), k, NOT_CONTIGUOUS)
        if k in written:
            fail_unless(has(WRITEABLE), k, READ_ONLY)
        fail_unless(has(ALIGNED), k, MISALIGNED)
        data = field(obj, DATA, PTR)
        sizes, strides = [], []
        if rank:
            dims_ptr, strides_ptr = field(obj, DIMS, PTR), field(obj, STRIDES, PTR)
            itemsize = numpy_dtype(t.element_type).itemsize
            for d in range(rank):
                size = b.load(b.gep(dims_ptr, [const_i64(d)], inbounds=True, source_etype=I64), typ=I64)
                if shape[d] >= 0:
                    fail_unless(b.icmp_signed("==", size, const_i64(shape[d])), k, SHAPE)
                sizes.append(size)
                byte_stride = b.load(b.gep(strides_ptr, [const_i64(d)], inbounds=True, source_etype=I64), typ=I64)
                strides.append(b.sdiv(byte_stride, const_i64(itemsize)) if itemsize > 1 else byte_stride)
        call_args += [data, const_i64(0), *sizes, *strides]

    result = b.call(target, call_args)
    outputs = list(f.function_type.outputs.data)
    out = shim.args[-1]
    values = [result] if len(outputs) == 1 else [b.extract_value(result, j) for j in range(len(outputs))]
    for j, (t, v) in enumerate(zip(outputs, values)):
        addr = b.gep(out, [const_i64(j)], inbounds=True, source_etype=I64)
        if isinstance(v.type, (ir.FloatType, ir.HalfType)):
            v = b.fpext(v, ir.DoubleType())
        elif isinstance(v.type, ir.IntType) and v.type.width < 64:
            v = b.zext(v, I64) if v.type.width == 1 else b.sext(v, I64)
        b.store(v, addr)
    failed = b.icmp_unsigned("!=", b.load(flag, typ=I64), const_i64(0))
    b.ret(b.select(failed, ir.Constant(I32, -1), ir.Constant(I32, 0)))
    return name


# -- the Python side ------------------------------------------------------------

@dataclass
class Parameter:
    name: str
    type: Attribute

    @property
    def is_array(self) -> bool:
        return isinstance(self.type, MemRefType)


def parameters(f: func.FuncOp) -> list[Parameter]:
    names = []
    for i, arg in enumerate(f.body.block.args):
        hint = arg.name_hint
        names.append(hint if hint and hint.isidentifier() and hint not in names else f"arg{i}")
    return [Parameter(n, t) for n, t in zip(names, f.function_type.inputs.data)]


def _ctype(t: Attribute):  # type: ignore[no-untyped-def]
    if isinstance(t, MemRefType):
        return ctypes.c_int64
    if isinstance(t, (Float64Type, Float32Type, Float16Type)):
        return ctypes.c_double
    if isinstance(t, IntegerType) and t.width.data == 1:
        return ctypes.c_bool
    if isinstance(t, IntegerType) and t.width.data == 32:
        return ctypes.c_int32
    return ctypes.c_int64


class CallErrors:
    """Turns a failed check into the exception a user should see."""

    def __init__(self, fname: str, params: list[Parameter], check_sites: list[str]):
        self.fname, self.params, self.check_sites = fname, params, check_sites

    def _param(self, k: int) -> str:
        return f"{self.fname}(): argument {k} ('{self.params[k].name}')"

    def not_array(self, k: int, value: object) -> None:
        raise TypeError(f"{self._param(k)} must be a numpy array of {self.params[k].type}, "
                        f"got {type(value).__name__}")

    def dtype(self, k: int, value: np.ndarray) -> None:
        want = numpy_dtype(self.params[k].type.element_type)
        raise TypeError(f"{self._param(k)} must have dtype {want}, got {value.dtype}"
                        + (" (non-native byte order)" if value.dtype.newbyteorder("=") == want else ""))

    def scalar(self, args: tuple) -> None:
        for k, (p, a) in enumerate(zip(self.params, args)):
            if p.is_array:
                continue
            try:
                _ctype(p.type)(a)
            except TypeError:
                raise TypeError(f"{self._param(k)} must be a {p.type} scalar, got "
                                f"{type(a).__name__}") from None
        raise TypeError(f"{self.fname}(): invalid arguments")

    def status(self, status: int, args: tuple) -> None:
        if status == -1:
            site, index, axis, size = (int(ERROR_SLOT[i]) for i in range(1, 5))
            ERROR_SLOT[0] = 0
            where = self.check_sites[site] if 0 <= site < len(self.check_sites) else "?"
            raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size} (at {where})")
        k, problem = divmod(status - 1, 8)
        p, a = self.params[k], args[k]
        shape = list(p.type.get_shape())
        text = PROBLEMS[problem].format(
            got=(a.ndim if problem == RANK else tuple(a.shape)),
            want=(len(shape) if problem == RANK else tuple("?" if s < 0 else s for s in shape)),
        )
        raise ValueError(f"{self._param(k)} {text}")


def make_caller(name: str, f: func.FuncOp, address: int, check_sites: list[str]):  # type: ignore[no-untyped-def]
    """A Python function with the compiled function's parameters."""
    params = parameters(f)
    outputs = list(f.function_type.outputs.data)
    argtypes = [_ctype(p.type) for p in params] + [ctypes.c_void_p]
    shim = ctypes.PYFUNCTYPE(ctypes.c_int32, *argtypes)(address)
    out = (ctypes.c_double * max(1, len(outputs)))()
    out_int = ctypes.cast(out, ctypes.POINTER(ctypes.c_int64))
    env = {
        "shim": shim, "out": out, "out_int": out_int, "out_addr": ctypes.addressof(out),
        "ndarray": np.ndarray, "errors": CallErrors(name, params, check_sites),
        "ArgumentError": ctypes.ArgumentError,
    }
    names = [f"a{k}" for k in range(len(params))]
    body = []
    call_args = []
    for k, p in enumerate(params):
        a = names[k]
        if p.is_array:
            env[f"dt{k}"] = numpy_dtype(p.type.element_type)
            body.append(f"    if {a}.__class__ is not ndarray and not isinstance({a}, ndarray): errors.not_array({k}, {a})")
            body.append(f"    if {a}.dtype is not dt{k} and {a}.dtype != dt{k}: errors.dtype({k}, {a})")
            call_args.append(f"id({a})")
        else:
            call_args.append(a)
    body.append("    try:")
    body.append(f"        status = shim({', '.join(call_args + ['out_addr'])})")
    body.append("    except ArgumentError:")
    body.append(f"        errors.scalar(({', '.join(names)}{',' if len(names) == 1 else ''}))")
    body.append("    if status:")
    body.append(f"        errors.status(status, ({', '.join(names)}{',' if len(names) == 1 else ''}))")
    reads = []
    for j, t in enumerate(outputs):
        if isinstance(t, (Float64Type, Float32Type, Float16Type)):
            reads.append(f"out[{j}]")
        elif isinstance(t, IntegerType) and t.width.data == 1:
            reads.append(f"out_int[{j}] != 0")
        else:
            reads.append(f"out_int[{j}]")
    if not reads:
        body.append("    return None")
    elif len(reads) == 1:
        body.append(f"    return {reads[0]}")
    else:
        body.append(f"    return ({', '.join(reads)},)")
    pyname = name if name.isidentifier() else "compiled"
    source = f"def {pyname}({', '.join(names)}):\n" + "\n".join(body) + "\n"
    exec(compile(source, f"<adpasses entry of @{name}>", "exec"), env)
    caller = env[pyname]
    caller.__doc__ = f"Compiled @{name}({', '.join(p.name for p in params)})"
    caller.parameters = params
    return caller
