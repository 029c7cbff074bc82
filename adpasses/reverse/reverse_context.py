"""Where adjoint code is written: one `ReverseContext` per forward block.

The reverse sweep mirrors the structure of the primal function: the reverse
of a loop body, an if branch or a while region is emitted inside a region of
the reverse code, in a child context. A context knows:

- `primal(v)`: the forward value `v` as an SSA value usable here. Values of
  the function's top block are reused directly; values of nested blocks are
  popped from their tape, recomputed or reloaded when the context starts,
  as the cache plan decided (`adpasses.cache.plan`).
- `shadow(m)`: the shadow memref of an active memref `m` (argument shadow,
  a zeroed shadow of a local allocation, or the same view of a shadow).
- `adjoint(v)` / `add_adjoint(v, g)`: the adjoint accumulated so far for a
  float value (None means zero).

Vector reverse mode (`width` N, `ad.autodiff {width = N}`): adjoints and
shadows exist once per *lane* (one per cotangent); primal values are
shared. A rule that reverses one op in place is written for one lane: the
engine calls it once per lane with `lane` set, and `adjoint`, `shadow`,
... read and write that lane. A rule whose op has regions (its reverse
builds a region that the lanes share: one reverse loop, carrying every
lane's adjoints) says so with `lanes = True` and names lanes itself
(`adjoint(v, lane=k)`); it is called once.

Rules (`adpasses.reverse.rules`) emit code only through this API.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    UnitAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue
from xdsl.rewriter import InsertPoint

from adpasses.core.diagnostics import CompileError, error_at, location_text
from adpasses.dialects.ad import OWN_SIZES_ATTR, PY_INDEX_ATTR
from adpasses.core.ir_facts import is_constant, is_function_block_argument
from adpasses.core.region_flow import is_region_terminator
from adpasses.analysis.memref_views import is_allocation, is_view_result, layout_over, view_source
from adpasses.core.types import is_float_type

if TYPE_CHECKING:
    from adpasses.analysis.activity import ActivityAnalysis
    from adpasses.reverse.gradient import GradientBuilder

class ReverseContext:
    def __init__(
        self,
        sweep: GradientBuilder,
        block: Block,
        insert_point: InsertPoint,
        parent: ReverseContext | None = None,
    ):
        self.sweep = sweep
        self.activity: ActivityAnalysis = sweep.activity
        self.block = block
        self.parent = parent
        self.builder = Builder(insert_point)
        self.values: dict[SSAValue, SSAValue] = {}
        self.width: int = sweep.width
        self.lane = 0
        """The lane that `adjoint`, `shadow`, ... read and write by default."""
        self.lane_shadows: list[dict[SSAValue, SSAValue]] = [{} for _ in range(self.width)]
        self.lane_adjoints: list[dict[SSAValue, SSAValue]] = [{} for _ in range(self.width)]
        self._constants: dict[tuple[float | int, Attribute], SSAValue] = {}
        self.loc: Attribute = UnknownLoc()

    @property
    def adjoints(self) -> dict[SSAValue, SSAValue]:
        """The adjoints set in this context, in the current lane."""
        return self.lane_adjoints[self.lane]

    @property
    def shadows(self) -> dict[SSAValue, SSAValue]:
        """The shadows built in this context, in the current lane."""
        return self.lane_shadows[self.lane]

    def changed_in_any_lane(self, value: SSAValue) -> bool:
        """Whether this context set an adjoint of `value` in some lane."""
        return any(value in lane for lane in self.lane_adjoints)

    # -- child contexts ------------------------------------------------------

    def child(
        self,
        block: Block,
        insert_point: InsertPoint,
        known: dict[SSAValue, SSAValue] | None = None,
    ) -> ReverseContext:
        """The context for the reverse of nested `block`; `known` maps values
        the caller provides (e.g. the induction variable), then the block's
        taped values are popped and its recomputed values rebuilt."""
        rc = ReverseContext(self.sweep, block, insert_point, self)
        rc.loc = self.loc
        if known:
            rc.values.update(known)
        rc.materialize_block_values()
        return rc

    def materialize_block_values(self) -> None:
        """Pop, recompute and reload what the cache plan decided for this
        block, and create zeroed shadows of its active allocations."""
        plan = self.sweep.plan
        for value in reversed(plan.taped_in(self.block)):
            tape = self.sweep.tapes[value]
            self.values[value] = self.insert(_tape_pop(tape)).results[0]
        for load in plan.mirrored_loads():
            if load.parent_block() is self.block:
                # Tape once: what the load read is also what an earlier store
                # wrote; its block's reverse, which runs after this one,
                # reads it from the mirror (`shared`).
                self.store(self.values[load.res], self.sweep.mirrors[load],
                           [self.primal(i) for i in load.indices], repeats=load)
        self._pending = set(plan.materialized_in(self.block))
        for value in plan.materialized_in(self.block):
            if value not in self.values:
                self._rebuild(value)
        for op in self.block.ops:
            if is_allocation(op.results[0] if op.results else None) and self.activity.is_active_memory(
                op.results[0]
            ):
                for lane in self.lane_shadows:
                    lane[op.results[0]] = self.sweep.create_shadow_allocation(self, op)

    def _rebuild(self, value: SSAValue) -> None:
        """Re-execute the pure op (or reload) that defined `value`; a stored
        value is loaded from its store's element (`reload`) or from the
        mirror its load's reverse filled (`shared`). What it reads from this
        block is rebuilt first (a store's index may follow the value)."""
        assert isinstance(value, OpResult)
        plan = self.sweep.plan
        store = plan.stored.get(value)
        shared = plan.shared.get(value)
        if store is not None or shared is not None:
            store = store if store is not None else shared[0]  # type: ignore[index]
            for index in store.indices:
                self._rebuild_first(index)
            memory = (self.sweep.mirrors[shared[1]] if shared is not None
                      else self.primal(store.memref))
            self.values[value] = self.load(memory, [self.primal(i) for i in store.indices],
                                           repeats=store)
            return
        op = value.op
        for operand in op.operands:
            self._rebuild_first(operand)
        mapping = {operand: self.primal(operand) for operand in op.operands}
        new = op.clone(value_mapper=mapping)
        if isinstance(new, (memref.LoadOp, memref.SubviewOp)):
            self.sweep.tag_twin(new, op)
        self.builder.insert(new)
        for old, res in zip(op.results, new.results):
            self.values[old] = res

    def _rebuild_first(self, value: SSAValue) -> None:
        if value in getattr(self, "_pending", ()) and value not in self.values:
            self._rebuild(value)

    # -- primal values -------------------------------------------------------

    def primal(self, value: SSAValue) -> SSAValue:
        found = self.primal_if_available(value)
        if found is not None:
            return found
        owner = value.owner if isinstance(value, OpResult) else None
        raise CompileError(
            f"internal error: value {value.name_hint or ''} of "
            f"'{owner.name if isinstance(owner, Operation) else 'block argument'}' "
            "is needed by the reverse sweep but has no cache decision",
            op=owner if isinstance(owner, Operation) else None,
        )

    def primal_if_available(self, value: SSAValue) -> SSAValue | None:
        """The primal `value` in the reverse sweep: cached, recomputed or a
        constant; None where the cache planner made no decision for it."""
        rc: ReverseContext | None = self
        while rc is not None:
            found = rc.values.get(value)
            if found is not None:
                return found
            rc = rc.parent
        if is_constant(value):
            assert isinstance(value, OpResult)
            new = value.op.clone()
            self.insert(new)
            self.values[value] = new.results[0]
            return new.results[0]
        return self.sweep.top_values.get(value)

    # -- shadows -------------------------------------------------------------

    def shadow(self, memref_value: SSAValue) -> SSAValue:
        """The shadow of `memref_value` in the current lane."""
        rc: ReverseContext | None = self
        while rc is not None:
            found = rc.lane_shadows[self.lane].get(memref_value)
            if found is not None:
                return found
            rc = rc.parent
        if is_function_block_argument(memref_value):
            lanes = self.sweep.arg_shadows.get(memref_value)
            found = None if lanes is None else lanes[self.lane]
            if found is None:
                raise CompileError(
                    f"memory of argument %{memref_value.name_hint or ''} receives derivatives but "
                    "has no shadow: declare it 'dup' (Duplicated) instead of 'const'",
                    location=location_text(self.loc),
                )
            return found
        if is_view_result(memref_value):
            assert isinstance(memref_value, OpResult)
            view = memref_value.op
            source = view_source(view)
            assert source is not None
            shadow_source = self.shadow(source)
            layout = layout_over(view, shadow_source, self.insert, self.primal_if_available)
            mapping = {o: (shadow_source if o is source else layout.get(o) or self.primal(o))
                       for o in view.operands}
            new = view.clone(value_mapper=mapping)
            # If the forward sweep checked the primal view against the
            # primal's sizes, which are the shadow's: no second check.
            self.sweep.tag_twin(new, view)
            new = self.insert(new)
            self.shadows[memref_value] = new.results[0]
            return new.results[0]
        owner = memref_value.owner
        rule = self.sweep.rules.shadow_rule_for(owner) if isinstance(owner, Operation) else None
        if rule is not None:
            saved, self.loc = self.loc, owner.location
            shadow = rule.shadow(self, owner)
            self.loc = saved
            self.shadows[memref_value] = shadow
            return shadow
        raise CompileError(
            "an active memref that is not an argument, an allocation or a view of one "
            "(e.g. yielded from a loop or an if) is not supported by reverse mode; choose "
            "between memrefs with arith.select, or move the accesses into the branches (in Python: "
            "an array returned inside an if, which cannot be differentiated yet; assign it in the "
            "branches and return it at the end of the function)",
            op=owner if isinstance(owner, Operation) else None,
        )

    # -- adjoints ------------------------------------------------------------

    def adjoint(self, value: SSAValue, lane: int | None = None) -> SSAValue | None:
        """The adjoint of `value` so far in `lane` (default: the current one)."""
        k = self.lane if lane is None else lane
        rc: ReverseContext | None = self
        while rc is not None:
            found = rc.lane_adjoints[k].get(value)
            if found is not None:
                return found
            rc = rc.parent
        return None

    def add_adjoint(self, value: SSAValue, g: SSAValue, lane: int | None = None) -> None:
        if not self.activity.is_active(value):
            return
        k = self.lane if lane is None else lane
        current = self.adjoint(value, k)
        self.lane_adjoints[k][value] = g if current is None else self.add(current, g)

    def set_adjoint(self, value: SSAValue, g: SSAValue, lane: int | None = None) -> None:
        self.lane_adjoints[self.lane if lane is None else lane][value] = g

    def adjoint_or_zero(self, value: SSAValue, lane: int | None = None) -> SSAValue:
        g = self.adjoint(value, lane)
        return g if g is not None else self.zero(value.type)

    # -- reversing ops -------------------------------------------------------

    def reverse_ops(self, block: Block) -> None:
        """Emit the reverse of every active op of `block`, last op first.
        Terminators of nested blocks belong to their parent op's rule (the
        region op's edges say where their values go)."""
        for op in reversed(list(block.ops)):
            if is_region_terminator(op):
                continue
            if not self.activity.is_active_op(op):
                continue
            rule = self.sweep.rules.rule_for(op)
            if rule is None:
                raise error_at(
                    op,
                    "has no reverse-mode rule, but it computes an active value; "
                    "rewrite it with supported ops or mark its inputs const",
                )
            saved = self.loc
            self.loc = op.location
            if getattr(rule, "lanes", False) or self.width == 1:
                rule.reverse(self, op)
            else:  # a rule for one lane, once per lane
                for k in range(self.width):
                    self.lane = k
                    rule.reverse(self, op)
                self.lane = 0
            self.loc = saved
            self.sweep.after_reverse(self, op)

    # -- building ------------------------------------------------------------

    def insert(self, op: Operation) -> Operation:
        if isinstance(op.location, UnknownLoc):
            op.location = self.loc
        return self.builder.insert(op)

    def const(self, x: float, type_: Attribute) -> SSAValue:
        key = (x, type_)
        rc: ReverseContext | None = self
        while rc is not None:
            if key in rc._constants:
                return rc._constants[key]
            rc = rc.parent
        if is_float_type(type_):
            op = arith.ConstantOp(FloatAttr(float(x), type_))
        else:
            op = arith.ConstantOp(IntegerAttr(int(x), type_))
        value = self.insert(op).results[0]
        self._constants[key] = value
        return value

    def zero(self, type_: Attribute) -> SSAValue:
        return self.const(0, type_)

    def index(self, n: int) -> SSAValue:
        return self.const(n, IndexType())

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """Accumulation of adjoints (the only arithmetic the engine writes;
        a scalar op's adjoint comes from its entry's partials, adpasses/ops/)."""
        return self.insert(arith.AddfOp(a, b)).results[0]

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.insert(arith.SelectOp(cond, a, b)).results[0]

    # Shadow accesses need no bounds checks where that is safe. The
    # gradient function starts with an `ad.shadow_check` of every shadow
    # argument against its primal (equal sizes, else the call stops with a
    # ValueError; see GradientBuilder._check_shadow_shapes), shadows of local
    # allocations are allocated with the primal's sizes, and the shadow of a
    # view is the same view of the shadow: every shadow has its primal's
    # sizes. A shadow access that `repeats` a primal access (or view) at the
    # same indices is then in bounds if the forward sweep checked that
    # primal access. The builder only says so: it tags the access with its
    # forward twin (GradientBuilder.tag_twin); accesses over a shadow's
    # `own_sizes` (zeroing, copies) get `ad.own_sizes`. Reloads of the
    # primal (see `_rebuild`) are tagged the same way. The pass
    # `ad-elide-shadow-checks`, run last, marks `ad.unchecked` those whose
    # twin (or loop bounds) the final IR still shows; a pass in between
    # that removes a twin (a dead load) leaves its repeats checked.

    def load(self, memref_value: SSAValue, indices: Sequence[SSAValue], *,
             repeats: Operation | None = None, own_sizes: bool = False) -> SSAValue:
        op = memref.LoadOp.get(memref_value, indices)
        self._tag(op, repeats, own_sizes)
        return self.insert(op).results[0]

    def store(self, value: SSAValue, memref_value: SSAValue, indices: Sequence[SSAValue], *,
              repeats: Operation | None = None, own_sizes: bool = False) -> None:
        op = memref.StoreOp.get(value, memref_value, indices)
        self._tag(op, repeats, own_sizes)
        self.insert(op)

    def accumulate(self, shadow: SSAValue, indices: Sequence[SSAValue], g: SSAValue, *,
                   repeats: Operation | None = None, own_sizes: bool = False) -> None:
        """shadow[indices] += g"""
        old = self.load(shadow, indices, repeats=repeats, own_sizes=own_sizes)
        self.store(self.add(old, g), shadow, indices, repeats=repeats, own_sizes=own_sizes)

    def _tag(self, op: Operation, repeats: Operation | None, own_sizes: bool) -> None:
        if repeats is not None and PY_INDEX_ATTR in repeats.attributes:
            # Same indices as the primal access: a check it keeps reports them as written.
            op.attributes[PY_INDEX_ATTR] = UnitAttr()
        if own_sizes:
            op.attributes[OWN_SIZES_ATTR] = UnitAttr()
        elif repeats is not None:
            self.sweep.tag_twin(op, repeats)

    def loop_nest(
        self, sizes: Sequence[SSAValue], body: Callable[[ReverseContext, list[SSAValue]], None]
    ) -> None:
        """for i0 < sizes[0], i1 < sizes[1], ...: body(rc, [i0, i1, ...]),
        with `rc` writing into the innermost loop body."""
        self._loop_nest(list(sizes), [], body)

    def _loop_nest(self, sizes, indices, body) -> None:  # type: ignore[no-untyped-def]
        if not sizes:
            body(self, indices)
            return
        zero, one = self.index(0), self.index(1)
        block = Block(arg_types=[IndexType()])
        loop = scf.ForOp(zero, sizes[0], one, [], [block])
        self.insert(loop)
        inner = ReverseContext(self.sweep, self.block, InsertPoint.at_end(block), self)
        inner.loc = self.loc
        inner.lane = self.lane
        inner._loop_nest(sizes[1:], indices + [block.args[0]], body)
        inner.builder.insert(scf.YieldOp())


def _tape_pop(tape: SSAValue) -> Operation:
    from adpasses.dialects.ad import TapePopOp

    return TapePopOp(tape)
