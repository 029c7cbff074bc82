"""Accumulations at indices that vary (`m[j] += e` with `j` computed in
each iteration: the reverse of a gather `x[idx[i]]` adds into
`dx[idx[i]]`) into private copies, so the loop runs in parallel (for
`ad-parallelize`; docs/parallel.md, "The reverse of a parallel loop").

Different iterations may add into the same element, so the loop is not
independent. When every access of the loop to `m`'s memory is such an
accumulation (`v = load m[J]; w = v + e; store w, m[J]`, the same indices,
the load used only by the add, the add only by the store), `m` a noalias
argument or an allocation that nothing else in the loop names, and the
loop is independent once those accumulations go to memory of each
iteration, the loop is rewritten to

    if C * size(m) <= trip count and C * bytes(m) <= PRIVATE_BYTES:
        priv = alloc(C, shape(m)), zeroed
        for c in 0 .. C  (marked parallel: its iterations are independent)
            for i in chunk c of the loop's iterations (c*n/C .. (c+1)*n/C)
                the body, accumulating into priv[c, J]
        for c in 0 .. C: m += priv[c]      (serial: chunk order)
        free priv
    else:
        the loop, serial

with C = PRIVATE_CHUNKS chunks, fixed: the chunks and the order in which
their copies are added do not depend on the thread count, so the result
is the same, bit for bit, on every run and with any number of threads.
The copies' bounds checks are `m`'s (priv[c] has its sizes). Sums the loop
carries are carried by the loop over chunks (each chunk's inner loop
continues its sum: a sum through an inner loop).

The accumulations may go through views of `m` built inside the loop (the
reverse sweep's shadow view `dx[::-1]`, or its broadcast, made in each
iteration from dx's own metadata), when `m` has the identity layout: then
every use of `m` in the chunk's loop (the views, `memref.dim`,
`extract_strided_metadata`) is `priv[c]` cast to `m`'s type (its first
element the base: the same sizes, strides and offset 0), so each view
addresses the same elements of the copy that it addressed of `m`. The
loop's other uses of `m`'s memory are then only views and descriptor reads.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IndexType, IntegerAttr, MemRefType, NoneAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from adpasses.analysis.alias import AliasAnalysis
from adpasses.analysis.memref_access import ObjectKind, object_of
from adpasses.analysis.memref_views import is_view_result, view_source
from adpasses.core.ir_walk import nested_ops
from adpasses.core.region_flow import counted_loop
from adpasses.core.types import byte_size, is_float_type
from adpasses.dialects.ad import PARALLEL_ATTR, UNCHECKED_ATTR
from adpasses.transforms.accumulators import noalias_argument
from adpasses.transforms.batch_loops import row_view

PRIVATE_CHUNKS = 16
"""Private copies per loop: at most this many threads share its work."""

PRIVATE_BYTES = 4 << 20
"""The copies of one loop take at most this much memory (4 MiB: 16 copies
of 32768 float64 elements), and are made only when the loop has at least
as many iterations as the copies have elements (zeroing and adding them
costs less than the loop)."""

Accumulation = tuple[memref.LoadOp, arith.AddfOp, memref.StoreOp]


def _inside(value: SSAValue, loop: Operation) -> bool:
    op = value.owner if isinstance(value.owner, Operation) else value.owner.parent_op()  # type: ignore[union-attr]
    while op is not None:
        if op is loop:
            return True
        op = op.parent_op()
    return False


def accumulations(loop: scf.ForOp, function: func.FuncOp) -> dict[SSAValue, list[Accumulation]]:
    """Memref -> its accumulations in `loop`, for each memref every access
    of the loop to whose object is one (the module doc's conditions)."""
    found: dict[SSAValue, list[Accumulation]] = {}
    for store in nested_ops(loop):
        if not isinstance(store, memref.StoreOp):
            continue
        add = store.value.owner
        if not isinstance(add, arith.AddfOp) or len(list(add.result.uses)) != 1 or add.lhs is add.rhs:
            continue
        load = next((o.owner for o in (add.lhs, add.rhs)
                     if isinstance(o.owner, memref.LoadOp) and o.owner.memref is store.memref
                     and list(o.owner.indices) == list(store.indices) and len(list(o.owner.res.uses)) == 1), None)
        if load is None or not is_float_type(add.result.type):
            continue
        obj = object_of(store.memref)
        m = obj.value
        if _inside(m, loop) or not isinstance(m.type, MemRefType):
            continue
        if store.memref is not m and not (isinstance(m.type.layout, NoneAttr)
                                          and _views_inside(store.memref, m, loop)):
            continue
        if not (obj.kind is ObjectKind.ALLOCATION
                or (obj.kind is ObjectKind.ARGUMENT and noalias_argument(m, function))):
            continue
        found.setdefault(m, []).append((load, add, store))
    own = {op for pairs in found.values() for load, _, store in pairs for op in (load, store)}
    for op in nested_ops(loop)[1:]:
        if op in own or _describes(op):
            continue
        for v in op.operands:
            if isinstance(v.type, MemRefType):
                obj = object_of(v)
                if obj.kind is ObjectKind.UNKNOWN:
                    return {}
                found.pop(obj.value, None)
    for m in list(found):
        # replaced by the copy in the chunk's loop: only where the copy's
        # row, cast to m's type, is m's layout (the identity)
        if through_views(loop, m) and not isinstance(m.type.layout, NoneAttr):  # type: ignore[attr-defined]
            del found[m]
    return found


def _views_inside(view: SSAValue, root: SSAValue, loop: Operation) -> bool:
    """Whether `view` is `root` through views all made inside `loop`."""
    while view is not root:
        owner = view.owner
        if not (is_view_result(view) and isinstance(owner, Operation) and _inside(view, loop)):
            return False
        source = view_source(owner)
        assert source is not None
        view = source
    return True


def _describes(op: Operation) -> bool:
    """A view or a read of a memref's descriptor: touches no element (what
    the view's users do is checked on them)."""
    return (isinstance(op, (memref.DimOp, memref.ExtractStridedMetaDataOp))
            or (bool(op.results) and is_view_result(op.results[0])))


def through_views(loop: scf.ForOp, m: SSAValue) -> bool:
    """Whether `loop` uses `m` other than by the loads and stores of its
    accumulations (views of it, its sizes): privatised by replacing `m`."""
    return any(_within(use.operation, loop) and not isinstance(use.operation, (memref.LoadOp, memref.StoreOp))
               for use in m.uses)


def _independent_with_private(loop: scf.ForOp, function: func.FuncOp, memrefs: list[SSAValue],
                              problem) -> bool:  # type: ignore[no-untyped-def]
    """Would `loop` be parallel (`problem(loop, alias) is None`) if its
    accumulations into `memrefs` went to memory of each iteration? Decided
    on a copy of `function` where they go to an alloc made in the body."""
    trial = function.clone()
    index = nested_ops(function).index(loop)
    copy = nested_ops(trial)[index]
    assert isinstance(copy, scf.ForOp)
    mapped = {old: new for old, new in zip(nested_ops(function), nested_ops(trial))}
    body = copy.body.block
    first = body.first_op
    for m in memrefs:
        new_m = _mapped_value(m, function, trial, mapped)
        t = new_m.type
        assert isinstance(t, MemRefType)
        dims = []
        builder = Builder(InsertPoint.before(first)) if first is not None else Builder(InsertPoint.at_end(body))
        for d, size in enumerate(t.get_shape()):
            if size == DYNAMIC_INDEX:
                k = builder.insert(arith.ConstantOp(IntegerAttr(d, IndexType()))).results[0]
                dims.append(builder.insert(memref.DimOp(new_m, k)).results[0])
        fresh = builder.insert(memref.AllocOp(dims, [], MemRefType(t.element_type, t.get_shape()))).results[0]
        every_use = fresh.type == t and through_views(copy, new_m)  # views of it too
        for use in list(new_m.uses):
            if _within(use.operation, copy) and (every_use or isinstance(use.operation, (memref.LoadOp, memref.StoreOp))):
                use.operation.operands[use.index] = fresh
    return problem(copy, AliasAnalysis(trial)) is None


def _within(op: Operation, loop: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if parent is loop:
            return True
        parent = parent.parent_op()
    return False


def _mapped_value(value: SSAValue, function: func.FuncOp, trial: func.FuncOp, mapped: dict) -> SSAValue:
    args = list(function.body.block.args)
    if value in args:
        return trial.body.block.args[args.index(value)]
    owner = value.owner
    assert isinstance(owner, Operation)
    return mapped[owner].results[list(owner.results).index(value)]


def privatize(loop: scf.ForOp, function: func.FuncOp, problem) -> scf.ForOp | None:  # type: ignore[no-untyped-def]
    """The loop over chunks that replaces `loop` (its accumulations into
    private copies), or None when `loop` does not qualify. `problem` is
    `parallelize.parallel_problem`."""
    if counted_loop(loop) is None:
        return None
    found = accumulations(loop, function)
    if not found or not _independent_with_private(loop, function, list(found), problem):
        return None
    # Only the memrefs whose accumulations stop the proof get copies: a row
    # `dX[i, :]` each iteration accumulates into alone needs none (and its
    # copies, C times all of dX, would rarely be worth making).
    for m in list(found):
        rest = [other for other in found if other is not m]
        if rest and _independent_with_private(loop, function, rest, problem):
            del found[m]
    return _rewrite(loop, found)


def _rewrite(loop: scf.ForOp, found: dict[SSAValue, list[Accumulation]]) -> scf.ForOp:
    index = IndexType()
    b = Builder(InsertPoint.before(loop))
    loc = loop.location

    def emit(op: Operation) -> Operation:
        op.location = loc
        return b.insert(op)

    def const(v: int) -> SSAValue:
        return emit(arith.ConstantOp(IntegerAttr(v, index))).results[0]

    c0, c1, chunks = const(0), const(1), const(PRIVATE_CHUNKS)
    lb, ub, step = loop.lb, loop.ub, loop.step
    span = emit(arith.SubiOp(ub, lb)).results[0]
    span = emit(arith.MaxSIOp(span, c0)).results[0]
    trips = emit(arith.CeilDivSIOp(span, step)).results[0]
    # sizes, and whether the copies are worth it and fit
    shapes: dict[SSAValue, list[SSAValue]] = {}
    ok: SSAValue | None = None
    for m in found:
        t = m.type
        assert isinstance(t, MemRefType)
        dims = [emit(memref.DimOp(m, const(d))).results[0] for d in range(len(t.get_shape()))]
        shapes[m] = dims
        size = dims[0] if dims else c1
        for d in dims[1:]:
            size = emit(arith.MuliOp(size, d)).results[0]
        limit = PRIVATE_BYTES // (PRIVATE_CHUNKS * byte_size(t.element_type))
        fits = emit(arith.CmpiOp(size, const(limit), "sle")).results[0]
        copies = emit(arith.MuliOp(size, chunks)).results[0]
        worth = emit(arith.CmpiOp(copies, trips, "sle")).results[0]
        both = emit(arith.AndIOp(fits, worth)).results[0]
        ok = both if ok is None else emit(arith.AndIOp(ok, both)).results[0]
    assert ok is not None
    result_types = [r.type for r in loop.results]

    # then: the copies
    then = Block()
    tb = Builder(InsertPoint.at_end(then))

    def temit(op: Operation) -> Operation:
        op.location = loc
        return tb.insert(op)

    private: dict[SSAValue, SSAValue] = {}
    for m, dims in shapes.items():
        t = m.type
        assert isinstance(t, MemRefType)
        priv = temit(memref.AllocOp([chunks, *dims], [], MemRefType(t.element_type, [DYNAMIC_INDEX] * (1 + len(dims))))).results[0]
        priv.name_hint = f"{m.name_hint}_private" if m.name_hint else None
        private[m] = priv
        zero = temit(arith.ConstantOp(FloatAttr(0.0, t.element_type))).results[0]
        _nest(tb, loc, [chunks, *dims], c0, c1,
              lambda ib, ivs, priv=priv, zero=zero: _unchecked(ib.insert(memref.StoreOp.get(zero, priv, ivs))))
    chunk_loop_body = Block(arg_types=[index, *result_types])
    c = chunk_loop_body.args[0]
    c.name_hint = "chunk"
    cb = Builder(InsertPoint.at_end(chunk_loop_body))

    def cemit(op: Operation) -> Operation:
        op.location = loc
        return cb.insert(op)

    def chunk_start(k: SSAValue) -> SSAValue:
        first = cemit(arith.DivUIOp(cemit(arith.MuliOp(k, trips)).results[0], chunks)).results[0]
        at = cemit(arith.AddiOp(lb, cemit(arith.MuliOp(first, step)).results[0])).results[0]
        return cemit(arith.MinSIOp(at, ub)).results[0]

    lo = chunk_start(c)
    hi = chunk_start(cemit(arith.AddiOp(c, c1)).results[0])
    viewed = {m for m in found if through_views(loop, m)}
    rows = {m: row_view(cb, private[m], c, m.type) for m in viewed}  # type: ignore[arg-type]
    inner = loop.clone()
    inner.attributes.pop(PARALLEL_ATTR, None)
    inner.operands = [lo, hi, step, *chunk_loop_body.args[1:]]
    cb.insert(inner)
    # m, used through views in the loop, is priv[chunk] there (as m's type)
    for op in nested_ops(inner):
        for k, operand in enumerate(op.operands):
            if operand in rows:
                op.operands[k] = rows[operand]
    # the other accumulations go to priv[chunk, J]
    for old_op, new_op in list(zip(nested_ops(loop), nested_ops(inner))):
        if not (isinstance(old_op, (memref.LoadOp, memref.StoreOp)) and old_op.memref in private
                and old_op.memref not in viewed
                and any(old_op in (load, store) for load, _, store in found[old_op.memref])):
            continue
        priv = private[old_op.memref]
        indices = [c, *new_op.indices]
        if isinstance(new_op, memref.LoadOp):
            made: Operation = memref.LoadOp.get(priv, indices)
        else:
            made = memref.StoreOp.get(new_op.value, priv, indices)
        made.location = new_op.location
        made.attributes.update({k: v for k, v in new_op.attributes.items() if k != UNCHECKED_ATTR})
        block = new_op.parent_block()
        assert block is not None
        block.insert_op_before(made, new_op)  # J is checked against m's sizes (priv[c] has them)
        for r_old, r_new in zip(new_op.results, made.results):
            r_old.replace_all_uses_with(r_new)
        block.erase_op(new_op)
    cb.insert(scf.YieldOp(*inner.results))
    chunk_loop = scf.ForOp(c0, chunks, c1, list(loop.iter_args), chunk_loop_body)
    chunk_loop.location = loc
    chunk_loop.attributes[PARALLEL_ATTR] = loop.attributes[PARALLEL_ATTR]
    tb.insert(chunk_loop)
    # m += priv[0], then priv[1], ... (chunk order)
    for m, dims in shapes.items():
        priv = private[m]

        def add_copies(ib: Builder, ivs: list[SSAValue], m: SSAValue = m, priv: SSAValue = priv) -> None:
            part = _unchecked(ib.insert(memref.LoadOp.get(priv, ivs))).results[0]
            old = _unchecked(ib.insert(memref.LoadOp.get(m, ivs[1:]))).results[0]
            new = ib.insert(arith.AddfOp(old, part)).results[0]
            _unchecked(ib.insert(memref.StoreOp.get(new, m, ivs[1:])))

        _nest(tb, loc, [chunks, *dims], c0, c1, add_copies)
        temit(memref.DeallocOp.get(priv))
    temit(scf.YieldOp(*chunk_loop.results))

    # else: the loop, serial
    serial = Block()
    parent = loop.parent_block()
    assert parent is not None
    guard = scf.IfOp(ok, result_types, [then], [serial])
    guard.location = loc
    parent.insert_op_before(guard, loop)
    for old, new in zip(loop.results, guard.results):
        old.replace_all_uses_with(new)
    loop.detach()
    loop.attributes.pop(PARALLEL_ATTR, None)
    serial.add_op(loop)
    y = scf.YieldOp(*loop.results)
    y.location = loc
    serial.add_op(y)
    return chunk_loop


def _unchecked(op: Operation) -> Operation:
    """An access in bounds by construction (its loop runs over the sizes)."""
    from xdsl.dialects.builtin import UnitAttr

    op.attributes[UNCHECKED_ATTR] = UnitAttr()
    return op


def _nest(b: Builder, loc, sizes: list[SSAValue], c0: SSAValue, c1: SSAValue, body) -> None:  # type: ignore[no-untyped-def]
    """for i0 < sizes[0]: for i1 < sizes[1]: ...: body(builder, [i0, i1, ...])."""

    def build(builder: Builder, k: int, ivs: list[SSAValue]) -> None:
        if k == len(sizes):
            body(builder, ivs)
            return
        block = Block(arg_types=[IndexType()])
        inner = Builder(InsertPoint.at_end(block))
        build(inner, k + 1, [*ivs, block.args[0]])
        inner.insert(scf.YieldOp())
        loop = scf.ForOp(c0, sizes[k], c1, [], block)
        loop.location = loc
        builder.insert(loop)

    build(b, 0, [])


__all__ = ["PRIVATE_BYTES", "PRIVATE_CHUNKS", "accumulations", "privatize"]
