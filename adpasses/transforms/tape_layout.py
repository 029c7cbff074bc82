"""Fixed tape layouts for parallel loops (used by `ad-lower-tapes`).

A tape is a stack: pushes and pops go through one counter, so a loop that
pushes (or pops) in every iteration carries that counter from iteration to
iteration and can only run serially. When every iteration of a loop marked
parallel pushes the same number k of values, iteration q's values have
known places: row q of a (T, k) buffer, T the trip count. Then the forward
loop stores value j of iteration q at `[q, j]` and the reverse loop, whose
iteration r undoes forward iteration T-1-r, loads pop p (in program order)
from `[T-1-r, k-1-p]`, the same places the counter would have given
(`q*k + j` of a stack) with no counter: each iteration (each chunk of the
parallel loop) touches its own rows, which the alias analysis proves.

`fixed_layout(create)` decides; it requires
- every push in one block: the body of the loop F marked `ad.parallel`,
  or of a counted loop nested in it, or a branch of an `if` in those (a
  branch runs at most once per iteration: its slots are written only when
  it runs, and read only when the reverse's if takes the same branch),
  through counted loops and ifs only (not a `while`: then the count per
  iteration is not a constant), the inner loops with bounds and steps known before the
  tape is made (values defined there, or `memref.dim`s and index
  arithmetic of such values, computed again there: `materialize`); any
  step (positive, as scf.for requires: forward iteration `i` of a loop from
  `lb` by `step` is its `(i - lb) / step`-th, its row; a Python range
  with a negative step is already a loop counting up); every
  pop directly in the body of the matching loop of the reverse nest, each
  of its loops iterating `0 .. T` with step 1 (as `ForRule` builds them),
  as many pops as pushes;
- F and its reverse loop each run at most once while the tape lives (no
  loop between them and the block that creates the tape): the rows are
  not reused.
With inner loops of trip counts m1..md (`ceil((ub - lb) / step)`) the
buffer is (T, m1, ..., md, k).
The tape's capacity counts every push (the counter lowering relies on it
too), so `capacity / (m1*...*md*k)` rows hold the T iterations.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.rewriter import InsertPoint

from adpasses.core.diagnostics import op_location
from adpasses.analysis.affine_index import constant_of
from adpasses.dialects.ad import PARALLEL_ATTR, TapeCreateOp, TapeFreeOp, TapePopOp, TapePushOp, TapeReserveOp

LAYOUT_ATTR = "ad.tape_layout"
"""On the buffer of a tape given a fixed layout: the values per iteration
(an integer attribute); the parallel-loop report names it."""

STACK_ATTR = "ad.tape_stack"
"""On the counter of a tape lowered as a stack although a loop marked
parallel pushes or pops it: why it has no fixed layout (a string); the
parallel-loop report gives it as the reason the loop runs serially."""


@dataclass(frozen=True)
class FixedLayout:
    forward: tuple[scf.ForOp, ...]
    """The loop marked parallel, then the inner counted loops down to the
    one whose body pushes (just the marked loop when it pushes itself)."""
    reverse: tuple[scf.ForOp, ...]
    """The reverse loops, nested likewise; the last one's body pops."""
    k: int
    """Pushes per iteration of the innermost forward loop."""
    push_block: Block
    """The block of the pushes (the innermost loop's body, or a branch in it)."""
    pop_block: Block

    @property
    def inner(self) -> tuple[scf.ForOp, ...]:
        """The inner forward loops, whose trip counts are dimensions."""
        return self.forward[1:]


CLONEABLE = (arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.MaxSIOp, arith.MinSIOp,
             arith.IndexCastOp, memref.DimOp)
"""Pure ops whose result, where their operands are available, is computed
again before the tape is made (an inner loop's bound, `X.shape[1]`,
evaluated in the parallel loop's body)."""


def available_at(value: SSAValue, op: Operation, depth: int = 0) -> bool:
    """Whether `value` is defined before `op` in a block around it, or
    computed by CLONEABLE ops from such values (`materialize`)."""
    if isinstance(value, BlockArgument):
        return value.block.is_ancestor(op)
    assert isinstance(value, OpResult)
    if _defined_before(value, op):
        return True
    return (depth < 8 and isinstance(value.op, CLONEABLE)
            and all(available_at(v, op, depth + 1) for v in value.op.operands))


def _defined_before(value: OpResult, op: Operation) -> bool:
    """Whether `value`'s op stands before `op` in a block enclosing it (so
    the value dominates `op` and can be used there as it is)."""
    block = value.op.parent_block()
    if block is None or not block.is_ancestor(op):
        return False
    ancestor = block.find_ancestor_op_in_block(op)
    return ancestor is not None and ancestor is not value.op and value.op.is_before_in_block(ancestor)


def materialize(value: SSAValue, before: Operation, built: dict[SSAValue, SSAValue]) -> SSAValue:
    """`value` before `before` (cloning CLONEABLE ops; `available_at`)."""
    if value in built:
        return built[value]
    if isinstance(value, BlockArgument):
        return value
    assert isinstance(value, OpResult)
    if _defined_before(value, before):
        return value
    operands = [materialize(v, before, built) for v in value.op.operands]
    clone = value.op.clone()
    for k, v in enumerate(operands):
        clone.operands[k] = v
    Builder(InsertPoint.before(before)).insert(clone)
    built[value] = clone.results[value.index]
    return built[value]


def _marked_loop(op: Operation) -> scf.ForOp | None:
    """The innermost loop marked parallel around `op`, if any."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, scf.ForOp) and PARALLEL_ATTR in parent.attributes:
            return parent
        parent = parent.parent_op()
    return None


def _runs_once_within(loop: Operation, create: Operation) -> bool:
    """Whether `loop` is nested in `create`'s block with no loop between."""
    home = create.parent_block()
    parent = loop.parent_op()
    block = loop.parent_block()
    while block is not home:
        if parent is None or not isinstance(parent, scf.IfOp):
            return False
        block = parent.parent_block()
        parent = parent.parent_op()
    return True


def _nest(block: Block, what: str, name: str, site: Operation) -> tuple[scf.ForOp, ...] | str:
    """The loops from the one marked parallel down to the block of the
    pushes (pops): scf.for, and scf.if between them (a branch runs at most
    once per iteration, and the reverse of the if takes the branch its
    forward took in the same iteration, so a slot written only when the
    branch runs is read only then)."""
    nest: list[scf.ForOp] = []
    op = block.parent_op()
    while isinstance(op, (scf.ForOp, scf.IfOp)):
        if isinstance(op, scf.ForOp):
            nest.append(op)
            if PARALLEL_ATTR in op.attributes:
                return tuple(reversed(nest))
        op = op.parent_op()
    return (f"{name} is {what} inside a while loop (or another region that is not a counted loop or an if) of "
            f"the parallel loop (at {op_location(site) or '?'}): the values per iteration are not a fixed "
            "number, so it stays a stack")


def fixed_layout(create: TapeCreateOp) -> FixedLayout | str | None:
    """The fixed layout of `create`'s tape, or why it has none when a loop
    marked parallel uses it (None when none does: a plain stack)."""
    pushes = [u.operation for u in create.tape.uses if isinstance(u.operation, TapePushOp)]
    pops = [u.operation for u in create.tape.uses if isinstance(u.operation, TapePopOp)]
    others = [u.operation for u in create.tape.uses
              if not isinstance(u.operation, (TapePushOp, TapePopOp, TapeReserveOp, TapeFreeOp))]
    marked = [loop for loop in (_marked_loop(op) for op in pushes + pops) if loop is not None]
    if not marked:
        return None
    name = create.tape.name_hint or "a tape"
    if others:
        return f"{name} is also used by {others[0].name}: it stays a stack"
    if not pushes or not pops:
        return f"{name} is {'popped' if pops else 'pushed'} only: it stays a stack"
    nests = []
    for ops, what in ((pushes, "pushed"), (pops, "popped")):
        blocks = {op.parent_block() for op in ops}
        if len(blocks) != 1:
            return (f"{name} is {what} in more than one place (the loop's body and an inner loop, both branches "
                    f"of an if, or code outside it, e.g. at {op_location(ops[-1]) or '?'}): the values per "
                    "iteration are not a fixed number, so it stays a stack")
        block = next(iter(blocks))
        assert block is not None
        nest = _nest(block, what, name, ops[0])
        if isinstance(nest, str):
            return nest
        nests.append(nest)
    forward, reverse = nests
    if forward[0] is reverse[0]:
        return f"{name} is pushed and popped in one loop: it stays a stack"
    if len(forward) != len(reverse):
        return f"{name} is pushed and popped in loop nests of different depths: it stays a stack"
    if len(pushes) != len(pops):
        return f"{name}: {len(pushes)} pushes per iteration but {len(pops)} pops: it stays a stack"
    for loop in forward[1:]:
        if not (available_at(loop.lb, create) and available_at(loop.ub, create)
                and available_at(loop.step, create)):
            return (f"{name} is pushed in an inner loop (at {op_location(loop) or '?'}) whose trip count is not "
                    "known before the parallel loop starts: the values per iteration are not a fixed number, so "
                    "it stays a stack")
    for loop in reverse:
        if constant_of(loop.lb) != 0 or constant_of(loop.step) != 1:
            return f"{name} is popped by a loop that does not count 0, 1, ...: it stays a stack"
    for loop in (forward[0], reverse[0]):
        if not _runs_once_within(loop, create):
            return (f"{name} is used by a loop inside another loop (at {op_location(loop) or '?'}): its rows "
                    "would be written again; it stays a stack")
    return FixedLayout(forward, reverse, len(pushes), pushes[0].parent_block(), pops[0].parent_block())  # type: ignore[arg-type]
