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
  `scf.if` yielding the returned values, then one return;
- a loop (what `mlir-opt --convert-scf-to-cf` makes of scf.for and
  scf.while, or a hand-written one): a header ^h entered by one `cf.br`
  and ending in `cf.cond_br %c` to the loop's continuation and to an exit
  ^x that has no other predecessor, the continuation being ^h itself (a
  do-while) or a body block ^b (no other predecessor) that ends in
  `cf.br ^h(..)`: `scf.while` whose before region is ^h (it ends in
  `scf.condition(%c)`, negated when the loop continues on false) and whose
  after region is ^b; the values ^h defines that ^b or the code after the
  loop reads pass through the condition, then `cf.br ^x` with what the
  exit edge passed.

What is left (a loop with a second exit (a break) or a second back edge,
a block with several predecessors outside these shapes) is reported by the
caller at the branch: see `clone_primals.check_structured`.
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
        return _lift_branch(block, term) or _lift_loop(block, term)
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


def _lift_loop(header: Block, term: cf.ConditionalBranchOp) -> bool:
    """A loop headed by `header` (the shape in the module docstring) as
    scf.while; False if it has another shape."""
    region = header.parent_region()
    assert region is not None
    if header is region.blocks.first:
        return False
    then_b, else_b = term.then_block, term.else_block

    def back_edge(target: Block) -> bool:  # the edge `target` continues the loop
        if target is header:
            return True
        return (target is not header and _single_predecessor(target, header)
                and isinstance(target.last_op, cf.BranchOp) and target.last_op.successor is header)

    if back_edge(then_b) and not back_edge(else_b):
        body, exit_b, on_true = then_b, else_b, True
    elif back_edge(else_b) and not back_edge(then_b):
        body, exit_b, on_true = else_b, then_b, False
    else:
        return False
    if exit_b is header or not _single_predecessor(exit_b, header):
        return False
    latch = header if body is header else body
    entries = [p for p in header.predecessors() if p is not latch]
    if len(set(entries)) != 1 or set(header.predecessors()) != {entries[0], latch}:
        return False
    entry = entries[0]
    entry_term = entry.last_op
    if not isinstance(entry_term, cf.BranchOp) or entry_term.successor is not header:
        return False
    cont_args = list(term.then_arguments if on_true else term.else_arguments)
    exit_args = list(term.else_arguments if on_true else term.then_arguments)

    # Values of the header read by the body or after the loop pass through
    # the condition (the header becomes a region of its own).
    def outside_header(op: Operation) -> bool:
        while op.parent_region() is not region:
            parent = op.parent_op()
            if parent is None:
                return True
            op = parent
        return op.parent_block() is not header

    defined = list(header.args) + [r for op in header.ops if op is not term for r in op.results]
    escaping = [v for v in defined if any(outside_header(u.operation) for u in v.uses)]
    passed = cont_args + exit_args + escaping
    types = [v.type for v in passed]

    condition = term.cond
    if not on_true:
        true = arith.ConstantOp.from_int_and_width(1, 1)
        negated = arith.XOrIOp(condition, true.result)
        for op in (true, negated):
            op.location = term.location
            header.insert_op_before(op, term)
        condition = negated.result
    cond_op = scf.ConditionOp(condition, *passed)
    cond_op.location = term.location
    header.insert_op_before(cond_op, term)
    term.detach()
    term.erase()

    after = Block(arg_types=types)
    n_cont, n_exit = len(cont_args), len(exit_args)
    if body is header:  # a do-while: the after region passes the values back
        after.add_op(scf.YieldOp(*after.args[:n_cont]))
    else:
        for arg, value in zip(body.args, after.args[:n_cont]):
            arg.replace_all_uses_with(value)
        back = body.last_op
        assert isinstance(back, cf.BranchOp)
        latch_args = list(back.arguments)
        for op in list(body.ops):
            if op is not back:
                op.detach()
                after.add_op(op)
        region.detach_block(body)
        back.detach()
        yield_op = scf.YieldOp(*latch_args)
        yield_op.location = back.location
        after.add_op(yield_op)
        back.erase()
        body.erase()
    region.detach_block(header)
    loop = scf.WhileOp(list(entry_term.arguments), types, Region(header), Region(after))
    loop.location = term.location
    entry.insert_op_before(loop, entry_term)
    for k, value in enumerate(escaping):
        inner = after.args[n_cont + n_exit + k]
        value.replace_uses_with_if(inner, lambda use: after.parent_op() is not None
                                   and loop.is_ancestor(use.operation) and not _in_block(use.operation, header))
        value.replace_uses_with_if(loop.results[n_cont + n_exit + k],
                                   lambda use: not loop.is_ancestor(use.operation))
    exit_br = cf.BranchOp(exit_b, *loop.results[n_cont:n_cont + n_exit])
    exit_br.location = entry_term.location
    entry.insert_op_before(exit_br, entry_term)
    entry_term.detach()
    entry_term.erase()
    return True


def _in_block(op: Operation, block: Block) -> bool:
    """`op` is in `block` or nested in one of its ops."""
    while op.parent_block() is not block:
        parent = op.parent_op()
        if parent is None:
            return False
        op = parent
    return True
