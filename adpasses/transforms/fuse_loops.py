"""`ad-fuse-loops`: adjacent loops over the same range become one loop.

Two `scf.for` ops of the function body (top level: the loops that
loop-local reverse considers), the second right after the first (pure ops
between them that do not use the first's results are moved before it),
with the same bounds and step (the same values, or equal constants, or the
same pure computation), fuse into one loop whose body runs the first
body, then the second, and whose iter_args are both loops' iter_args. It
is legal when nothing of the second loop uses the first's results and the
alias analysis proves that no iteration of one reads or writes memory that
a later iteration of the other (later in the fused order than in the
original) writes (`AliasAnalysis.fusion_conflict`). The fused loop carries
`ad.fused` (the second loop's location, for the cache report).

In the reverse pipeline (`marked-only=true`, before `ad-build-gradients`)
it lets one loop-local reverse (docs/parallel.md) cover what the user wrote
as two loops: `x[i] = x[i] * x[i]` then `s += x[i]` is one sweep.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass

from adpasses.core.diagnostics import op_location
from adpasses.core.effects import OUTPUT, effects_of, is_pure
from adpasses.dialects.ad import FUSED_ATTR, UNCHECKED_ATTR
from adpasses.transforms.gradient_marks import marked_functions


def fuse_loops_in(function: func.FuncOp) -> int:
    """Fuse every legal pair of adjacent loops of `function`, repeatedly (three
    loops in a row become one); returns how many fusions were made."""
    rejected: set[tuple[Operation, Operation]] = set()
    fused = 0
    while True:
        pair = next((p for p in _candidates(function) if (p[0], p[1]) not in rejected), None)
        if pair is None:
            return fused
        first, second, between = pair
        if fusion_conflict(function, first, second) is not None:
            rejected.add((first, second))
            continue
        fuse(first, second, between)
        fused += 1


def _candidates(function: func.FuncOp) -> Iterator[tuple[scf.ForOp, scf.ForOp, list[Operation]]]:
    """(first loop, second loop, the ops between them) for each pair that
    fusion may apply to, before the memory check: loops of the function
    body only, the loops loop-local reverse considers (a nest's inner loops
    stay as written)."""
    for op in list(function.body.block.ops):
        if not isinstance(op, scf.ForOp):
            continue
        between: list[Operation] = []
        nxt = op.next_op
        while nxt is not None and not isinstance(nxt, scf.ForOp):
            if not _movable(nxt, op):
                break
            between.append(nxt)
            nxt = nxt.next_op
        if (isinstance(nxt, scf.ForOp) and _same_range(op, nxt) and not _uses_results(nxt, op)
                and _same_errors_and_output(op, nxt)):
            yield op, nxt, between


def _movable(op: Operation, loop: scf.ForOp) -> bool:
    """`op` (between the loops) may move before `loop`: no regions, no
    effects (or a memref.dim: sizes never change), none of `loop`'s results."""
    if op.regions or not (is_pure(op) or isinstance(op, memref.DimOp)):
        return False
    return not any(isinstance(v, OpResult) and v.op is loop for v in op.operands)


def _uses_results(second: scf.ForOp, first: scf.ForOp) -> bool:
    results = set(first.results)
    return any(v in results for inner in second.walk() for v in inner.operands)


def _same_errors_and_output(first: scf.ForOp, second: scf.ForOp) -> bool:
    """Fused, iteration i of the second body runs before iterations i+1...
    of the first: it must not be able to stop the call (a bounds check, an
    assertion) where the first loop would have stopped it later with
    another error, nor print between the first loop's prints. So: neither
    loop prints; in the second, nothing may stop the call but loads and
    stores whose indices the first body's top level checks at the same
    iteration, on the same memref, before it (kernel 5: `x[i]` in both);
    accesses marked `ad.unchecked` never stop it."""
    for loop in (first, second):
        for op in loop.walk():
            effects = effects_of(op)
            if effects and any(getattr(e, "resource", None) is OUTPUT for e in effects):
                return False
    checked = [op for op in first.body.block.ops if isinstance(op, (memref.LoadOp, memref.StoreOp))
               and UNCHECKED_ATTR not in op.attributes]
    iv_map = {second.body.block.args[0]: first.body.block.args[0]}
    for op in second.walk():
        if op is second or isinstance(op, (scf.YieldOp, memref.DimOp)):
            continue
        if isinstance(op, (memref.LoadOp, memref.StoreOp)):
            if UNCHECKED_ATTR in op.attributes or any(_same_access(c, op, iv_map) for c in checked):
                continue
            return False
        if op.regions and isinstance(op, (scf.ForOp, scf.IfOp)):
            continue  # their bodies are walked; their own operands never stop the call
        if not is_pure(op):
            return False  # a call, an assertion, an allocation, unknown effects
    return True


def _same_access(a: Operation, b: Operation, iv_map: dict[SSAValue, SSAValue]) -> bool:
    if not _same_value(_memref(a), _memref(b), 4, iv_map):
        return False
    ia, ib = list(a.indices), list(b.indices)  # type: ignore[attr-defined]
    return len(ia) == len(ib) and all(_same_value(x, y, 4, iv_map) for x, y in zip(ia, ib))


def _memref(op: Operation) -> SSAValue:
    return op.memref  # type: ignore[attr-defined]


def _same_range(a: scf.ForOp, b: scf.ForOp) -> bool:
    return all(_same_value(x, y, 4) for x, y in ((a.lb, b.lb), (a.ub, b.ub), (a.step, b.step)))


def _same_value(a: SSAValue, b: SSAValue, depth: int,
                mapping: dict[SSAValue, SSAValue] | None = None) -> bool:
    """`a` and `b` certainly hold the same value: the same SSA value (`b`
    read through `mapping`: the second loop's iv is the first's), or the
    same pure op (or memref.dim) with the same properties on the same values."""
    if mapping and b in mapping:
        return a is mapping[b]
    if a is b:
        return True
    if depth == 0 or not isinstance(a, OpResult) or not isinstance(b, OpResult):
        return False
    x, y = a.op, b.op
    if x.name != y.name or a.index != b.index or x.properties != y.properties or x.regions or y.regions:
        return False
    if not (is_pure(x) or isinstance(x, memref.DimOp)):
        return False
    return len(x.operands) == len(y.operands) and all(
        _same_value(u, v, depth - 1, mapping) for u, v in zip(x.operands, y.operands))


def fusion_conflict(function: func.FuncOp, first: scf.ForOp, second: scf.ForOp) -> str | None:
    """Why fusing `first` and `second` could change what the function
    computes (memory), or None. Decided on a fused copy of the function."""
    from adpasses.analysis.alias import AliasAnalysis

    ops = list(function.walk())
    trial = function.clone()
    trial_ops = list(trial.walk())
    t_first, t_second = trial_ops[ops.index(first)], trial_ops[ops.index(second)]
    assert isinstance(t_first, scf.ForOp) and isinstance(t_second, scf.ForOp)
    body1 = list(t_first.body.block.ops)[:-1]
    body2 = list(t_second.body.block.ops)[:-1]
    block = function.parent_block()
    assert block is not None
    block.insert_op_after(trial, function)  # callee summaries need the module
    try:
        fused = fuse(t_first, t_second, [])
        return AliasAnalysis(trial).fusion_conflict(fused, body1, body2)
    finally:
        block.detach_op(trial)
        trial.erase(safe_erase=False)


def fuse(first: scf.ForOp, second: scf.ForOp, between: list[Operation]) -> scf.ForOp:
    """One loop running `first`'s body, then `second`'s; `between` moves
    before `first`. Returns the fused loop, in `first`'s place."""
    block = first.parent_block()
    assert block is not None
    for op in between:
        op.detach()
        block.insert_op_before(op, first)
    body1, body2 = first.body.block, second.body.block
    n1 = len(body1.args) - 1
    new = Block(arg_types=[body1.args[0].type, *(a.type for a in body1.args[1:]),
                           *(a.type for a in body2.args[1:])])
    new.args[0].name_hint = body1.args[0].name_hint
    for old, arg in zip(body1.args, [new.args[0], *new.args[1:1 + n1]]):
        arg.name_hint = arg.name_hint or old.name_hint
        old.replace_all_uses_with(arg)
    for old, arg in zip(body2.args, [new.args[0], *new.args[1 + n1:]]):
        arg.name_hint = arg.name_hint or old.name_hint
        old.replace_all_uses_with(arg)
    yield1, yield2 = body1.last_op, body2.last_op
    assert isinstance(yield1, scf.YieldOp) and isinstance(yield2, scf.YieldOp)
    for body in (body1, body2):
        for op in list(body.ops)[:-1]:
            op.detach()
            new.add_op(op)
    end = scf.YieldOp(*yield1.operands, *yield2.operands)
    end.location = yield2.location
    new.add_op(end)
    fused = scf.ForOp(first.lb, first.ub, first.step, [*first.iter_args, *second.iter_args], new)
    fused.location = first.location
    fused.attributes.update(first.attributes)
    where = [w for w in (str(first.attributes[FUSED_ATTR].data) if FUSED_ATTR in first.attributes else "",
                         op_location(second) or "?") if w]
    fused.attributes[FUSED_ATTR] = StringAttr(", ".join(where))
    block.insert_op_before(fused, first)
    for old, res in zip([*first.results, *second.results], fused.results):
        res.name_hint = old.name_hint
        old.replace_all_uses_with(res)
    for loop in (first, second):
        loop.detach()
        loop.erase(safe_erase=False)
    return fused


@dataclass(frozen=True)
class FuseLoopsPass(ModulePass):
    name = "ad-fuse-loops"

    marked_only: bool = False
    """Only the functions being differentiated (`ad.gradient_of`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = (marked_functions(op) if self.marked_only else
                     [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks])
        for function in functions:
            fuse_loops_in(function)
