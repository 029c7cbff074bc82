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
- every push directly in the body of one `scf.for` F marked `ad.parallel`
  (not in an `if`, an inner loop or a `while`: then the count per
  iteration is not a constant) with step 1, and every pop directly in the
  body of another marked loop R iterating `0 .. T` with step 1 (the reverse
  loop `ForRule` builds), as many pops as pushes;
- F and R each run at most once while the tape lives (no loop between
  them and the block that creates the tape): the rows are not reused.
The tape's capacity counts every push (the counter lowering relies on it
too), so `capacity / k` rows hold the T iterations.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import scf
from xdsl.ir import Operation

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
    forward: scf.ForOp
    reverse: scf.ForOp
    k: int


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
    for ops, what in ((pushes, "pushed"), (pops, "popped")):
        parents = {op.parent_op() for op in ops}
        if len(parents) != 1:
            return (f"{name} is {what} in more than one place (the loop's body and an inner loop, an if, "
                    f"or code outside it, e.g. at {op_location(ops[-1]) or '?'}): the values per iteration "
                    "are not a fixed number, so it stays a stack")
        loop = next(iter(parents))
        if not (isinstance(loop, scf.ForOp) and PARALLEL_ATTR in loop.attributes):
            return (f"{name} is {what} inside an if, an inner loop or a while loop of the parallel loop "
                    f"(at {op_location(ops[0]) or '?'}): the values per iteration are not a fixed number, so "
                    "it stays a stack")
    forward, reverse = pushes[0].parent_op(), pops[0].parent_op()
    assert isinstance(forward, scf.ForOp) and isinstance(reverse, scf.ForOp)
    if forward is reverse:
        return f"{name} is pushed and popped in one loop: it stays a stack"
    if len(pushes) != len(pops):
        return f"{name}: {len(pushes)} pushes per iteration but {len(pops)} pops: it stays a stack"
    if constant_of(forward.step) != 1:
        return f"{name} is pushed by a loop whose step is not 1: it stays a stack"
    if constant_of(reverse.lb) != 0 or constant_of(reverse.step) != 1:
        return f"{name} is popped by a loop that does not count 0, 1, ...: it stays a stack"
    for loop in (forward, reverse):
        if not _runs_once_within(loop, create):
            return (f"{name} is used by a loop inside another loop (at {op_location(loop) or '?'}): its rows "
                    "would be written again; it stays a stack")
    return FixedLayout(forward, reverse, len(pushes))
