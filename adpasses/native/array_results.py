"""The Python objects an entry shim returns: numbers, arrays, tuples.

A memref result becomes a numpy array without copying its elements. Which
array depends on whose memory the descriptor addresses, which the shim
finds out by comparing base pointers (a view keeps its source's base
pointer; a buffer malloc returned during the call cannot be the memory of
an argument, which was alive all along):

- the memory of an array argument: the argument itself if the descriptor
  is exactly the argument's (`return x`), else a numpy view of it whose
  base is the argument, writeable only if the argument is (`return x[1:]`,
  `return x.T`), as numpy returns them;
- the buffer of an earlier result of the same call (`return out, out[1:]`
  from MLIR): a view of that result;
- otherwise a buffer the compiled code allocated (memref.alloc) and did not
  free: the array owns it. Its base is a capsule whose destructor,
  `adpasses_release_buffer` (adpasses.lowering.thread_state, in the
  process's runtime because arrays outlive modules), frees the buffer when
  numpy drops the last view. Arrays are made with numpy's C API
  (`PyArray_New`, `PyArray_SetBaseObject`) through its function table,
  whose address the JIT linker knows as `adpasses_numpy_api`
  (adpasses.native.runtime).

Memref results therefore must be allocations (or views of them) or views
of arguments: a function of MLIR input returning a `memref.get_global` or
an `alloca` would hand numpy memory it does not own.

If making an object fails (MemoryError), the buffers not yet handed over
are freed and the objects made so far released: nothing leaks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from llvmlite import ir
from xdsl.dialects.builtin import MemRefType

from adpasses.lowering.core import I8, I32, I64, PTR, const_i64, flat_types, packs_results
from adpasses.lowering.thread_state import HANDED_STATS, HANDED_TYPE, runtime_function
from adpasses.native.callers import FLAGS, WRITEABLE, is_bool_type, is_float_type, numpy_dtype

NUMPY_SCALAR_TYPES = {"float64": np.float64, "float32": np.float32, "int64": np.int64, "int32": np.int32,
                      "bool": np.bool_}


def numpy_results(f, count: int) -> list[str]:  # type: ignore[no-untyped-def]
    """Per result of `f`, the numpy scalar type its Python entry returns
    ("" for a Python number or an array): the frontend's `ad.numpy_results`."""
    from adpasses.dialects.ad import NUMPY_RESULTS_ATTR

    attr = f.attributes.get(NUMPY_RESULTS_ATTR)
    if attr is None or len(attr.data) != count:
        return [""] * count
    return [a.data for a in attr.data]


# Indices into numpy's C API table (numpy/__multiarray_api.h; stable ABI).
PY_ARRAY_NEW = 93
PY_ARRAY_DESCR_FROM_TYPE = 45
PY_ARRAY_SCALAR = 60
PY_ARRAY_SET_BASE_OBJECT = 282
_API_SIZE = 400


@dataclass
class ArrayArgument:
    """A memref parameter as the shim received it."""

    obj: ir.Value  # the Python object
    type: MemRefType
    parts: list[ir.Value]  # data, offset 0, sizes, strides (elements)


@dataclass
class _Descriptor:
    type: MemRefType
    ptr: ir.Value
    offset: ir.Value
    sizes: list[ir.Value]
    strides: list[ir.Value]


class ResultBuilder:
    """Builds, in the shim `shim` (adpasses.native.pyentry._Shim), the
    Python object of the compiled function's results."""

    def __init__(self, shim, arguments: list[ArrayArgument]):  # type: ignore[no-untyped-def]
        self.shim, self.b, self.mt = shim, shim.b, shim.mt
        self.arguments = arguments

    def build(self, outputs: list, result: ir.Value) -> ir.Value:
        b = self.b
        values = self._split(outputs, result)
        arrays = [j for j, t in enumerate(outputs) if isinstance(t, MemRefType)]
        if not arrays:
            return self._build_value(outputs, values, {})
        null = ir.Constant(PTR, None)
        # Per array result: the object made (NULL until then), and whether
        # its buffer still belongs to no Python object (freed on failure).
        made = {j: self.shim.entry_alloca(PTR) for j in arrays}
        pending = {j: self.shim.entry_alloca(ir.IntType(1)) for j in arrays}
        for j in arrays:
            b.store(null, made[j])
            b.store(ir.Constant(ir.IntType(1), 0), pending[j])
        cleanup = self.shim.fn.append_basic_block("results.failed")
        # First decide, for every array result, whose memory it is, so that
        # a failure while making one frees the buffers of all the others.
        plans = {}
        earlier: list[int] = []
        for j in arrays:
            plans[j] = self._ownership(values[j], [values[i] for i in earlier])
            b.store(plans[j]["owned"], pending[j])
            earlier.append(j)
        objects = {}
        for j in arrays:
            objects[j] = self._array(values[j], plans[j], [made[i] for i in earlier if i < j],
                                     [values[i] for i in earlier if i < j], pending[j], cleanup)
            b.store(objects[j], made[j])
        out = self._build_value(outputs, values, objects)
        with b.goto_block(cleanup):
            free = self.mt.declare("free", ir.VoidType(), [PTR])
            decref = self.shim.c_api("Py_DecRef", ir.VoidType(), [PTR])  # NULL is fine
            for j in arrays:
                with b.if_then(b.load(pending[j], typ=ir.IntType(1))):
                    b.call(free, [values[j].ptr])
                b.call(decref, [b.load(made[j], typ=PTR)])
            b.ret(null)
        return out

    # -- parts ---------------------------------------------------------------------------

    def _split(self, outputs: list, result: ir.Value) -> list:
        """Each result as an LLVM value, or a _Descriptor for a memref."""
        b = self.b
        if not packs_results(outputs):
            return [result]
        values: list = []
        k = 0
        for t in outputs:
            n = len(flat_types(t))
            parts = [b.extract_value(result, k + i) for i in range(n)]
            k += n
            if isinstance(t, MemRefType):
                rank = len(t.get_shape())
                values.append(_Descriptor(t, parts[0], parts[1], parts[2:2 + rank], parts[2 + rank:]))
            else:
                values.append(parts[0])
        return values

    def _build_value(self, outputs: list, values: list, objects: dict[int, ir.Value]) -> ir.Value:
        """One result as itself; several as a tuple (Py_BuildValue; `N`
        hands the arrays' references to the tuple)."""
        b = self.b
        if len(outputs) == 1 and 0 in objects:
            return objects[0]
        build_args: list[ir.Value] = []
        fmt = ""
        dtypes = numpy_results(self.shim.f, len(outputs))
        for j, (t, v) in enumerate(zip(outputs, values)):
            if dtypes[j] and j not in objects:
                build_args.append(self._numpy_scalar(dtypes[j], t, v))
                fmt += "N"
            elif j in objects:
                build_args.append(objects[j])
                fmt += "N"
            elif is_float_type(t):
                build_args.append(v if isinstance(v.type, ir.DoubleType) else b.fpext(v, ir.DoubleType()))
                fmt += "d"
            elif is_bool_type(t):
                build_args.append(b.call(self.shim.c_api("PyBool_FromLong", PTR, [I64]), [b.zext(v, I64)]))
                fmt += "N"
            else:
                build_args.append(v if v.type.width == 64 else b.sext(v, I64))
                fmt += "L"
        fmt = f"({fmt})" if len(outputs) > 1 else fmt
        build = self.shim.c_api("Py_BuildValue", PTR, [PTR], var_arg=True)
        return b.call(build, [self.shim.cstring(fmt), *build_args])

    def _numpy_scalar(self, dtype: str, t, v: ir.Value) -> ir.Value:  # type: ignore[no-untyped-def]
        """What Python returns: np.float32(x), np.int64(n), ... made by
        numpy's PyArray_Scalar from the value's bytes (a new reference; np.True_
        and np.False_ are numpy's own; NULL on failure: Py_BuildValue then
        returns NULL with the error set). About a third of the cost of
        calling the numpy type."""
        b = self.b
        elem = {"float64": ir.DoubleType(), "float32": ir.FloatType(), "int64": I64, "int32": I32,
                "bool": ir.IntType(8)}[dtype]
        if is_float_type(t):
            value = v if v.type == elem else (b.fptrunc(v, elem) if isinstance(elem, ir.FloatType) else b.fpext(v, elem))
        elif v.type.width == 1:
            value = b.zext(v, elem)
        else:
            value = v if v.type.width == elem.width else b.trunc(v, elem)
        slot = self.shim.entry_alloca(elem)
        b.store(value, slot)
        descr = b.call(self._api(PY_ARRAY_DESCR_FROM_TYPE, PTR, [I32]),
                       [ir.Constant(I32, np.dtype(NUMPY_SCALAR_TYPES[dtype]).num)])
        scalar = b.call(self._api(PY_ARRAY_SCALAR, PTR, [PTR, PTR, PTR]), [slot, descr, ir.Constant(PTR, None)])
        b.call(self.shim.c_api("Py_DecRef", ir.VoidType(), [PTR]), [descr])
        return scalar

    # -- one array ------------------------------------------------------------------------

    def _ownership(self, d: _Descriptor, earlier: list[_Descriptor]) -> dict:
        """Whose memory `d` is: `argument` (the object of the argument it
        is in, or NULL), `same` (the argument itself, when `d` is exactly
        its descriptor, or NULL), `flags` (the view's writeability), and
        `owned` (a buffer of this call, not the same as an earlier result's)."""
        b = self.b
        null = ir.Constant(PTR, None)
        nonnull = b.icmp_unsigned("!=", d.ptr, null)
        argument: ir.Value = null
        same: ir.Value = null
        writeable = ir.Constant(I32, WRITEABLE)
        for a in self.arguments:
            hit = b.and_(nonnull, b.icmp_unsigned("==", d.ptr, a.parts[0]))
            first = b.and_(hit, b.icmp_unsigned("==", argument, null))
            arg_flags = b.and_(self.shim.field(a.obj, FLAGS, I32), ir.Constant(I32, WRITEABLE))
            writeable = b.select(first, arg_flags, writeable)
            argument = b.select(first, a.obj, argument)
            if a.type == d.type or (a.type.element_type == d.type.element_type
                                    and len(a.type.get_shape()) == len(d.type.get_shape())):
                rank = len(d.sizes)
                exact = b.and_(hit, b.icmp_signed("==", d.offset, const_i64(0)))
                a_sizes, a_strides = a.parts[2:2 + rank], a.parts[2 + rank:]
                for x, y in zip(d.sizes + d.strides, a_sizes + a_strides):
                    exact = b.and_(exact, b.icmp_signed("==", x, y))
                same = b.select(b.and_(exact, b.icmp_unsigned("==", same, null)), a.obj, same)
        owned = b.and_(nonnull, b.icmp_unsigned("==", argument, null))
        for e in earlier:
            owned = b.and_(owned, b.icmp_unsigned("!=", d.ptr, e.ptr))
        return {"argument": argument, "same": same, "flags": writeable, "owned": owned}

    def _array(self, d: _Descriptor, plan: dict, earlier_made: list[ir.Value], earlier: list[_Descriptor],
               pending: ir.Value, cleanup: ir.Block) -> ir.Value:
        """The Python object of array result `d` (a new reference)."""
        b, shim = self.b, self.shim
        null = ir.Constant(PTR, None)
        incref = shim.c_api("Py_IncRef", ir.VoidType(), [PTR])
        result = shim.entry_alloca(PTR)
        itself = b.icmp_unsigned("!=", plan["same"], null)
        with b.if_else(itself) as (then, otherwise):
            with then:
                b.call(incref, [plan["same"]])
                b.store(plan["same"], result)
            with otherwise:
                b.store(self._new_array(d, plan, earlier_made, earlier, pending, cleanup), result)
        return b.load(result, typ=PTR)

    def _new_array(self, d: _Descriptor, plan: dict, earlier_made: list[ir.Value],
                   earlier: list[_Descriptor], pending: ir.Value, cleanup: ir.Block) -> ir.Value:
        b, shim = self.b, self.shim
        null = ir.Constant(PTR, None)
        dtype = numpy_dtype(d.type.element_type)
        itemsize = dtype.itemsize
        # The base: the argument, an earlier result of the same buffer, or a capsule.
        base = plan["argument"]
        flags = plan["flags"]
        for made, e in zip(earlier_made, earlier):
            same_buffer = b.and_(b.icmp_unsigned("==", base, null),
                                 b.and_(b.icmp_unsigned("!=", d.ptr, null), b.icmp_unsigned("==", d.ptr, e.ptr)))
            base = b.select(same_buffer, b.load(made, typ=PTR), base)
        base_slot = shim.entry_alloca(PTR)
        b.store(base, base_slot)
        incref = shim.c_api("Py_IncRef", ir.VoidType(), [PTR])
        with b.if_else(b.load(pending, typ=ir.IntType(1))) as (owned, borrowed):
            with owned:
                release = runtime_function(self.mt, "adpasses_release_buffer")
                capsule = b.call(shim.c_api("PyCapsule_New", PTR, [PTR, PTR, PTR]), [d.ptr, null, release])
                self._fail_if_null(capsule, cleanup)
                b.store(ir.Constant(ir.IntType(1), 0), pending)  # the capsule frees it now
                stats = self.mt.global_ref(HANDED_STATS, HANDED_TYPE)
                handed = b.gep(stats, [const_i64(0), const_i64(0)], inbounds=True, source_etype=HANDED_TYPE)
                b.atomic_rmw("add", handed, const_i64(1), "monotonic")
                b.store(capsule, base_slot)
            with borrowed:
                with b.if_then(b.icmp_unsigned("!=", base, null)):
                    b.call(incref, [base])
        base = b.load(base_slot, typ=PTR)
        rank = len(d.sizes)
        dims = shim.entry_alloca(ir.ArrayType(I64, max(rank, 1)))
        strides = shim.entry_alloca(ir.ArrayType(I64, max(rank, 1)))
        for k in range(rank):
            b.store(d.sizes[k], b.gep(dims, [const_i64(0), const_i64(k)], inbounds=True,
                                      source_etype=ir.ArrayType(I64, max(rank, 1))))
            b.store(b.mul(d.strides[k], const_i64(itemsize)),
                    b.gep(strides, [const_i64(0), const_i64(k)], inbounds=True,
                          source_etype=ir.ArrayType(I64, max(rank, 1))))
        data = b.gep(d.ptr, [b.mul(d.offset, const_i64(itemsize))], source_etype=I8)
        # No buffer (malloc(0) may return NULL): numpy allocates the empty array.
        has_data = b.icmp_unsigned("!=", d.ptr, null)
        data = b.select(has_data, data, null)
        strides_arg = b.select(has_data, strides, null)
        flags = b.select(has_data, flags, ir.Constant(I32, 0))
        new = self._api(PY_ARRAY_NEW, PTR, [PTR, I32, PTR, I32, PTR, PTR, I32, I32, PTR])
        array = b.call(new, [shim.python_object(np.ndarray), ir.Constant(I32, rank), dims,
                             ir.Constant(I32, dtype.num), strides_arg, data, ir.Constant(I32, 0), flags, null])
        failed = b.icmp_unsigned("==", array, null)
        with b.if_then(failed, likely=False):
            b.call(shim.c_api("Py_DecRef", ir.VoidType(), [PTR]), [base])
            b.branch(cleanup)
        with b.if_then(b.icmp_unsigned("!=", base, null)):
            set_base = self._api(PY_ARRAY_SET_BASE_OBJECT, I32, [PTR, PTR])
            status = b.call(set_base, [array, base])  # steals base, also when it fails
            with b.if_then(b.icmp_signed("!=", status, ir.Constant(I32, 0)), likely=False):
                b.call(shim.c_api("Py_DecRef", ir.VoidType(), [PTR]), [array])
                b.branch(cleanup)
        return array

    def _fail_if_null(self, value: ir.Value, cleanup: ir.Block) -> None:
        b = self.b
        ok = self.shim.fn.append_basic_block("made")
        b.cbranch(b.icmp_unsigned("==", value, ir.Constant(PTR, None)), cleanup, ok)
        b.position_at_end(ok)

    def _api(self, index: int, ret: ir.Type, params: list[ir.Type]) -> ir.Value:
        """numpy C API function `index`, loaded from its table."""
        b = self.b
        table = self.mt.global_ref("adpasses_numpy_api", ir.ArrayType(PTR, _API_SIZE))
        slot = b.gep(table, [const_i64(0), const_i64(index)], inbounds=True,
                     source_etype=ir.ArrayType(PTR, _API_SIZE))
        fn = _FunctionPointer(b.block, slot, typ=PTR)
        b._insert(fn)
        fn.function_type = ir.FunctionType(ret, params)
        return fn


class _FunctionPointer(ir.LoadInstr):
    """A loaded (opaque) function pointer that can be called: IRBuilder.call
    reads the callee's `function_type`, which a plain load lacks."""

    function_type = None  # set per instance


# Memory a returned array may not be: numpy frees the buffer of an array a
# call hands over, and neither a stack slot nor a global can be freed.
_NOT_OWNED = {
    "memref.alloca": "a stack slot (memref.alloca) is gone when the function returns",
    "memref.get_global": "a global (memref.get_global) is not the call's to hand over",
}


def check_returned_memory(f) -> None:  # type: ignore[no-untyped-def]
    """A CompileError at the return if a memref result of the public
    function `f` may be memory that numpy cannot own (docs/calling_convention.md):
    say to copy it into a `memref.alloc` first."""
    from xdsl.dialects import func

    from adpasses.analysis.memref_views import memory_objects
    from adpasses.core.diagnostics import error_at

    for op in f.walk():
        if not isinstance(op, func.ReturnOp) or op.parent_op() is not f:
            continue
        for k, value in enumerate(op.operands):
            if not isinstance(value.type, MemRefType):
                continue
            for root in memory_objects(value):
                owner = getattr(root, "op", None)
                why = _NOT_OWNED.get(owner.name) if owner is not None else None
                if why is not None:
                    raise error_at(op, f"result {k} of @{f.sym_name.data} may be memory of "
                                       f"'{owner.name}': {why}, and a returned array is handed to "
                                       "numpy, which frees it; copy it into a memref.alloc and "
                                       "return that")
