"""Accumulations into one memory element, as sum reductions (for
`ad-parallelize`; docs/parallel.md, "The reverse of a parallel loop").

In a loop's body (top level), `v = load m[c]; w = v + e; store w, m[c]`
with `m` and `c` defined before the loop, the load used only by the add
and the add only by the store, adds every iteration's `e` into one
element: the adjoint of a scalar read by every iteration (`dw[0]` of a
weight `w[0]`, the adjoint slot of an active float in a loop-local
reverse). Every iteration writes it, so the iterations are not
independent through memory. When no other op of the loop touches `m`'s
memory (`m` is a local allocation or a noalias argument, and nothing else
in the loop names that object; no memref of unknown origin is used in the
loop), the loop is rewritten to carry the sum instead: a new iter_arg
from 0, the load and store removed, and after the loop, if it ran,
`m[c] = m[c] + sum` (checked; `c` defined before the loop, or constants).
The iterations' adds are reassociated
(rounding only). `ad-parallelize` may then run the loop in parallel, the
sum per chunk.
"""

from __future__ import annotations

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import FloatAttr, MemRefType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from adpasses.analysis.memref_access import ObjectKind, object_of
from adpasses.core.ir_walk import nested_ops
from adpasses.core.types import is_float_type
from adpasses.dialects.ad import NOALIAS_ATTRS, UNCHECKED_ATTR


def _inside(value: SSAValue, loop: Operation) -> bool:
    block = value.block if isinstance(value, BlockArgument) else value.owner.parent_block()  # type: ignore[union-attr]
    while block is not None:
        parent = block.parent_op()
        if parent is loop:
            return True
        block = parent.parent_block() if parent is not None else None
    return False


def noalias_argument(value: SSAValue, function: func.FuncOp) -> bool:
    """Whether `value` is an argument of `function` marked noalias."""
    args = list(function.body.block.args)
    if value not in args:
        return False
    attrs = function.arg_attrs.data if function.arg_attrs is not None else ()
    k = args.index(value)
    return k < len(attrs) and any(n in attrs[k].data for n in NOALIAS_ATTRS)


def _candidates(loop: scf.ForOp, function: func.FuncOp) -> list[tuple[memref.LoadOp, arith.AddfOp, memref.StoreOp]]:
    found = []
    for store in loop.body.block.ops:
        if not isinstance(store, memref.StoreOp):
            continue
        add = store.value.owner
        if not isinstance(add, arith.AddfOp) or add.parent_block() is not loop.body.block:
            continue
        if len(list(add.result.uses)) != 1 or not is_float_type(add.result.type):
            continue
        for operand in (add.lhs, add.rhs):
            load = operand.owner
            if (isinstance(load, memref.LoadOp) and load.parent_block() is loop.body.block
                    and load.memref is store.memref and list(load.indices) == list(store.indices)
                    and len(list(load.res.uses)) == 1 and add.lhs is not add.rhs):
                break
        else:
            continue
        m = store.memref
        if _inside(m, loop) or any(_inside(i, loop) and not isinstance(i.owner, arith.ConstantOp)
                                   for i in store.indices):
            continue
        obj = object_of(m)
        if not (obj.kind is ObjectKind.ALLOCATION
                or (obj.kind is ObjectKind.ARGUMENT and noalias_argument(obj.value, function))):
            continue
        if not _alone(loop, obj.value, (load, store)):
            continue
        found.append((load, add, store))
    return found


def _alone(loop: scf.ForOp, root: SSAValue, own: tuple[Operation, ...]) -> bool:
    """No op of `loop` but `own` uses memory of `root`, and none uses a
    memref of unknown origin (which might be it)."""
    for op in nested_ops(loop)[1:]:
        if op in own:
            continue
        for v in op.operands:
            if not isinstance(v.type, MemRefType):
                continue
            obj = object_of(v)
            if obj.value is root or obj.kind is ObjectKind.UNKNOWN:
                return False
    return True


def promote_accumulators(loop: scf.ForOp, function: func.FuncOp) -> scf.ForOp:
    """`loop`, or the loop that replaces it with its accumulations as sums."""
    found = _candidates(loop, function)
    if not found:
        return loop
    old = loop.body.block
    zeros = []
    for load, _add, _store in found:
        zero = arith.ConstantOp(FloatAttr(0.0, load.res.type))
        zero.location = loop.location
        loop.parent_block().insert_op_before(zero, loop)
        zeros.append(zero.result)
    block = Block(arg_types=[a.type for a in old.args] + [z.type for z in zeros])
    for a, b in zip(old.args, block.args):
        a.replace_all_uses_with(b)
        b.name_hint = a.name_hint
    sums = block.args[len(old.args):]
    yield_op = old.last_op
    assert isinstance(yield_op, scf.YieldOp)
    for (load, add, store), acc in zip(found, sums):
        load.res.replace_all_uses_with(acc)
        old.erase_op(store)
        old.erase_op(load)
    for op in list(old.ops):
        op.detach()
        if op is yield_op:
            continue
        block.add_op(op)
    new_yield = scf.YieldOp(*yield_op.operands, *(add.result for _, add, _ in found))
    new_yield.location = yield_op.location
    block.add_op(new_yield)
    yield_op.erase()
    new = scf.ForOp(loop.lb, loop.ub, loop.step, [*loop.iter_args, *zeros], block)
    new.attributes.update(loop.attributes)
    new.location = loop.location
    parent = loop.parent_block()
    parent.insert_op_before(new, loop)
    n = len(loop.results)
    for r, s in zip(loop.results, new.results[:n]):
        r.replace_all_uses_with(s)
    # After the loop, if it ran: m[c] = m[c] + sum (checked: once per loop).
    ran = arith.CmpiOp(loop.lb, loop.ub, "slt")
    ran.location = loop.location
    parent.insert_op_after(ran, new)
    then = Block()
    for (load, _add, store), total in zip(found, new.results[n:]):
        indices = []
        for i in store.indices:
            if _inside(i, new):  # a constant index made in the body: made again here
                copy = i.owner.clone()
                then.add_op(copy)
                i = copy.results[0]
            indices.append(i)
        before = memref.LoadOp.get(store.memref, indices)
        added = arith.AddfOp(before.res, total)
        after = memref.StoreOp.get(added.result, store.memref, indices)
        for op in (before, added, after):
            op.location = store.location
            for name in list(op.attributes):
                if name == UNCHECKED_ATTR:
                    del op.attributes[name]
            then.add_op(op)
    then.add_op(scf.YieldOp())
    guard = scf.IfOp(ran.result, [], [then])
    guard.location = loop.location
    parent.insert_op_after(guard, ran)
    parent.erase_op(loop)
    return new
