"""Loop-carried values that nothing reads, dropped from an `scf.for`
before `ad-parallelize` outlines it (docs/parallel.md, "What runs in
parallel").

A gradient's forward loop still computes the primal's running sum
(`s += f(V[k], W[k])`) when the gradient does not return the primal. In a
serial loop LLVM deletes that dead sum. Outlined into a parallel chunk, the
sum is the chunk function's result, which the worker stores for the
caller to add up: LLVM no longer sees that the caller never reads it, and
every iteration kept computing it (kernel 3's batch of small gradients:
about 3 ns of 30 per row on one thread, measured 2026-11-26).

Carried value `j` is dead when the loop's result `j` is unused and its
iter_arg is read only by ops that compute nothing else than what the
yield passes on at a dead position: ops whose only effect is their
results (`EffectCache.would_be_trivially_dead`: arithmetic, and ifs and
inner loops made of it, as in `if c: s += e`) and in which nothing can
stop the call (`effects.may_stop`: a bounds-checked load or an integer
division stays, with its check). Those ops are erased and the loop is
rebuilt without the dead positions.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.ir import Block, Operation, SSAValue, Use

from adpasses.core.effects import EffectCache, may_stop
from adpasses.core.ir_walk import nested_ops


def _removable(op: Operation, effects: EffectCache) -> bool:
    """`op` computes its results and nothing else, and nothing in it can
    stop the call."""
    return (bool(op.results) and effects.would_be_trivially_dead(op)
            and not any(may_stop(inner) for inner in nested_ops(op)))


def _dead_positions(loop: scf.ForOp) -> tuple[list[int], list[Operation]]:
    """The dead positions (module doc) and the ops to erase with them, in
    program order (none nested in another)."""
    body = loop.body.block
    terminator = body.last_op
    assert isinstance(terminator, scf.YieldOp)
    dead = [j for j, r in enumerate(loop.results) if not r.uses]
    if not dead:
        return [], []
    effects = EffectCache()
    candidates = [op for op in nested_ops(loop)[1:] if _removable(op, effects)]

    def covered(op: Operation | None, chain: set[Operation]) -> bool:
        # `op` goes with the chain: it is in it or nested in an op of it
        while op is not None and op is not loop:
            if op in chain:
                return True
            op = op.parent_op()
        return False

    while dead:
        allowed = set(dead)

        def dead_use(use: Use, chain: set[Operation]) -> bool:
            return (use.operation is terminator and use.index in allowed) or covered(use.operation, chain)

        chain = set(candidates)
        changed = True
        while changed:  # the ops whose results reach only the chain or a dead yield position
            changed = False
            for op in list(chain):
                if not all(dead_use(u, chain) for r in op.results for u in r.uses):
                    chain.discard(op)
                    changed = True
        keep = [j for j in dead if all(dead_use(u, chain) for u in body.args[1 + j].uses)]
        if keep == dead:
            # (the chain also holds pure ops whose results nothing uses: dead
            # code, erased with it)
            return dead, [op for op in nested_ops(loop)[1:]
                          if op in chain and not covered(op.parent_op(), chain)]
        dead = keep
    return [], []


def drop_dead_carried(loop: scf.ForOp) -> scf.ForOp:
    """`loop`, or the loop that replaces it without its dead carried values
    (module doc)."""
    dead, ops = _dead_positions(loop)
    if not dead:
        return loop
    old = loop.body.block
    terminator = old.last_op
    assert isinstance(terminator, scf.YieldOp)
    live = [j for j in range(len(loop.results)) if j not in dead]
    new_yield = scf.YieldOp(*(terminator.operands[j] for j in live))
    new_yield.location = terminator.location
    old.insert_op_before(new_yield, terminator)
    old.erase_op(terminator)
    for op in reversed(ops):  # users before what they use
        op.parent_block().erase_op(op)  # type: ignore[union-attr]
    block = Block(arg_types=[old.args[0].type, *(old.args[1 + j].type for j in live)])
    for a, b in zip([old.args[0], *(old.args[1 + j] for j in live)], block.args):
        a.replace_all_uses_with(b)
        b.name_hint = a.name_hint
    for op in list(old.ops):
        op.detach()
        block.add_op(op)
    inits: list[SSAValue] = [loop.iter_args[j] for j in live]
    new = scf.ForOp(loop.lb, loop.ub, loop.step, inits, block)
    new.attributes.update(loop.attributes)
    new.location = loop.location
    parent = loop.parent_block()
    assert parent is not None
    parent.insert_op_before(new, loop)
    for j, r in zip(live, new.results):
        loop.results[j].replace_all_uses_with(r)
    parent.erase_op(loop)
    return new


__all__ = ["drop_dead_carried"]
