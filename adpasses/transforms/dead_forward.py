"""`ad-dead-forward`: dead code of a gradient function, removed without
losing a bounds check.

The JIT path does not run xDSL's canonicalisation on gradients (LLVM does
that work at O3, faster). But a forward-sweep loop whose loads are dead
(their values are reloaded or not needed by the reverse sweep) is not dead
for LLVM when each load is bounds-checked: the check is an observable
effect, so such a loop stays, with nothing in it but the checks (the
strided difference's forward sweep, docs/benchmarks.md problem 5). MLIR
semantics would let us drop the loads (an out-of-bounds load is undefined
behaviour); our users were promised an IndexError instead.

So a dead, checked load executed in every iteration of an `scf.for` (it is
in the loop's body block, not in a branch), whose indices are affine in the
induction variable with everything else defined outside the loop, is
replaced by two checked loads before the loop, at the first and the last
value of the induction variable (guarded by "the loop runs at all"): an
affine index is monotone in the induction variable, so the two endpoints
bound every index the loop would have checked. The loop itself then usually
dies. A bad index still raises IndexError with the load's location, before
the loop instead of in it (for an index that overruns at the end, the one
the last iteration would have used).

Other dead ops go as in xDSL's `region_dce`, except those whose lowering
checks something: loads that could not be hoisted, subviews, integer
divisions (zero divisor). A loop or branch with a live op inside is live.
What stays only for its check gets an `ad.keep` (dialects/ad.py), so that
xDSL's canonicalize, cse or dce, run later, keep it too.
A dead reverse-sweep load whose twin checks the same indices
(`ad.twin_of`; transforms/elide_shadow_checks) checks nothing new: it goes,
and its twin, a forward load this pass keeps or hoists, keeps the check.

The two endpoint loads keep the load's attributes, its `ad.twin_id`
included, and are told apart by `ad.twin_end` (0: first iteration, 1:
last): `ad-elide-shadow-checks` counts the twin of the reverse sweep's
repeats of the load as present only while both are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator
from xdsl.transforms.dead_code_elimination import LiveSet

from adpasses.analysis.affine_index import Affine, affine_form
from adpasses.dialects.ad import TWIN_END_ATTR, TWIN_ID_ATTR, UNCHECKED_ATTR, KeepOp
from adpasses.core.effects import CHECKED_OPS, EffectCache, may_stop
from adpasses.core.ir_walk import nested_ops
from adpasses.transforms.elide_shadow_checks import Twins, keep_alive
from adpasses.transforms.gradient_marks import marked_functions

class CheckPreservingLiveness(LiveSet):
    """Liveness in which ops with effects, `kept` ops and CHECKED_OPS are
    live by themselves; an op is live when a use of its results is, or an
    op in its regions is; a region's terminator is live when its parent op
    is (xDSL's `LiveSet` keeps every terminator live, so a loop's
    iter_args keep each other alive; here a loop whose results are unused
    and which holds nothing live dies with its whole body)."""

    def __init__(self, root: Operation, kept: set[Operation], removable: dict[Operation, bool],
                 effects: EffectCache | None = None):
        super().__init__()
        self.root = root
        self.kept = kept
        self.removable = removable  # op -> removable, shared between rounds
        self.effects = effects or EffectCache()

    def _essential(self, op: Operation) -> bool:
        if op in self.kept or isinstance(op, CHECKED_OPS):
            return True
        known = self.removable.get(op)
        if known is None:
            # No effect but its results, its regions included (reads allowed);
            # the effects of nested ops are computed once (deep loop nests).
            known = self.removable[op] = self.effects.would_be_trivially_dead(op)
        return not known

    def propagate_op_liveness(self, op: Operation) -> None:
        for region in op.regions:
            self.propagate_region_liveness(region)
        if self.is_live(op):
            return
        parent = op.parent_op()
        if op.has_trait(IsTerminator, value_if_unregistered=True):
            if parent is self.root or (parent is not None and self.is_live(parent)):
                self.set_live(op)
            return
        if (self._essential(op)
                or any(self.is_live(use.operation) for r in op.results for use in r.uses)
                or any(self.is_live(inner) for region in op.regions for block in region.blocks
                       for inner in block.ops if not inner.has_trait(IsTerminator))):
            self.set_live(op)

    def propagate(self) -> None:
        """The least fixpoint of the rules above, from the ops live by
        themselves along "live makes live": a live op makes the ops that
        define its operands live, a live op (not a terminator) its parent,
        a live op with regions their terminators. Rounds of
        `propagate_region_liveness` moved liveness one level into a nest
        per round: O(depth x ops), minutes for 1000 nested ifs."""
        work: list[Operation] = []
        for op in nested_ops(self.root)[1:]:
            if op.has_trait(IsTerminator, value_if_unregistered=True):
                if op.parent_op() is self.root:
                    work.append(op)
            elif self._essential(op):
                work.append(op)
        live = self._live_ops
        live.update(work)
        while work:
            op = work.pop()
            reached = [v.op for v in op.operands if isinstance(v, OpResult)]
            if not op.has_trait(IsTerminator, value_if_unregistered=True):
                parent = op.parent_op()
                if parent is not None and parent is not self.root:
                    reached.append(parent)
            for region in op.regions:
                for block in region.blocks:
                    last = block.last_op
                    if last is not None and last.has_trait(IsTerminator, value_if_unregistered=True):
                        reached.append(last)
            for other in reached:
                if other not in live:
                    live.add(other)
                    work.append(other)
        self.changed = False


def pin_checks(function: func.FuncOp) -> list[KeepOp]:
    """An `ad.keep` at the end of each block of the results of its checked
    loads and CHECKED_OPS, so that xDSL's canonicalize and cse, which erase
    such ops when their values are unused, keep them and their checks.
    Erase the returned ops afterwards (`unpin`), then `remove_dead_code`."""
    by_block: dict[Block, list[SSAValue]] = {}
    for op in function.walk():
        if _checks(op):
            block = op.parent_block()
            assert block is not None
            by_block.setdefault(block, []).extend(op.results)
    pins = []
    for block, values in by_block.items():
        keep = KeepOp(values)
        last = block.last_op
        if last is not None and last.has_trait(IsTerminator):
            block.insert_op_before(keep, last)
        else:
            block.add_op(keep)
        pins.append(keep)
    return pins


def unpin(pins: Sequence[KeepOp]) -> None:
    """Erase the `ad.keep`s of `pin_checks` that are still in the IR."""
    for keep in pins:
        if keep.parent is not None:
            keep.parent.erase_op(keep)


def remove_dead_code(function: func.FuncOp) -> None:
    """Hoist the checks of dead loads out of their loops where possible,
    then delete every dead op that checks nothing (module docstring)."""
    kept: set[Operation] = set()
    seen: set[Operation] = set()
    removable: dict[Operation, bool] = {}
    while True:
        live = _liveness(function, kept, removable)
        dead_loads = [op for op in function.walk() if isinstance(op, memref.LoadOp) and op not in seen
                      and not live.is_live(op) and UNCHECKED_ATTR not in op.attributes]
        if not dead_loads:
            break
        twins = Twins(function)
        for load in dead_loads:
            seen.add(load)
            if twins.proving(load) is not None:
                continue  # its twin's check, which stays, covers it
            ends = _hoist_check(load)
            if ends is None:
                kept.add(load)  # its check stays where it is
            else:
                kept.update(ends)
    live = _liveness(function, kept, removable)
    live.delete_dead(function.body, None)
    # What stays only for its check is pinned, so that a later xDSL pass
    # (canonicalize, cse, dce: to them an unused load is dead) keeps it too.
    keep_alive(op for op in function.walk() if _checks(op) and not any(r.uses for r in op.results))


def _checks(op: Operation) -> bool:
    """Whether the lowering of `op` may stop the call on a bad operand."""
    return may_stop(op)


def _liveness(function: func.FuncOp, kept: set[Operation],
              removable: dict[Operation, bool]) -> CheckPreservingLiveness:
    live = CheckPreservingLiveness(function, kept, removable)
    live.propagate()
    return live


def _hoist_check(load: memref.LoadOp) -> list[Operation] | None:
    """Checked loads at the first and last iteration of the loop whose body
    holds `load`, inserted before the loop; None if `load` does not qualify."""
    loop = load.parent_op()
    if not isinstance(loop, scf.ForOp) or load.parent_block() is not loop.body.block:
        return None
    iv = loop.body.block.args[0]
    if _inside(load.memref, loop):
        return None
    forms = [affine_form(index) for index in load.indices]
    for form in forms:
        for sym in form.terms:
            if not isinstance(sym, SSAValue) or (sym is not iv and _inside(sym, loop)):
                return None
    builder = Builder(InsertPoint.before(loop))
    runs = builder.insert(arith.CmpiOp(loop.lb, loop.ub, "slt")).result
    guard = scf.IfOp(runs, [], [Block()])
    builder.insert(guard)
    inner = Builder(InsertPoint.at_end(guard.true_region.block))
    span = inner.insert(arith.SubiOp(loop.ub, loop.lb)).result
    one = inner.insert(arith.ConstantOp.from_int_and_width(1, IndexType())).result
    steps = inner.insert(arith.DivSIOp(inner.insert(arith.SubiOp(span, one)).result, loop.step)).result
    last = inner.insert(arith.AddiOp(loop.lb, inner.insert(arith.MuliOp(steps, loop.step)).result)).result
    ends = []
    for which, value in enumerate((loop.lb, last)):
        indices = [_materialize(inner, form, iv, value) for form in forms]
        end = memref.LoadOp.get(load.memref, indices)
        end.attributes.update({k: v for k, v in load.attributes.items() if k != UNCHECKED_ATTR})
        if TWIN_ID_ATTR in end.attributes:
            end.attributes[TWIN_END_ATTR] = IntegerAttr(which, 64)
        inner.insert(end)
        ends.append(end)
    inner.insert(scf.YieldOp())
    # The checks report the load's source location.
    for op in [runs.owner, guard, *guard.true_region.block.ops]:
        op.location = load.location
    return ends


def _inside(value: SSAValue, loop: Operation) -> bool:
    """Whether `value` is defined in `loop` (its block arguments included)."""
    owner = value.op if isinstance(value, OpResult) else value.block.parent_op()  # type: ignore[union-attr]
    return owner is not None and (owner is loop or loop.is_ancestor(owner))


def _materialize(b: Builder, form: Affine, iv: BlockArgument, iv_value: SSAValue) -> SSAValue:
    """`form` as index arithmetic, with `iv_value` for `iv`."""
    total: SSAValue = b.insert(arith.ConstantOp.from_int_and_width(form.const, IndexType())).result
    for sym, coeff in form.terms.items():
        assert isinstance(sym, SSAValue)
        value = iv_value if sym is iv else sym
        if isinstance(value.type, IntegerType):
            value = b.insert(arith.IndexCastOp(value, IndexType())).result
        if coeff != 1:
            c = b.insert(arith.ConstantOp.from_int_and_width(coeff, IndexType())).result
            value = b.insert(arith.MuliOp(value, c)).result
        total = b.insert(arith.AddiOp(total, value)).result
    return total


@dataclass(frozen=True)
class DeadForwardPass(ModulePass):
    """`ad-dead-forward`: `remove_dead_code` on each gradient being built
    (functions marked `ad.gradient_of`; the user's functions stay as
    written)."""

    name = "ad-dead-forward"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in marked_functions(op):
            remove_dead_code(function)


__all__: Sequence[str] = ["CheckPreservingLiveness", "DeadForwardPass", "pin_checks", "remove_dead_code",
                          "unpin"]
