"""memref -> LLVM: descriptors as values, addresses as GEPs.

Heap allocations go through the counting runtime allocator; static-size
allocas are placed in the entry block (so a loop does not grow the stack;
MLIR's alloca lives until the function returns, so one buffer per function
is the same program), dynamic-size allocas stay where they are. Every size
is checked (adpasses.lowering.sizes): negative sizes, byte counts that
overflow, failed mallocs and oversized stack allocations stop the call with
a ValueError / MemoryError naming the op's location.
"""

from __future__ import annotations

from collections.abc import Sequence

from llvmlite import ir
from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseIntOrFPElementsAttr, MemRefType
from xdsl.ir import Operation, SSAValue

from adpasses.core import stop_codes
from adpasses.core.diagnostics import error_at
from adpasses.dialects.ad import PY_INDEX_ATTR, SCRATCH_ATTR, WORKSPACE_ATTR, KeepOp
from adpasses.core.types import has_identity_layout, memref_strides
from adpasses.lowering.core import (
    I64,
    has_unit_attr,
    FunctionTranslator,
    MemRefValue,
    ModuleTranslator,
    _add,
    _mul,
    const_i64,
    identity_strides,
    load_element,
    make_memref,
    opaque,
    PTR,
    scalar_type,
    store_element,
)
from adpasses.lowering.names import user_symbol
from adpasses.lowering.thread_state import HELD_TYPE, workspace_give_back, workspace_pool, workspace_take
from adpasses.lowering.sizes import byte_count, check_static_alloca, heap_allocate, heap_grow, reserve_stack


def _element_bytes(ft: FunctionTranslator, ty: ir.Type) -> int:
    if isinstance(ty, ir.DoubleType):
        return 8
    if isinstance(ty, ir.FloatType):
        return 4
    if isinstance(ty, ir.HalfType):
        return 2
    return max(1, (ty.width + 7) // 8)


def _static_shape_sizes(t: MemRefType, dynamic: Sequence[ir.Value]) -> list[ir.Value]:
    dyn = iter(dynamic)
    return [const_i64(s) if s != DYNAMIC_INDEX else next(dyn) for s in t.get_shape()]




def _alloc(ft: FunctionTranslator, op: memref.AllocOp) -> None:
    t = op.memref.type
    sizes = _static_shape_sizes(t, [ft.get(s) for s in op.dynamic_sizes])
    elem = scalar_type(t.element_type)
    site = ft.mt.check_site(op)
    tape = WORKSPACE_ATTR in op.attributes
    # A local array kept in a workspace (ad-promote-scratch) is still an array.
    what = stop_codes.TAPE if tape and SCRATCH_ATTR not in op.attributes else stop_codes.ALLOCATION
    element_bytes = _element_bytes(ft, elem)
    nbytes = byte_count(ft, site, sizes, element_bytes, what)
    if tape and ft.mt.workspace:
        ptr = _workspace_buffer(ft, site, nbytes, element_bytes, what)
    else:
        ptr = heap_allocate(ft, site, nbytes, what, element_bytes)
    strides = identity_strides(ft.b, sizes)
    ft.set(op.memref, make_memref(ft.b, t, ptr, const_i64(0), sizes, strides))


def _alloca(ft: FunctionTranslator, op: memref.AllocaOp) -> None:
    t = op.memref.type
    elem = scalar_type(t.element_type)
    sizes = _static_shape_sizes(t, [ft.get(s) for s in op.dynamic_sizes])
    if all(isinstance(s, ir.Constant) and s.constant >= 0 for s in sizes):
        count = 1
        for s in sizes:
            count *= s.constant
        check_static_alloca(op, count * _element_bytes(ft, elem))
        ptr = ft.entry_alloca(ir.ArrayType(elem, max(count, 1)))
    else:
        site = ft.mt.check_site(op)
        nbytes = byte_count(ft, site, sizes, _element_bytes(ft, elem))
        reserve_stack(ft, site, nbytes)
        count_v: ir.Value = const_i64(1)
        for s in sizes:
            count_v = _mul(ft.b, count_v, s)
        ptr = opaque(ft.b.alloca(elem, size=count_v))
    ft.set(op.memref, make_memref(ft.b, t, ptr, const_i64(0), sizes, identity_strides(ft.b, sizes)))


def _alloca_scope(ft: FunctionTranslator, op: memref.AllocaScopeOp) -> None:
    """The body inline; dynamic-size allocas inside are released at the end
    (llvm.stacksave/stackrestore), static ones live in the entry block."""
    block = op.scope.block
    dynamic = any(isinstance(inner, memref.AllocaOp) and inner.dynamic_sizes
                  for inner in op.walk())
    saved = ft.b.call(ft.mt.declare("llvm.stacksave.p0", PTR, []), []) if dynamic else None
    # The scope gives its allocas' stack back: so does the call's budget
    # (adpasses.lowering.sizes.reserve_stack), or a scope in a loop would
    # count every iteration's allocas.
    budget = ft.b.load(ft.stack_budget_slot(), typ=I64) if dynamic else None
    terminator = block.last_op
    for inner in block.ops:
        if inner is terminator and isinstance(inner, memref.AllocaScopeReturnOp):
            break
        ft.translate_op(inner)
    if saved is not None:
        ft.b.call(ft.mt.declare("llvm.stackrestore.p0", ir.VoidType(), [PTR]), [saved])
        ft.b.store(budget, ft.stack_budget_slot())
    returned = terminator.operands if isinstance(terminator, memref.AllocaScopeReturnOp) else ()
    for res, value in zip(op.results, returned):
        ft.set(res, ft.get(value))


def _dealloc(ft: FunctionTranslator, op: memref.DeallocOp) -> None:
    if WORKSPACE_ATTR in op.attributes and ft.mt.workspace:
        # The workspace buffer goes back to its pool for the next call.
        ptr = ft.get(op.memref).ptr
        b = ft.b
        for pool, capacities, held in ft.workspaces:
            mine = b.load(b.gep(held, [const_i64(0), ir.Constant(ir.IntType(32), 0)], inbounds=True,
                                source_etype=HELD_TYPE), typ=PTR)
            with b.if_then(b.icmp_unsigned("==", mine, ptr)):
                b.call(workspace_give_back(ft.mt), [pool, capacities, held])
        return
    ft.free(ft.get(op.memref).ptr)


def _workspace_buffer(ft: FunctionTranslator, site: int, nbytes: ir.Value, element_bytes: int,
                      what: int = stop_codes.TAPE) -> ir.Value:
    """A buffer of at least `nbytes` taken from this tape site's pool
    (adpasses.lowering.thread_state): it grows (one counted allocation)
    only when this call needs more than the buffer it got; it goes back to
    the pool at the tape's dealloc, or when the call stops (the function's
    early exit). A failed growth stops the call (MemoryError); the old
    buffer goes back."""
    pool, capacities = workspace_pool(ft.mt)
    held = ft.entry_alloca(HELD_TYPE)
    ft.alloca_builder.store(ir.Constant(HELD_TYPE, [ir.Constant(PTR, None), const_i64(0)]), held)
    ft.workspaces.append((pool, capacities, held))
    b = ft.b
    i32 = ir.IntType(32)
    ptr_field = opaque(b.gep(held, [const_i64(0), ir.Constant(i32, 0)], inbounds=True, source_etype=HELD_TYPE))
    cap_field = opaque(b.gep(held, [const_i64(0), ir.Constant(i32, 1)], inbounds=True, source_etype=HELD_TYPE))
    b.call(workspace_take(ft.mt), [pool, capacities, held])
    with b.if_then(b.icmp_unsigned(">", nbytes, b.load(cap_field, typ=I64)), likely=False):
        grown = heap_grow(ft, site, b.load(ptr_field, typ=PTR), nbytes, what, element_bytes)
        b.store(grown, ptr_field)
        b.store(nbytes, cap_field)
    return b.load(ptr_field, typ=PTR)


def _address(ft: FunctionTranslator, op: Operation, m: MemRefValue, indices: Sequence[SSAValue]) -> ir.Value:
    idx = [ft.get(i) for i in indices]
    if ft.checked(op):
        site = ft.mt.check_site(op)
        python_index = has_unit_attr(op, PY_INDEX_ATTR)
        for axis, (i, size) in enumerate(zip(idx, m.sizes)):
            ft.check_index(site, i, axis, size, python_index)
    return ft.element_address(m, idx)


def _load(ft: FunctionTranslator, op: memref.LoadOp) -> None:
    m = ft.get(op.memref)
    addr = _address(ft, op, m, op.indices)
    ft.set(op.res, load_element(ft.b, addr, m.element))


def _store(ft: FunctionTranslator, op: memref.StoreOp) -> None:
    m = ft.get(op.memref)
    addr = _address(ft, op, m, op.indices)
    store_element(ft.b, ft.get(op.value), addr)


def _dim(ft: FunctionTranslator, op: memref.DimOp) -> None:
    m = ft.get(op.source)
    k = ft.get(op.index)
    if isinstance(k, ir.Constant):
        if not 0 <= k.constant < len(m.sizes):
            raise error_at(op, f"dimension {k.constant} is out of range for rank {len(m.sizes)}")
        ft.set(op.result, m.sizes[k.constant])
        return
    value: ir.Value = const_i64(0)
    for d, size in enumerate(m.sizes):
        value = ft.b.select(ft.b.icmp_signed("==", k, const_i64(d)), size, value)
    ft.set(op.result, value)


def _rank(ft: FunctionTranslator, op: Operation) -> None:
    ft.set(op.results[0], const_i64(len(op.operands[0].type.get_shape())))


def _mixed(static: Sequence[int], dynamic: Sequence[SSAValue], ft: FunctionTranslator) -> list[ir.Value]:
    dyn = iter(dynamic)
    return [const_i64(s) if s != DYNAMIC_INDEX else ft.get(next(dyn)) for s in static]


def _dropped_dims(op: memref.SubviewOp, sizes: Sequence[ir.Value]) -> set[int]:
    """Which unit dimensions a rank-reducing subview drops (left to right,
    matching the result shape)."""
    src_rank = len(sizes)
    result_shape = list(op.result.type.get_shape())
    to_drop = src_rank - len(result_shape)
    dropped: set[int] = set()
    r = 0
    for d in range(src_rank):
        unit = isinstance(sizes[d], ir.Constant) and sizes[d].constant == 1
        remaining_src = src_rank - d
        remaining_res = len(result_shape) - r
        if unit and len(dropped) < to_drop and (
            remaining_src > remaining_res or r >= len(result_shape) or result_shape[r] != 1
        ):
            dropped.add(d)
        else:
            r += 1
    return dropped


def _subview(ft: FunctionTranslator, op: memref.SubviewOp) -> None:
    src = ft.get(op.source)
    b = ft.b
    offsets = _mixed(op.static_offsets.get_values(), op.offsets, ft)
    sizes = _mixed(op.static_sizes.get_values(), op.sizes, ft)
    steps = _mixed(op.static_strides.get_values(), op.strides, ft)
    if ft.checked(op):
        site = ft.mt.check_site(op)
        python_index = has_unit_attr(op, PY_INDEX_ATTR)
        for axis, (o, s, st, n) in enumerate(zip(offsets, sizes, steps, src.sizes)):
            # The last selected element, offset + (size-1)*step, must be in range
            # (and the offset too) when the view is not empty.
            last = _add(b, o, _mul(b, b.sub(s, const_i64(1)), st))
            nonempty = b.icmp_signed(">", s, const_i64(0))
            with b.if_then(nonempty):
                ft.check_index(site, o, axis, n, python_index)
                ft.check_index(site, last, axis, n, python_index)
    offset = src.offset
    for o, st in zip(offsets, src.strides):
        offset = _add(b, offset, _mul(b, o, st))
    new_strides = [_mul(b, st, step) for st, step in zip(src.strides, steps)]
    dropped = _dropped_dims(op, sizes)
    kept = [d for d in range(len(sizes)) if d not in dropped]
    t = op.result.type
    ft.set(op.result, make_memref(b, t, src.ptr, offset, [sizes[d] for d in kept],
                                  [new_strides[d] for d in kept]))


def _keep(ft: FunctionTranslator, op: KeepOp) -> None:
    """Nothing: `ad.keep` only kept its operands' ops (and their checks)
    alive through the xDSL passes."""


def _cast(ft: FunctionTranslator, op: memref.CastOp) -> None:
    src = ft.get(op.source)
    ptr, offset = src.ptr, src.offset
    if memref_strides(op.dest.type)[1] == 0 and not (isinstance(offset, ir.Constant) and offset.constant == 0):
        # A view with an offset cast to a type whose offset is 0 (a row of a
        # C-contiguous batch as an identity-layout memref: vmap's driver,
        # transforms/batch_loops.py): its first element becomes the base,
        # so the view still addresses the same elements.
        ptr = ft.b.gep(ptr, [offset], inbounds=True, source_etype=src.element)
        offset = const_i64(0)
    ft.set(op.dest, make_memref(ft.b, op.dest.type, ptr, offset, src.sizes, src.strides))


def _groups(op: Operation) -> list[list[int]]:
    """The reassociation of expand_shape / collapse_shape: which dimensions
    of the higher-rank side make up each dimension of the lower-rank side."""
    return [[int(d.value.data) for d in group.data] for group in op.reassociation.data]


def _collapse_shape(ft: FunctionTranslator, op: memref.CollapseShapeOp) -> None:
    """Each group of source dimensions (contiguous, as the op requires)
    becomes one: the product of its sizes, its innermost stride."""
    src = ft.get(op.src)
    sizes, strides = [], []
    for group in _groups(op):
        size = const_i64(1)
        for d in group:
            size = _mul(ft.b, size, src.sizes[d])
        sizes.append(size)
        strides.append(src.strides[group[-1]] if group else const_i64(1))
    ft.set(op.result, make_memref(ft.b, op.result.type, src.ptr, src.offset, sizes, strides))


def _expand_shape(ft: FunctionTranslator, op: memref.ExpandShapeOp) -> None:
    """Each source dimension splits into its group of result dimensions
    (sizes from output_shape), the innermost keeping the source stride."""
    src = ft.get(op.src)
    out_sizes = _mixed(op.static_output_shape.get_values(), op.output_shape, ft)
    strides = [const_i64(1)] * len(out_sizes)
    for d, group in enumerate(_groups(op)):
        stride = src.strides[d]
        for r in reversed(group):
            strides[r] = stride
            stride = _mul(ft.b, stride, out_sizes[r])
    ft.set(op.result, make_memref(ft.b, op.result.type, src.ptr, src.offset, out_sizes, strides))


def _reinterpret_cast(ft: FunctionTranslator, op: memref.ReinterpretCastOp) -> None:
    src = ft.get(op.source)
    offsets = _mixed(op.static_offsets.get_values(), op.offsets, ft)
    sizes = _mixed(op.static_sizes.get_values(), op.sizes, ft)
    strides = _mixed(op.static_strides.get_values(), op.strides, ft)
    ft.set(op.result, make_memref(ft.b, op.result.type, src.ptr, offsets[0], sizes, strides))


def _extract_strided_metadata(ft: FunctionTranslator, op: memref.ExtractStridedMetaDataOp) -> None:
    src = ft.get(op.source)
    ft.set(op.base_buffer, make_memref(ft.b, op.base_buffer.type, src.ptr, const_i64(0), [], []))
    ft.set(op.offset, src.offset)
    for r, v in zip(op.sizes, src.sizes):
        ft.set(r, v)
    for r, v in zip(op.strides, src.strides):
        ft.set(r, v)


def _copy(ft: FunctionTranslator, op: memref.CopyOp) -> None:
    """Element by element, in a loop nest over the destination's sizes."""
    src, dst = ft.get(op.source), ft.get(op.destination)
    b = ft.b
    if ft.checked(op):
        # MLIR requires equal shapes; a destination larger than the source
        # would read past it: report its last index as out of bounds.
        site = ft.mt.check_site(op)
        for axis, (n_dst, n_src) in enumerate(zip(dst.sizes, src.sizes)):
            with b.if_then(b.icmp_signed(">", n_dst, const_i64(0))):
                ft.check_index(site, b.sub(n_dst, const_i64(1)), axis, n_src)
    indices: list[ir.Value] = []
    exits: list[tuple[ir.Block, ir.PhiInstr, ir.Block]] = []
    for size in dst.sizes:
        pre = b.block
        header = ft.fn.append_basic_block("copy.header")
        body = ft.fn.append_basic_block("copy.body")
        b.branch(header)
        b.position_at_end(header)
        i = b.phi(I64)
        i.add_incoming(const_i64(0), pre)
        b.cbranch(b.icmp_signed("<", i, size), body, exit_block := ft.fn.append_basic_block("copy.exit"))
        b.position_at_end(body)
        indices.append(i)
        exits.append((header, i, exit_block))
    value = load_element(b, ft.element_address(src, indices), src.element)
    store_element(b, value, ft.element_address(dst, indices))
    for header, i, exit_block in reversed(exits):
        nxt = b.add(i, const_i64(1))
        i.add_incoming(nxt, b.block)
        b.branch(header)
        b.position_at_end(exit_block)


def _global(mt: ModuleTranslator, op: memref.GlobalOp) -> None:
    """A module global holding the memref's elements (static shape only)."""
    t = op.type
    if not isinstance(t, MemRefType) or any(s == DYNAMIC_INDEX for s in t.get_shape()):
        raise error_at(op, "needs a memref type with a static shape")
    if not has_identity_layout(t):
        raise error_at(op, "with a strided layout is not supported by the LLVM lowering")
    elem = scalar_type(t.element_type)
    count = 1
    for s in t.get_shape():
        count *= s
    array_type = ir.ArrayType(elem, count)
    g = ir.GlobalVariable(mt.llvm, array_type, user_symbol(op.sym_name.data))
    init = op.initial_value
    if isinstance(init, DenseIntOrFPElementsAttr):
        values = list(init.get_values())
        if len(values) != count:
            raise error_at(op, f"has {len(values)} initial values for {count} elements")
        g.initializer = ir.Constant(array_type, [ir.Constant(elem, v) for v in values])
    else:  # uninitialized: zeros, like a C global
        g.initializer = ir.Constant(array_type, None)
    g.global_constant = op.constant is not None
    if op.sym_visibility is not None and op.sym_visibility.data == "private":
        g.linkage = "internal"
    mt.memref_globals[op.sym_name.data] = g


def _get_global(ft: FunctionTranslator, op: memref.GetGlobalOp) -> None:
    name = op.name_.root_reference.data
    g = ft.mt.memref_globals.get(name)
    if g is None:
        raise error_at(op, f"refers to '@{name}', which is not a memref.global of this module")
    t = op.memref.type
    ptr = opaque(ft.b.gep(g, [const_i64(0), const_i64(0)], inbounds=True))
    sizes = [const_i64(s) for s in t.get_shape()]
    ft.set(op.memref, make_memref(ft.b, t, ptr, const_i64(0), sizes, identity_strides(ft.b, sizes)))


MODULE_LOWERINGS = {memref.GlobalOp: _global}

LOWERINGS = {
    memref.GetGlobalOp: _get_global,
    memref.AllocOp: _alloc,
    memref.AllocaOp: _alloca,
    memref.AllocaScopeOp: _alloca_scope,
    memref.DeallocOp: _dealloc,
    memref.LoadOp: _load,
    memref.StoreOp: _store,
    memref.DimOp: _dim,
    memref.RankOp: _rank,
    memref.SubviewOp: _subview,
    memref.CastOp: _cast,
    memref.ReinterpretCastOp: _reinterpret_cast,
    memref.CollapseShapeOp: _collapse_shape,
    memref.ExpandShapeOp: _expand_shape,
    memref.ExtractStridedMetaDataOp: _extract_strided_metadata,
    memref.CopyOp: _copy,
    KeepOp: _keep,
}

