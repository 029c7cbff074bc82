"""Which loops are reversed loop-locally (Tapenade's II-loops).

A top-level `scf.for` of the function whose iterations are independent is
reversed one iteration at a time, right after that iteration's forward:
the gradient runs one loop whose body is the iteration, then its reverse
(`GradientBuilder._reverse_local_loops`). Nothing of the body is taped
across iterations: every value the reverse of an iteration needs is still
in registers. The conditions, each checked here and reported
(`LoopDecision`, in the cache report):

1. memory: no iteration writes memory another iteration reads or writes
   (`AliasAnalysis.iteration_conflict`; shared reads are fine: their
   derivatives are accumulated, and sums commute up to rounding);
2. scalars: each iter_arg that carries a derivative is a sum reduction
   (`s = s + e` or `s = s - e`, the sum used by nothing but the yield), so
   the adjoint of every iteration's sum is the adjoint of the loop's result;
3. timing: nothing after the loop is differentiated (no active op before
   the return, no array result whose seed would reach a shadow the loop
   reads), so the adjoint of the loop's results is known when the loop runs
   (the seeds) and its reverse may come first;
4. shadows: every memref the loop differentiates through is an argument's
   memory or allocated inside the loop (a local array of the function body
   gets its shadow only when the reverse sweep starts);
5. no call in the loop whose reverse reruns it on saved memory
   (a checkpointed call's snapshots are planned for the whole function).

Values defined in the body of a chosen loop are available to the reverse
(the planner treats the body like the function body: `reuse`); values of
blocks nested in it are planned as usual (their tapes stay last-in
first-out: each iteration pops what it pushed).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import MemRefType, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from adpasses.analysis.memref_access import object_of
from adpasses.core.diagnostics import op_location
from adpasses.core.ir_facts import is_function_parameter
from adpasses.core.region_flow import FOR
from adpasses.dialects.ad import FUSED_ATTR


@dataclass(frozen=True)
class LoopDecision:
    loop: Operation
    local: bool
    reason: str

    @property
    def location(self) -> str:
        return op_location(self.loop) or self.loop.name


def choose_local_loops(function: func.FuncOp, activity, alias,  # type: ignore[no-untyped-def]
                       memory_ops: Iterable[Operation] = ()) -> list[LoopDecision]:
    """A decision for each top-level scf.for of `function` that the reverse
    sweep visits (an active op), in program order. `memory_ops`: the ops
    whose reverse reruns them on saved memory (checkpointed calls)."""
    top = function.body.block
    saved = set(memory_ops)
    decisions: list[LoopDecision] = []
    ops = list(top.ops)
    for k, op in enumerate(ops):
        if not isinstance(op, scf.ForOp) or not activity.is_active_op(op):
            continue
        why = _why_not_local(op, ops[k + 1:], activity, alias, saved)
        fused = op.attributes.get(FUSED_ATTR)
        note = f" (fused with the loop at {fused.data}: ad-fuse-loops)" if isinstance(fused, StringAttr) else ""
        if why is None:
            decisions.append(LoopDecision(op, True, "iterations independent (alias analysis): each "
                                                    "iteration reversed right after its forward" + note))
        else:
            decisions.append(LoopDecision(op, False, why + note))
    return decisions


def _why_not_local(loop: scf.ForOp, after: list[Operation], activity, alias,  # type: ignore[no-untyped-def]
                   saved: set[Operation]) -> str | None:
    """Why `loop` cannot be reversed loop-locally (the first condition of
    the module doc that fails, the iterations' own first), or None."""
    why = _why_not_reductions(loop, activity)
    if why is not None:
        return why
    conflict = alias.iteration_conflict(loop)
    if conflict is not None:
        return f"iterations may depend on each other: {conflict}"
    for later in after:
        if isinstance(later, func.ReturnOp):
            for value in later.arguments:
                if isinstance(value.type, MemRefType) and activity.is_active_memory(value):
                    return ("an array result is seeded after the loop: its derivative reaches "
                            "the shadows only in the reverse sweep")
            continue
        if activity.is_active_op(later):
            where = op_location(later) or later.name
            return f"{later.name} at {where} after the loop is differentiated: its reverse comes first"
    for inner in loop.walk():
        if inner in saved:
            return f"{inner.name} at {op_location(inner) or '?'} is rerun on saved memory by the reverse"
        if inner is loop or not activity.is_active_op(inner):
            continue
        for operand in inner.operands:
            if isinstance(operand.type, MemRefType) and activity.is_active_memory(operand):
                obj = object_of(operand).value
                if not (is_function_parameter(obj) or _inside(obj, loop)):
                    return (f"the shadow of {alias.name(obj)} (an array of the function body) "
                            "exists only once the reverse sweep starts")
    return None


def _why_not_reductions(loop: scf.ForOp, activity) -> str | None:  # type: ignore[no-untyped-def]
    """None if each active iter_arg is a sum reduction (see the module doc)."""
    iter_args = FOR.values(loop, "iter_args")
    yielded = FOR.values(loop, "yielded")
    results = FOR.values(loop, "results")
    for j, (arg, out, res) in enumerate(zip(iter_args, yielded, results)):
        if not (activity.is_active(arg) or activity.is_active(out) or activity.is_active(res)):
            continue
        if reduction_term(arg, out) is None:
            name = arg.name_hint or f"#{j}"
            return (f"loop-carried value %{name} is not a sum reduction (s = s + e, the sum used "
                    "only by the yield): each iteration's derivative depends on the next")
    return None


def reduction_term(arg: SSAValue, out: SSAValue) -> SSAValue | None:
    """`e` if `out = arg + e`, `e + arg` or `arg - e`, `arg` used only there
    and `out` only by the yield; else None."""
    uses = list(arg.uses)
    if len(uses) != 1:
        return None
    op = uses[0].operation
    if not op.results or op.results[0] is not out:
        return None
    if len(list(out.uses)) != 1:
        return None
    if isinstance(op, arith.AddfOp):
        return op.rhs if op.lhs is arg else op.lhs
    if isinstance(op, arith.SubfOp) and op.lhs is arg and op.rhs is not arg:
        return op.rhs
    return None


def _inside(value: SSAValue, loop: Operation) -> bool:
    block: Block | None = value.block if isinstance(value, BlockArgument) else value.op.parent_block()  # type: ignore[attr-defined]
    while block is not None:
        parent = block.parent_op()
        if parent is loop:
            return True
        block = parent.parent_block() if parent is not None else None
    return False
