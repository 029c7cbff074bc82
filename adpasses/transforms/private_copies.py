"""`ad-private-copies`: a gradient copies the arrays it writes itself, in the
loop that first touches them, instead of its caller copying them before.

`grad(f)` must leave its arguments unchanged, so an array f writes used to
be copied by the caller (`x.copy()`) and its shadow zero-filled
(`np.zeros`), two passes over memory before the gradient's own. Here the
gradient does both: an argument marked `ad.private_copy = K` (K: the index
of its shadow argument, -1 for none) gets a buffer of its own
(`memref.alloc`, freed at the return; a stop frees it as any local array)
that every use of the argument now reads and writes, filled by a loop

    for i in range(len(x)): work[i] = x[i]; dx[i] = 0.0

placed right before the first op of the function that may touch array
contents (only pure ops, `memref.dim` and `ad.shadow_check` come before).
When that op is a loop over the same range and the alias analysis allows
it (`fuse_loops.fusion_conflict`), the fill loop fuses into it, and LLVM
forwards the stored copy and zero to the loop's loads: the copy costs no
pass of its own (kernel 5, the in-place square then sum: one loop reads x
and writes work and dx). The fill has no effect a stop could reveal (the
buffer is private; a stopped call's shadows are discarded), so only memory
decides the fusion.

Applies to rank-1 arguments with the identity layout in a function whose
body is one block; others keep the attribute removed and stay as they are
(`private_copies_in` returns the arguments it rewrote, which the caller
then stops copying).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (DYNAMIC_INDEX, AnyFloat, ArrayAttr, DictionaryAttr, FloatAttr, IndexType,
                                   IntegerAttr, MemRefType, ModuleOp, NoneAttr, UnitAttr)
from xdsl.ir import Block, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from adpasses.core.effects import is_pure
from adpasses.dialects.ad import PRIVATE_COPY_ATTR, UNCHECKED_ATTR, ShadowCheckOp
from adpasses.transforms.fuse_loops import _same_range, _same_value, fuse, fusion_conflict


def marked_arguments(function: func.FuncOp) -> dict[int, int]:
    """Argument index -> its shadow's index (-1: none), for the arguments
    marked `ad.private_copy`."""
    attrs = function.arg_attrs.data if function.arg_attrs is not None else ()
    marked = {}
    for k, a in enumerate(attrs):
        value = a.data.get(PRIVATE_COPY_ATTR)
        if isinstance(value, IntegerAttr):
            marked[k] = value.value.data
    return marked


def _unmark(function: func.FuncOp, k: int) -> None:
    attrs = list(function.arg_attrs.data)  # type: ignore[union-attr]
    attrs[k] = DictionaryAttr({n: v for n, v in attrs[k].data.items() if n != PRIVATE_COPY_ATTR})
    function.arg_attrs = ArrayAttr(attrs)


def _eligible(function: func.FuncOp, k: int, shadow: int) -> bool:
    args = function.body.block.args
    t = args[k].type
    if not (isinstance(t, MemRefType) and len(t.get_shape()) == 1 and isinstance(t.layout, NoneAttr)):
        return False
    if shadow < 0:
        return True
    if not (0 <= shadow < len(args)) or shadow == k:
        return False
    s = args[shadow].type
    return (isinstance(s, MemRefType) and len(s.get_shape()) == 1 and s.element_type == t.element_type
            and isinstance(t.element_type, AnyFloat))


def _first_content_op(block: Block) -> Operation:
    """The first op that may read or write array contents (the terminator
    if none does)."""
    for op in block.ops:
        if op is block.last_op:
            return op
        if isinstance(op, (memref.DimOp, ShadowCheckOp)) or (not op.regions and is_pure(op)):
            continue
        return op
    raise AssertionError("a function body ends with its terminator")


def private_copies_in(function: func.FuncOp) -> list[int]:
    """Rewrite the marked arguments of `function` (module docstring); returns
    the indices of those rewritten, in order. Every mark is removed."""
    marked = marked_arguments(function)
    if not marked:
        return []
    single = len(function.body.blocks) == 1 and isinstance(function.body.block.last_op, func.ReturnOp)
    done = [k for k, s in sorted(marked.items()) if single and _eligible(function, k, s)]
    for k in marked:
        _unmark(function, k)
    if not done:
        return []
    block = function.body.block
    anchor = _first_content_op(block)
    ret = block.last_op
    assert ret is not None
    first = block.first_op
    assert first is not None

    def before(op: Operation, where: Operation) -> SSAValue:
        block.insert_op_before(op, where)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    index = IndexType()
    fills: list[scf.ForOp] = []
    for k in done:
        x = block.args[k]
        t = x.type
        assert isinstance(t, MemRefType)
        uses = [u.operation for u in x.uses]
        c0 = before(arith.ConstantOp(IntegerAttr(0, index)), first)
        n = before(memref.DimOp(x, c0), first)
        work = before(memref.AllocOp([n] if t.get_shape()[0] == DYNAMIC_INDEX else [], [], t), first)
        work.name_hint = f"{x.name_hint or 'arg'}_private"
        for op in uses:
            op.operands = [work if v is x else v for v in op.operands]
        before(memref.DeallocOp.get(work), ret)
        # The fill's range as the loops the frontend writes spell it (0,
        # dim(work, 0), 1), so that fuse_loops sees the same range.
        lb = before(arith.ConstantOp(IntegerAttr(0, index)), anchor)
        step = before(arith.ConstantOp(IntegerAttr(1, index)), anchor)
        ub = before(memref.DimOp(work, lb), anchor)
        zero = None
        shadow = marked[k]
        if shadow >= 0:
            zero = before(arith.ConstantOp(FloatAttr(0.0, t.element_type)), anchor)
        body = Block(arg_types=[index])
        i = body.args[0]
        load = memref.LoadOp.get(x, [i])
        ops: list[Operation] = [load, memref.StoreOp.get(load.res, work, [i])]
        if zero is not None:
            ops.append(memref.StoreOp.get(zero, block.args[shadow], [i]))
        for op in ops:
            op.attributes[UNCHECKED_ATTR] = UnitAttr()  # i < len(x) = len(work) = len(dx)
            body.add_op(op)
        body.add_op(scf.YieldOp())
        loop = scf.ForOp(lb, ub, step, [], Region(body))
        loop.location = function.location
        fills.append(loop)
    for loop in fills:  # after every fill's constants: the fills are adjacent
        block.insert_op_before(loop, anchor)
    # Fuse from the last fill (next to the anchor) back to the first.
    for loop in reversed(fills):
        nxt = loop.next_op
        if isinstance(nxt, scf.ForOp) and _same_range(loop, nxt) and fusion_conflict(function, loop, nxt) is None:
            # The fused loop is the user's loop (its location, its marks:
            # ad.parallel, ad.fused) with the fill first in its body.
            location, attributes = nxt.location, dict(nxt.attributes)
            fused = fuse(loop, nxt, [])
            fused.location = location
            fused.attributes.clear()
            fused.attributes.update(attributes)
        # else: the next op is another fill's constants or not a loop over
        # the same range: the fill stays a loop of its own (still correct).
    return done


def copy_inside(gradient: func.FuncOp, activity: tuple[str, ...], written: frozenset[int]) -> frozenset[int]:
    """Mark the `written` primal arguments of a gradient (width 1: each
    argument, then its shadow if `dup`) and rewrite them; returns the primal
    indices rewritten."""
    position, shadow_of = {}, {}
    at = 0
    for k, act in enumerate(activity):
        position[k] = at
        shadow_of[k] = at + 1 if act == "dup" else -1
        at += 1 + (act == "dup")
    args = gradient.body.block.args if gradient.body.blocks else ()
    if len(args) < at or not written:
        return frozenset()
    attrs = list(gradient.arg_attrs.data) if gradient.arg_attrs is not None else \
        [DictionaryAttr({}) for _ in args]
    for k in written:
        attrs[position[k]] = DictionaryAttr({**attrs[position[k]].data,
                                             PRIVATE_COPY_ATTR: IntegerAttr(shadow_of[k], 64)})
    gradient.arg_attrs = ArrayAttr(attrs)
    done = set(private_copies_in(gradient))
    return frozenset(k for k in written if position[k] in done)


@dataclass(frozen=True)
class PrivateCopiesPass(ModulePass):
    """`ad-private-copies`: every function with `ad.private_copy` arguments."""

    name = "ad-private-copies"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.ops):
            if isinstance(f, func.FuncOp) and f.body.blocks:
                private_copies_in(f)



def _runs_parallel_loops(function: func.FuncOp) -> bool:
    from adpasses.dialects.ad import PARALLEL_ATTR

    return any(isinstance(op, scf.ForOp) and PARALLEL_ATTR in op.attributes for op in function.walk())


def _zero_nest(zero: SSAValue, m: SSAValue, lb: SSAValue, step: SSAValue, sizes: list[SSAValue]) -> Block:
    """The body of a loop over m's rows: m[row, ...] = zero, over `sizes`
    (dimensions 1.. of m), stores unchecked (the indices are below m's sizes)."""
    def nest(ivs: list[SSAValue], level: int) -> list[Operation]:
        if level == len(sizes):
            store = memref.StoreOp.get(zero, m, ivs)
            store.attributes[UNCHECKED_ATTR] = UnitAttr()
            return [store]
        inner = Block(arg_types=[IndexType()])
        for op in nest(ivs + [inner.args[0]], level + 1):
            inner.add_op(op)
        inner.add_op(scf.YieldOp())
        return [scf.ForOp(lb, sizes[level], step, [], Region(inner))]

    body = Block(arg_types=[IndexType()])
    body.args[0].name_hint = "row"
    for op in nest([body.args[0]], 0):
        body.add_op(op)
    body.add_op(scf.YieldOp())
    return body


def zero_shadows_inside(gradient: func.FuncOp, activity: tuple[str, ...], skip: frozenset[int]) -> frozenset[int]:
    """For a gradient (width 1, each argument then its shadow if `dup`)
    that has a loop: mark the shadows of its `dup` primal arguments not in
    `skip` (those private_copies_in already zero-fills) `ad.zero_shadow`
    and zero them inside (`zero_marked_shadows`), so that a caller that
    allocates them (grad) passes `np.empty` and no memset runs before the
    call with the GIL held. When the gradient runs parallel loops the fills
    run on the pool; otherwise they are serial loops, which the entry runs
    with the GIL released (Python threads calling one gradient overlap
    them: docs/parallel.md, "Python threads calling one compiled
    gradient"). A gradient without a loop keeps the caller's np.zeros: its
    entry keeps the GIL (`pyentry.releases_gil`), which a fill loop would
    make it give up and take back. Returns the primal indices whose shadows
    it zeroes."""
    from adpasses.dialects.ad import ZERO_SHADOW_ATTR

    if not gradient.body.blocks or not any(isinstance(op, (scf.ForOp, scf.WhileOp)) for op in gradient.walk()):
        return frozenset()
    args = gradient.body.block.args
    at, pairs = 0, []
    for k, act in enumerate(activity):
        if act == "dup" and k not in skip:
            pairs.append((k, at, at + 1))
        at += 1 + (act == "dup")
    if len(args) < at or not pairs:
        return frozenset()
    attrs = list(gradient.arg_attrs.data) if gradient.arg_attrs is not None else \
        [DictionaryAttr({}) for _ in args]
    for _, primal, shadow in pairs:
        attrs[shadow] = DictionaryAttr({**attrs[shadow].data, ZERO_SHADOW_ATTR: IntegerAttr(primal, 64)})
    gradient.arg_attrs = ArrayAttr(attrs)
    done = set(zero_marked_shadows(gradient, parallel=_runs_parallel_loops(gradient)))
    return frozenset(k for k, _, shadow in pairs if shadow in done)


def zero_marked_shadows(function: func.FuncOp, parallel: bool = True) -> list[int]:
    """Zero-fill the arguments of `function` marked `ad.zero_shadow = P`
    (P: the index of its primal) first thing; returns the indices of those
    zeroed (each mark is removed).

    The fill of a shadow is a loop over its rows (dimension 0, the range
    (0, dim(primal, 0), 1) that the frontend's loops over the primal spell:
    ad.shadow_check made the sizes equal; an inner nest over the other
    dimensions), or, for a C-contiguous one of rank 2 or more, over all its
    elements through a flat view (each chunk one memset), placed before the
    first op that may touch array contents and marked `ad.parallel =
    "zero"` (ZERO_FILL_MARK): ad-parallelize runs it in chunks on the pool
    (each thread zeroes, and first touches, its own rows); `parallel=False`
    (a gradient that runs no parallel loop): not marked, a serial loop. A rank-1 fill
    next to a loop over the same range fuses into it when the alias
    analysis allows (as a private copy's fill: LLVM then forwards the zero
    to the loop's first accumulation, and no pass over memory of its own
    remains); other fills stay loops of their own (fused, each iteration
    would call memset for one short row).

    Applies to float memrefs of rank >= 1 whose primal has their rank, in
    a function whose body is one block ending with func.return."""
    from xdsl.dialects.builtin import StringAttr

    from adpasses.dialects.ad import PARALLEL_ATTR, ZERO_FILL_MARK, ZERO_SHADOW_ATTR
    from adpasses.transforms.seed_loops import _flat_view

    attrs = function.arg_attrs.data if function.arg_attrs is not None else ()
    marked = {}
    for k, a in enumerate(attrs):
        value = a.data.get(ZERO_SHADOW_ATTR)
        if isinstance(value, IntegerAttr):
            marked[k] = value.value.data
    if not marked:
        return []
    function.arg_attrs = ArrayAttr([DictionaryAttr({n: v for n, v in a.data.items() if n != ZERO_SHADOW_ATTR})
                                    for a in attrs])
    if len(function.body.blocks) != 1 or not isinstance(function.body.block.last_op, func.ReturnOp):
        return []
    block = function.body.block
    pairs = [(shadow, primal, shadow) for shadow, primal in sorted(marked.items())
             if 0 <= primal < len(block.args) and primal != shadow]
    anchor = _first_content_op(block)
    index = IndexType()

    def before(op: Operation) -> SSAValue:
        block.insert_op_before(op, anchor)
        return op.results[0]

    fills: list[tuple[int, scf.ForOp]] = []
    ranks: dict[int, int] = {}
    extents: dict[int, tuple[list[SSAValue], int]] = {}  # the fill's sizes, bytes per element
    for k, primal, shadow in pairs:
        x, dx = block.args[primal], block.args[shadow]
        t = dx.type
        if not (isinstance(t, MemRefType) and t.get_shape() and isinstance(t.element_type, AnyFloat)
                and isinstance(x.type, MemRefType) and len(x.type.get_shape()) == len(t.get_shape())):
            continue
        lb = before(arith.ConstantOp(IntegerAttr(0, index)))
        step = before(arith.ConstantOp(IntegerAttr(1, index)))
        zero = before(arith.ConstantOp(FloatAttr(0.0, t.element_type)))
        sizes: list[SSAValue] = []
        if len(t.get_shape()) > 1 and isinstance(t.layout, NoneAttr):
            # C-contiguous: one loop over all its elements, through a flat
            # view (each chunk of the parallel loop one memset).
            dx = _flat_view(Builder(InsertPoint.before(anchor)), dx)
            ub = before(memref.DimOp(dx, lb))
        else:
            ub = before(memref.DimOp(x, lb))
            sizes = [before(memref.DimOp(dx, before(arith.ConstantOp(IntegerAttr(d, index)))))
                     for d in range(1, len(t.get_shape()))]
        loop = scf.ForOp(lb, ub, step, [], Region(_zero_nest(zero, dx, lb, step, sizes)))
        loop.location = function.location
        if parallel:
            loop.attributes[PARALLEL_ATTR] = StringAttr(ZERO_FILL_MARK)
        fills.append((k, loop))
        ranks[k] = len(t.get_shape())
        extents[k] = ([ub, *sizes], t.element_type.bitwidth // 8)
    # After every fill's constants, rank-1 fills last (next to the anchor: fusable).
    fills.sort(key=lambda kl: ranks[kl[0]] == 1)
    for _, loop in fills:
        block.insert_op_before(loop, anchor)
    alone = dict(fills)
    for k, loop in reversed(fills):
        nxt = loop.next_op
        if ranks[k] != 1 or not isinstance(nxt, scf.ForOp):
            break  # a nest, or not next to a loop: this fill and those before stay
        if not _same_range(loop, nxt):
            stepped = _stepped_fill(function, loop, nxt)
            if stepped is None:
                break
            loop = stepped
        if fusion_conflict(function, loop, nxt) is not None:
            break
        location, attributes = nxt.location, dict(nxt.attributes)
        loop.body.block.args[0].name_hint = nxt.body.block.args[0].name_hint  # the user's name (reports)
        fused = fuse(loop, nxt, [])
        fused.location = location
        fused.attributes.clear()
        fused.attributes.update(attributes)
        del alone[k]
    if not parallel:
        # A serial fill of its own runs only below SERIAL_ZERO_FILL_BYTES
        # (grad passes np.zeros from there on: calloc's fresh pages need no
        # pass of ours). A fused one costs a store the loop's load reads.
        for k, loop in alone.items():
            _below_fill_bytes(loop, *extents[k])
    return sorted(k for k, _ in fills)


def _below_fill_bytes(loop: scf.ForOp, sizes: list[SSAValue], itemsize: int) -> None:
    """Run `loop` only when the product of `sizes` is below
    SERIAL_ZERO_FILL_BYTES / itemsize elements."""
    from adpasses.core.parallel import SERIAL_ZERO_FILL_BYTES

    if loop.parent is None:  # replaced (a stepped fill, `_stepped_fill`): left unguarded, still right
        return
    b = Builder(InsertPoint.before(loop))
    count = sizes[0]
    for s in sizes[1:]:
        count = b.insert(arith.MuliOp(count, s)).result
    limit = b.insert(arith.ConstantOp(IntegerAttr(SERIAL_ZERO_FILL_BYTES // itemsize, IndexType()))).result
    small = b.insert(arith.CmpiOp(count, limit, "ult")).result
    then = Block()
    guard = b.insert(scf.IfOp(small, [], Region(then)))
    guard.location = loop.location
    loop.detach()
    then.add_op(loop)
    then.add_op(scf.YieldOp())


MAX_FILL_STEP = 8
"""The largest constant step of a loop a rank-1 fill is fitted to (`_stepped_fill`)."""


def _constant_index(v: SSAValue) -> int | None:
    if isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp) and isinstance(v.op.value, IntegerAttr):
        return v.op.value.value.data
    return None


def _stepped_fill(function: func.FuncOp, fill: scf.ForOp, nxt: scf.ForOp) -> scf.ForOp | None:
    """For a rank-1 fill (over 0 .. n) next to a loop from 0 by a constant
    step s (2 .. MAX_FILL_STEP) to n - c, c >= s - 1 (kernel 1's
    `for i in prange(0, len(x) - 1, 2)`): a fill over the loop's range,
    zeroing the elements i .. i + s - 1 in iteration i, and a loop of its
    own for those from s * ceil(ub / s) on, which replace
    `fill` when the alias analysis allows fusing the first into `nxt` (no
    iteration reads an element another zeroes); returns the fill to fuse,
    else None (and `fill` stays)."""
    s = _constant_index(nxt.step)
    if _constant_index(nxt.lb) != 0 or s is None or not 2 <= s <= MAX_FILL_STEP:
        return None
    stores = [op for op in fill.body.block.ops if isinstance(op, memref.StoreOp)]
    if len(stores) != 1 or len(stores[0].indices) != 1:
        return None
    zero, dx, n = stores[0].value, stores[0].memref, fill.ub
    # Only a bound ub = n - c with c >= s - 1: every element an iteration
    # zeroes is then below n, so the stores need no guard (guarded, LLVM
    # could not forward them to the loop's reads: a two-element vector
    # load after two separate stores waits for both).
    ub = nxt.ub
    if not (isinstance(ub, OpResult) and isinstance(ub.op, arith.SubiOp) and _same_value(ub.op.lhs, n, 4)):
        return None
    c = _constant_index(ub.op.rhs)
    if c is None or c < s - 1:
        return None
    block = fill.parent_block()
    assert block is not None
    index = IndexType()
    made: list[Operation] = []

    def add(op: Operation) -> SSAValue:
        block.insert_op_before(op, fill)
        made.append(op)
        return op.results[0]

    c0, c1, cs = (add(arith.ConstantOp(IntegerAttr(v, index))) for v in (0, 1, s))
    covered = add(arith.MuliOp(add(arith.CeilDivSIOp(nxt.ub, cs)), cs))
    start = add(arith.MinSIOp(add(arith.MaxSIOp(covered, c0)), n))
    tail_body = Block(arg_types=[index])
    store = memref.StoreOp.get(zero, dx, [tail_body.args[0]])
    store.attributes[UNCHECKED_ATTR] = UnitAttr()  # start <= e < n
    tail_body.add_op(store)
    tail_body.add_op(scf.YieldOp())
    tail = scf.ForOp(start, n, c1, [], Region(tail_body))
    tail.location = fill.location
    tail.attributes.update(fill.attributes)
    block.insert_op_before(tail, fill)
    body = Block(arg_types=[index])
    i = body.args[0]
    at = [i]
    for j in range(1, s):
        offset = arith.ConstantOp(IntegerAttr(j, index))
        at_op = arith.AddiOp(i, offset.result)
        body.add_op(offset)
        body.add_op(at_op)
        at.append(at_op.result)

    for a in at:  # below n: i <= ub - 1 <= n - s (checked above)
        store = memref.StoreOp.get(zero, dx, [a])
        store.attributes[UNCHECKED_ATTR] = UnitAttr()
        body.add_op(store)
    body.add_op(scf.YieldOp())
    stepped = scf.ForOp(nxt.lb, nxt.ub, nxt.step, [], Region(body))
    stepped.location = fill.location
    block.insert_op_before(stepped, fill)
    fill.detach()
    if fusion_conflict(function, stepped, nxt) is None:
        fill.erase()
        return stepped
    for op in [stepped, tail, *reversed(made)]:
        op.detach()
        op.erase()
    block.insert_op_before(fill, nxt)
    return None


@dataclass(frozen=True)
class ZeroShadowsPass(ModulePass):
    """`ad-zero-shadows{parallel=true}`: every function with `ad.zero_shadow`
    arguments; `parallel=false`: the fills are serial loops (what grad's
    gradients that run no parallel loop get)."""

    name = "ad-zero-shadows"
    parallel: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.ops):
            if isinstance(f, func.FuncOp) and f.body.blocks:
                zero_marked_shadows(f, parallel=self.parallel)
