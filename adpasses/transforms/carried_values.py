"""What a loop's iteration does with each value it carries to the next
(for `ad-parallelize`; docs/parallel.md, "What runs in parallel").

A loop's iterations may run in chunks on several threads when every
loop-carried value (an iter_arg of an scf.for) is

- a **sum** (`"s"`): the value the iteration yields is the one it got plus
  terms that do not depend on it. The running sum `v` flows from the
  iter_arg to the yield through

  - `v + e`, `e + v`, `v - e` (float or integer adds and subtractions),
  - an inner scf.for that carries it as a sum itself (`s += e` inside a
    serial inner loop: the inner iter_arg starts from `v`),
  - an scf.if whose every branch yields it as a sum, unchanged or with
    terms added (`if c: s += e`),

  and no op reads it on the way (each partial sum has one use, the next
  step; no condition, index or stored value depends on it). Each chunk
  then sums its own part from 0 (the first from the loop's initial value)
  and the parts are added in chunk order.

- **kept** (`"k"`): the value yielded is the iter_arg itself, through
  inner loops that keep it and ifs whose branches all yield it (the
  adjoint of a sum, read by every iteration of the sum's reverse). Every
  chunk reads the initial value.

Anything else (a product, a max, `s = 0` in a branch, a partial sum read
by the body) is a recurrence: each iteration needs the one before.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

SUM, KEPT = "s", "k"

_ADDS = (arith.AddfOp, arith.AddiOp)
_SUBS = (arith.SubfOp, arith.SubiOp)


def carried_kind(loop: scf.ForOp, position: int) -> str | None:
    """SUM or KEPT for the loop's iter_arg `position`, or None (a recurrence)."""
    body = loop.body.block
    arg = body.args[1 + position]
    terminator = body.last_op
    assert terminator is not None
    yielded = terminator.operands[position]
    if _equal(yielded, arg):
        return KEPT
    if _sum_to(arg, body, terminator, position):
        return SUM
    return None


def carried_kinds(loop: scf.ForOp) -> list[str | None]:
    return [carried_kind(loop, k) for k in range(len(loop.iter_args))]


# -- sums ---------------------------------------------------------------------------------


def _top_user(use_op: Operation, block: Block) -> Operation | None:
    """The op of `block` that contains `use_op` (or is it)."""
    op: Operation | None = use_op
    while op is not None and op.parent_block() is not block:
        op = op.parent_op()
    return op


def _sum_to(v: SSAValue, block: Block, stop: Operation, position: int) -> bool:
    """`v`, a running sum, reaches operand `position` of `stop` (the
    terminator of `block`) with only terms added, its uses inside `block`
    read by nothing else on the way."""
    uses = [u for u in v.uses if _top_user(u.operation, block) is not None]
    users = {_top_user(u.operation, block) for u in uses}
    if len(users) != 1:
        return False
    (user,) = users
    assert user is not None
    direct = [u for u in uses if u.operation is user]
    if user is stop:
        return len(uses) == 1 and direct[0].index == position
    if isinstance(user, _ADDS + _SUBS):
        if len(uses) != 1:
            return False
        if isinstance(user, _SUBS) and direct[0].index != 0:
            return False  # e - v: the sign flips
        return _sum_to(user.results[0], block, stop, position)
    if isinstance(user, scf.ForOp):
        # the initial value of an inner loop's iter_arg, which carries it as a sum
        if len(uses) != 1 or len(direct) != 1 or direct[0].index < 3:
            return False
        k = direct[0].index - 3
        inner = user.body.block
        if inner.last_op is None or not _sum_to(inner.args[1 + k], inner, inner.last_op, k):
            return False
        return _sum_to(user.results[k], block, stop, position)
    if isinstance(user, scf.IfOp) and not direct and len(user.regions) == 2:
        # read in both branches (not as the condition): each yields it as a
        # sum, at one position
        found: set[int] = set()
        for region in user.regions:
            if not region.blocks or region.block.last_op is None:
                return False
            branch = region.block
            assert branch.last_op is not None
            hits = [p for p in range(len(branch.last_op.operands)) if _sum_to(v, branch, branch.last_op, p)]
            if len(hits) != 1:
                return False
            found.add(hits[0])
        if len(found) != 1:
            return False
        return _sum_to(user.results[found.pop()], block, stop, position)
    return False


# -- kept values ----------------------------------------------------------------------------


def _equal(value: SSAValue, arg: SSAValue) -> bool:
    """`value` is `arg` itself, through inner loops that yield their
    iter_arg unchanged and ifs whose branches all yield it."""
    if value is arg:
        return True
    owner = value.owner
    if isinstance(value, BlockArgument) or not isinstance(owner, (scf.ForOp, scf.IfOp)):
        return False
    k = list(owner.results).index(value)
    if isinstance(owner, scf.ForOp):
        inner = owner.body.block
        if inner.last_op is None or not _equal(inner.last_op.operands[k], inner.args[1 + k]):
            return False
        return _equal(owner.iter_args[k], arg)
    if len(owner.regions) != 2:
        return False
    for region in owner.regions:
        if not region.blocks or region.block.last_op is None:
            return False
        if not _equal(region.block.last_op.operands[k], arg):
            return False
    return True


__all__ = ["KEPT", "SUM", "carried_kind", "carried_kinds"]
