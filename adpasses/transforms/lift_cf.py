"""Lift structured `cf` branches of a function body to `scf`.

Reverse and forward mode differentiate structured control flow; a body
written with `cf.br` / `cf.cond_br` (what `mlir-opt --convert-scf-to-cf`
prints, or a hand-written diamond) is lifted here, on the copy being
differentiated, when its blocks form one of these shapes (repeated to a
fixed point, innermost first):

- a chain: `cf.br ^b(args)` to a block with no other predecessor: the
  block's ops follow in place, its arguments replaced by `args`;
- a diamond: `cf.cond_br %c, ^t(..), ^f(..)` where ^t and ^f have no other
  predecessor and both end in `cf.br ^m(..)` to one block ^m that has no
  other predecessor: `scf.if %c` yielding what each side passes to ^m;
- a triangle: the same with one side branching straight to ^m;
- one target: `cf.cond_br %c, ^m(a..), ^m(b..)` to a block with no other
  predecessor: `arith.select %c, a, b` for each of its arguments;
- two returns: ^t and ^f (no other predecessor) both end in `func.return`:
  `scf.if` yielding the returned values, then one return.

What is left (a loop: a block that branches back to itself or to an
earlier block, a block with several predecessors outside these shapes) is
reported by the caller at the branch: see `clone_primals.check_structured`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, cf, func, scf
from xdsl.ir import Block, Operation, Region, SSAValue


def lift_structured_cf(function: func.FuncOp) -> None:
    """Lift what can be lifted in `function`'s body, in place."""
    region = function.body
    if len(region.blocks) <= 1:
        return
    changed = True
    while changed and len(region.blocks) > 1:
        changed = any(_lift_at(block) for block in list(region.blocks))


def _single_predecessor(block: Block, pred: Block) -> bool:
    preds = list(block.predecessors())
    return len(preds) == 1 and preds[0] is pred and block is not block.parent_region().blocks.first  # type: ignore[union-attr]


def _lift_at(block: Block) -> bool:
    if block.parent is None:
        return False
    term = block.last_op
    if isinstance(term, cf.BranchOp):
        target = term.successor
        if target is block or not _single_predecessor(target, block):
            return False
        _splice(block, term, target, list(term.arguments))
        return True
    if isinstance(term, cf.ConditionalBranchOp):
        return _lift_branch(block, term)
    return False


def _splice(block: Block, term: Operation, target: Block, args: Sequence[SSAValue]) -> None:
    """Replace `term` by the ops of `target` (its arguments bound to `args`)."""
    for arg, value in zip(target.args, args):
        arg.replace_all_uses_with(value)
    term.detach()
    term.erase()
    for op in list(target.ops):
        op.detach()
        block.add_op(op)
    target.parent_region().detach_block(target)  # type: ignore[union-attr]
    target.erase()


def _branch_to(block: Block) -> tuple[Block, list[SSAValue]] | None:
    term = block.last_op
    if isinstance(term, cf.BranchOp):
        return term.successor, list(term.arguments)
    return None


def _lift_branch(block: Block, term: cf.ConditionalBranchOp) -> bool:
    then_b, else_b = term.then_block, term.else_block
    if then_b is else_b and then_b is not block and set(then_b.predecessors()) == {block} \
            and then_b is not then_b.parent_region().blocks.first:  # type: ignore[union-attr]
        # Both edges to one block: its arguments are selects of what each edge passes.
        picks = []
        for t, f in zip(term.then_arguments, term.else_arguments):
            pick = arith.SelectOp(term.cond, t, f)
            pick.location = term.location
            block.insert_op_before(pick, term)
            picks.append(pick.result)
        _splice(block, term, then_b, picks)
        return True
    if then_b is else_b or then_b is block or else_b is block:
        return False
    then_own = _single_predecessor(then_b, block)
    else_own = _single_predecessor(else_b, block)
    # Two sides that both return.
    if then_own and else_own and isinstance(then_b.last_op, func.ReturnOp) \
            and isinstance(else_b.last_op, func.ReturnOp):
        types = [v.type for v in then_b.last_op.arguments]
        if types != [v.type for v in else_b.last_op.arguments]:
            return False
        if_op = _build_if(term, types, then_b, list(term.then_arguments),
                          list(then_b.last_op.arguments), else_b, list(term.else_arguments),
                          list(else_b.last_op.arguments), drop_last=True)
        block.add_op(func.ReturnOp(*if_op.results))
        return True
    # Diamond: both sides branch to one merge block.
    then_exit = _branch_to(then_b) if then_own else None
    else_exit = _branch_to(else_b) if else_own else None
    if then_exit and else_exit and then_exit[0] is else_exit[0]:
        merge = then_exit[0]
        if merge in (block, then_b, else_b) or set(merge.predecessors()) != {then_b, else_b}:
            return False
        if_op = _build_if(term, list(merge.arg_types), then_b, list(term.then_arguments), then_exit[1],
                          else_b, list(term.else_arguments), else_exit[1], drop_last=True)
        _merge_after(block, if_op, merge)
        return True
    # Triangles: one side branches to the other side's target directly.
    if then_exit and then_exit[0] is else_b and set(else_b.predecessors()) == {block, then_b}:
        if_op = _build_if(term, list(else_b.arg_types), then_b, list(term.then_arguments), then_exit[1],
                          None, [], list(term.else_arguments), drop_last=True)
        _merge_after(block, if_op, else_b)
        return True
    if else_exit and else_exit[0] is then_b and set(then_b.predecessors()) == {block, else_b}:
        if_op = _build_if(term, list(then_b.arg_types), None, [], list(term.then_arguments),
                          else_b, list(term.else_arguments), else_exit[1], drop_last=True)
        _merge_after(block, if_op, then_b)
        return True
    return False


def _build_if(term: cf.ConditionalBranchOp, types: list, then_b: Block | None, then_args: list[SSAValue],
              then_yield: list[SSAValue], else_b: Block | None, else_args: list[SSAValue],
              else_yield: list[SSAValue], drop_last: bool) -> scf.IfOp:
    """`scf.if` in place of `term`: each side's ops (its block arguments
    bound to what the branch passed), then a yield of the given values.
    The side blocks are removed from the function."""
    regions = []
    for side, args, values in ((then_b, then_args, then_yield), (else_b, else_args, else_yield)):
        body = Block()
        if side is not None:
            for arg, value in zip(side.args, args):
                arg.replace_all_uses_with(value)
            last = side.last_op
            for op in list(side.ops):
                if drop_last and op is last:
                    continue
                op.detach()
                body.add_op(op)
        yield_op = scf.YieldOp(*values)
        yield_op.location = term.location
        body.add_op(yield_op)
        regions.append(Region(body))
    if_op = scf.IfOp(term.cond, types, regions[0], regions[1])
    if_op.location = term.location
    block = term.parent_block()
    assert block is not None
    block.insert_op_before(if_op, term)
    term.detach()
    term.erase()
    for side in (then_b, else_b):
        if side is not None:
            for op in list(side.ops):
                op.detach()
                op.erase()
            side.parent_region().detach_block(side)  # type: ignore[union-attr]
            side.erase()
    return if_op


def _merge_after(block: Block, if_op: scf.IfOp, merge: Block) -> None:
    """The merge block's ops follow the scf.if, its arguments its results."""
    for arg, value in zip(merge.args, if_op.results):
        arg.replace_all_uses_with(value)
    for op in list(merge.ops):
        op.detach()
        block.add_op(op)
    merge.parent_region().detach_block(merge)  # type: ignore[union-attr]
    merge.erase()
