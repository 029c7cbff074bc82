"""Building one gradient function: forward sweep, then reverse sweep.

The generated `func.func` takes the operands of `ad.autodiff` (primal
arguments, a shadow after each dup argument, a seed per active result) and
returns the primal results if asked, then one derivative per active
argument. Its body is:

0. `ad.shadow_check` of each memref shadow argument the reverse sweep uses,
   against its primal (equal sizes, so a shadow access that repeats a
   checked forward access needs no bounds check: each such pair is tagged
   as twins, `tag_twin`, and `ad-elide-shadow-checks` decides last);
1. the forward sweep: a clone of the primal body, with an `ad.tape.push`
   after every value the cache plan tapes (tapes are created just before
   the top-level op that contains the pushes, sized by the trip counts of
   the enclosing loops when those are known there, growable otherwise,
   with an `ad.tape.reserve` before the outermost loop whose nest's trip
   counts are known at its start);
   deallocations in the top block are deferred to the end, so the reverse
   sweep may still reload from those buffers;
2. the reverse sweep: every active op in reverse order, through its rule
   (`adpasses.reverse.rules`), in `ReverseContext`s that mirror the primal regions;
3. the deferred deallocations, and the return.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    UnitAttr,
)
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.rewriter import InsertPoint

from adpasses.analysis.activity import ActivityAnalysis
from adpasses.analysis.memref_views import is_allocation, memory_object
from adpasses.cache.plan import CachePlan, is_recomputable_op
from adpasses.cache.shared_tapes import shared_tape_groups
from adpasses.dialects.ad import (
    BOUNDS_CHECKED_OPS,
    OWN_SIZES_ATTR,
    RESERVED_ATTR,
    WORKSPACE_ATTR,
    TWIN_ID_ATTR,
    TWIN_OF_ATTR,
    UNCHECKED_ATTR,
    ShadowCheckOp,
    SplitPointOp,
    TapeCreateOp,
    TapeFreeOp,
    TapePopOp,
    TapePushOp,
    TapeReserveOp,
)
from adpasses.core.index_arith import saturate, saturating_mul, trip_count
from adpasses.core.ir_facts import home_block, is_constant
from adpasses.core.region_flow import runs_at_most_once, trip_bounds
from adpasses.reverse.reverse_context import ReverseContext

if TYPE_CHECKING:
    from adpasses.reverse.rules import RuleTables


def _defined_inside(value: SSAValue, op: Operation) -> bool:
    """`value` is computed inside `op`'s regions (an induction variable
    of `op` included), so not known before `op` runs."""
    owner = value.op if isinstance(value, OpResult) else value.block.parent_op()  # type: ignore[attr-defined]
    return owner is not None and op.is_ancestor(owner)


class GradientBuilder:
    def __init__(
        self,
        primal: func.FuncOp,
        activity: ActivityAnalysis,
        plan: CachePlan,
        name: str,
        with_primal: bool | Sequence[int],
        rules: RuleTables,
        callee_gradient: Callable[[str, Sequence[str], Sequence[str]], str] | None = None,
        width: int = 1,
        strong_zero: bool = False,
        split: bool = False,
    ):
        self.primal = primal
        self.split = split
        """Split mode: an `ad.split_point` between the sweeps, the shadow
        checks after it (the reverse half reads the shadows, the forward
        half never does); `ad-split-sweeps` cuts the function there."""
        self.strong_zero = strong_zero
        """Enzyme's `strong_zero`: each scalar op's adjoint is zero where its
        seed is (`g == 0 ? 0 : g * partial`), so an inf or nan partial on a
        path the seed does not reach gives no nan."""
        self.width = width
        """Lanes (vector reverse mode): each adjoint and shadow exists `width`
        times, one per cotangent; the forward sweep and the primal values
        the reverse sweep reads (tapes, recomputations) are shared."""
        self.callee_gradient = callee_gradient
        """(callee, activities, result activities) -> the name of the callee's
        gradient function, built by the caller (`ad-build-gradients`): what a
        checkpointed call's reverse calls."""
        self.snapshot_tapes: dict[tuple[Operation, SSAValue], SSAValue] = {}
        self.checkpointed_calls: list[tuple[Operation, str]] = []
        self.forward_state: dict[Operation, object] = {}
        """What rules' `forward` code leaves for their reverse (a revolve call's
        snapshot buffers: rules/revolve.py), by primal op."""
        """(checkpointed call of the primal, the callee gradient its reverse calls)."""
        self.rules = rules  # handed in: the engine does not import the rules
        self.activity = activity
        self.plan = plan
        self.name = name
        n_out = len(primal.function_type.outputs.data)
        self.primal_results = (list(range(n_out)) if with_primal is True else [] if with_primal is False
                               else list(with_primal))
        """The results whose primal the gradient returns (`with_primal`:
        all, none, or those listed, Enzyme's per-result choice)."""
        self.with_primal = bool(self.primal_results)
        self.top_block = primal.body.block
        self.tapes: dict[SSAValue, SSAValue] = {}
        self.shared_tapes: list[list[SSAValue]] = []
        """Groups of taped values of exclusive branches that share one tape
        (cache/shared_tapes.py), for the cache report."""
        self.top_values: dict[SSAValue, SSAValue] = {}
        self.arg_shadows: dict[SSAValue, list[SSAValue]] = {}
        """A dup argument's shadows, one per lane."""
        self.seeds: list[list[SSAValue] | None] = []
        """Per result of the primal: its seeds, one per lane (None if it has none)."""
        self._tapes_to_free: dict[Operation, list[SSAValue]] = {}
        self._forward_ops: dict[Operation, Operation] = {}
        self._twin_ids = 0

    # -- the function ----------------------------------------------------------

    def build(self) -> func.FuncOp:
        acts = self.activity.arg_activity
        rets = self.activity.ret_activity
        ptype = self.primal.function_type
        lanes = range(self.width)
        inputs: list = []
        for ty, act in zip(ptype.inputs.data, acts):
            inputs.append(ty)
            if act in ("dup", "dupnoneed"):
                inputs += [ty] * self.width
        inputs += [ty for ty, act in zip(ptype.outputs.data, rets) if act in ("active", "dup")
                   for _ in lanes]
        outputs = [ptype.outputs.data[k] for k in self.primal_results]
        outputs += [ty for ty, act in zip(ptype.inputs.data, acts) if act == "active" for _ in lanes]
        gradient = func.FuncOp(self.name, (inputs, outputs), arg_attrs=self._argument_attributes())
        gradient.location = self.primal.location
        block = gradient.body.block

        vmap: dict[SSAValue, SSAValue] = {}
        args = iter(block.args)
        for arg, act in zip(self.top_block.args, acts):
            new = next(args)
            new.name_hint = arg.name_hint
            vmap[arg] = new
            if act in ("dup", "dupnoneed"):
                shadows = [next(args) for _ in lanes]
                for shadow in shadows:
                    shadow.name_hint = f"d{arg.name_hint}" if arg.name_hint else None
                self.arg_shadows[arg] = shadows
        for act in rets:
            if act in ("active", "dup"):
                seeds = [next(args) for _ in lanes]
                for seed in seeds:
                    seed.name_hint = "seed" if act == "active" else "dret"
                self.seeds.append(seeds)
            else:
                self.seeds.append(None)

        returned, deferred = self._forward_sweep(block, vmap)
        self._insert_pushes(block, vmap)
        self._insert_snapshots(vmap)
        split_point = None
        if self.split:
            split_point = SplitPointOp()
            split_point.location = self.primal.location
            block.add_op(split_point)

        mirrors = self._allocate_mirrors(block)
        top = ReverseContext(self, self.top_block, InsertPoint.at_end(block))
        top.materialize_block_values()
        top.reverse_ops(self.top_block)
        self._check_shadow_shapes(block, vmap, split_point)
        for dealloc in deferred:
            block.add_op(dealloc.clone(value_mapper=vmap))
        for mirror in mirrors:
            free = memref.DeallocOp.get(mirror)
            free.attributes[WORKSPACE_ATTR] = UnitAttr()
            free.location = self.primal.location
            block.add_op(free)
        kept = _returned_allocations([returned[k] for k in self.primal_results])
        dropped = [v for k, v in enumerate(returned) if k not in self.primal_results]
        for buffer in _returned_allocations(dropped):
            if buffer not in kept:
                # The primal hands these to its caller; the gradient does not return them: free them.
                free = memref.DeallocOp.get(vmap[buffer])
                free.location = self.primal.location
                block.add_op(free)
        results = [vmap.get(returned[k], returned[k]) for k in self.primal_results]
        results += [
            top.adjoint_or_zero(arg, lane=k)
            for arg, act in zip(self.top_block.args, acts) if act == "active" for k in lanes
        ]
        ret = func.ReturnOp(*results)
        ret.location = self.primal.location
        block.add_op(ret)
        return gradient

    def _check_shadow_shapes(self, block: Block, vmap: dict[SSAValue, SSAValue],
                             split_point: Operation | None = None) -> None:
        """`ad.shadow_check` of every memref shadow argument against its
        primal, first thing in the function: with equal sizes, a shadow
        access at indices the forward sweep checked on the primal is in
        bounds, so the reverse sweep's shadow accesses need no check of
        their own while their twin's is there (`tag_twin`,
        transforms/elide_shadow_checks). A shadow the reverse sweep never
        touches (e.g. memory whose loads the activity analysis found
        inactive) is not checked. Called after the reverse sweep; the checks
        go first in the function."""
        checks: list[Operation] = []
        for arg, shadows in self.arg_shadows.items():
            for shadow in shadows:
                if isinstance(arg.type, MemRefType) and shadow.uses:
                    check = ShadowCheckOp(vmap[arg], shadow)
                    check.location = self.primal.location
                    checks.append(check)
        if checks and split_point is not None:  # first thing in the reverse half
            block.insert_ops_after(checks, split_point)
        elif checks:
            assert block.first_op is not None
            block.insert_ops_before(checks, block.first_op)

    def _argument_attributes(self) -> ArrayAttr | None:
        """The primal's argument attributes (e.g. ad.noalias) on each primal
        argument and on its shadows, which are as separate as their primal."""
        attrs = self.primal.arg_attrs
        if attrs is None:
            return None
        result: list[DictionaryAttr] = []
        for d, act in zip(attrs.data, self.activity.arg_activity):
            result.append(d)
            if act in ("dup", "dupnoneed"):
                result += [d] * self.width
        result += [DictionaryAttr({}) for act in self.activity.ret_activity if act in ("active", "dup")
                   for _ in range(self.width)]
        return ArrayAttr(result)

    def _forward_sweep(
        self, block: Block, vmap: dict[SSAValue, SSAValue]
    ) -> tuple[Sequence[SSAValue], list[Operation]]:
        returned: Sequence[SSAValue] = ()
        deferred: list[Operation] = []
        self._clones: dict[Operation, Operation] = {}
        for op in self.top_block.ops:
            if isinstance(op, func.ReturnOp):
                returned = list(op.arguments)
                continue
            if isinstance(op, memref.DeallocOp):
                deferred.append(op)
                continue
            new = op.clone(value_mapper=vmap)
            block.add_op(new)
            self._clones[op] = new
            if self.activity.is_active_op(op):
                # A rule that adds forward-sweep code before its op's clone
                # (a revolve call: snapshot buffers and the first descent).
                forward = getattr(self.rules.rule_for(op), "forward", None)
                if forward is not None:
                    forward(self, op, new)
            for old_op, new_op in zip(op.walk(), new.walk()):
                self._forward_ops[old_op] = new_op
        for arg in self.top_block.args:
            self.top_values[arg] = vmap[arg]
        for op in self.top_block.ops:
            for r in op.results:
                if r in vmap:
                    self.top_values[r] = vmap[r]
        return returned, deferred

    # -- tapes -------------------------------------------------------------------

    def _top_ancestor(self, value: SSAValue) -> Operation:
        op = home_block(value).parent_op()
        assert op is not None
        while op.parent_block() is not self.top_block:
            op = op.parent_op()
            assert op is not None
        return op

    def _insert_pushes(self, block: Block, vmap: dict[SSAValue, SSAValue]) -> None:
        for group in shared_tape_groups(list(self.plan.taped()), self.primal):
            anchor = self._top_ancestor(group[0])
            clone = self._clones[anchor]
            builder = Builder(InsertPoint.before(clone))
            capacities = [self._capacity(value, builder, vmap) for value in group]
            if len(group) > 1 and any(c is None for c in capacities):
                # A growable member: each its own tape (room is reserved per tape).
                self._create_tapes([[v] for v in group], [[c] for c in capacities], anchor, vmap)
            else:
                self._create_tapes([group], [capacities], anchor, vmap)

    def _create_tapes(self, groups: list[list[SSAValue]], capacities: list[list[SSAValue | None]],
                      anchor: Operation, vmap: dict[SSAValue, SSAValue]) -> None:
        """One tape per group (before `anchor`'s forward copy), sized for
        its largest member; the pushes of each member."""
        builder = Builder(InsertPoint.before(self._clones[anchor]))
        for group, caps in zip(groups, capacities):
            capacity = caps[0]
            for other in caps[1:]:  # exclusive members: the largest is enough
                assert capacity is not None and other is not None
                capacity = builder.insert(arith.MaxUIOp(capacity, other)).results[0]
            first = group[0]
            create = builder.insert(TapeCreateOp(first.type, capacity))
            create.location = anchor.location
            tape = create.results[0]
            tape.name_hint = f"tape_{first.name_hint}" if first.name_hint else "tape"
            self._tapes_to_free.setdefault(anchor, []).append(tape)
            if len(group) > 1:
                self.shared_tapes.append(group)
            for value in group:
                self.tapes[value] = tape
                self._push(value, tape, capacity, vmap)

    def _push(self, value: SSAValue, tape: SSAValue, capacity: SSAValue | None,
              vmap: dict[SSAValue, SSAValue]) -> None:
        """`value`'s forward copy pushed on `tape` right where it is made."""
        forward = vmap[value]
        push = TapePushOp(forward, tape)
        if isinstance(forward, OpResult):
            push.location = forward.op.location
            forward.op.parent_block().insert_op_after(push, forward.op)
        else:
            push.location = self._top_ancestor(value).location
            target = forward.block
            if target.first_op is None:
                target.add_op(push)
            else:
                target.insert_op_before(push, target.first_op)
        if capacity is None and self._reserve_room(home_block(value), tape, vmap):
            push.attributes[RESERVED_ATTR] = UnitAttr()

    def _reserve_room(self, block: Block | None, tape: SSAValue, vmap: dict[SSAValue, SSAValue]) -> bool:
        """For a tape whose capacity is unknown before its top-level op (a
        loop nest whose inner trip counts an outer loop computes): an
        `ad.tape.reserve` of the pushes of `block` per run of the
        outermost loop around it whose nest's trip counts are all defined
        outside it, placed just before that loop's forward copy, so the
        pushes test for room once per nest instead of once each (and the
        nest vectorises). False when no loop around `block` qualifies (a
        while loop in between)."""
        assert block is not None
        chain: list[tuple[Operation, tuple[SSAValue, SSAValue, SSAValue]]] = []
        best = 0
        op = block.parent_op()
        while op is not None and op is not self.primal:
            loop = trip_bounds(op)
            if loop is None:
                if not runs_at_most_once(op):  # at most once: an upper bound still holds
                    break
            else:
                chain.append((op, loop))
                if all(not _defined_inside(v, op) for _, bounds in chain for v in bounds):
                    best = len(chain)
            op = op.parent_op()
        if best == 0:
            return False
        outer = chain[best - 1][0]
        builder = Builder(InsertPoint.before(self._forward_ops[outer]))
        total = builder.insert(arith.ConstantOp(IntegerAttr(1, IndexType()))).results[0]
        for _, (lb, ub, step) in chain[:best]:
            n = trip_count(builder, vmap[lb], vmap[ub], vmap[step])
            if not isinstance(n.type, IndexType):  # an scf.for over iN (a count >= 0)
                n = builder.insert(arith.IndexCastOp(n, IndexType())).results[0]
            total = saturating_mul(builder, total, n)
        builder.insert(TapeReserveOp(tape, total)).location = outer.location
        return True

    def _allocate_mirrors(self, block: Block) -> list[SSAValue]:
        """Per taped load whose value a store also needs (`plan.shared`):
        a buffer of the loaded memory's sizes (kept across calls:
        `ad.workspace`), allocated before the reverse sweep. The reverse of
        the load writes what it pops there; the reverse of the store's
        block, which comes after, reads it (tape once)."""
        self.mirrors: dict[Operation, SSAValue] = {}
        builder = Builder(InsertPoint.at_end(block))
        for load in self.plan.mirrored_loads():
            mem = load.memref
            mtype = mem.type
            assert isinstance(mtype, MemRefType)
            sizes = self.memref_sizes(builder, self.top_values[mem])
            dynamic = [s for s, n in zip(sizes, mtype.get_shape()) if n < 0]
            alloc = builder.insert(memref.AllocOp.get(mtype.element_type, shape=mtype.get_shape(),
                                                      dynamic_sizes=dynamic))
            alloc.attributes[WORKSPACE_ATTR] = UnitAttr()
            alloc.location = load.location
            mirror = alloc.results[0]
            mirror.name_hint = f"{mem.name_hint}_mirror" if mem.name_hint else "mirror"
            self.mirrors[load] = mirror
        return list(self.mirrors.values())

    def _insert_snapshots(self, vmap: dict[SSAValue, SSAValue]) -> None:
        """Before each call whose memory the plan snapshots: every element
        of that memref pushed on a tape (row-major), sized for all the
        calls (trip counts of the enclosing loops times the elements)."""
        for need in self.plan.snapshots():
            op, mem = need.op, need.memref
            anchor = self._top_ancestor_op(op)
            builder = Builder(InsertPoint.before(self._clones[anchor]))
            mtype = mem.type
            assert isinstance(mtype, MemRefType)
            per_call = self._capacity_of_block(op.parent_block(), builder, vmap)
            elements = self._element_count(mem, builder, vmap)
            capacity = (None if per_call is None or elements is None
                        else saturating_mul(builder, per_call, elements))
            create = builder.insert(TapeCreateOp(mtype.element_type, capacity))
            create.location = op.location
            tape = create.results[0]
            tape.name_hint = f"snapshot_{mem.name_hint}" if mem.name_hint else "snapshot"
            self.snapshot_tapes[(op, mem)] = tape
            self._tapes_to_free.setdefault(anchor, []).append(tape)
            forward_op = self._forward_ops[op]
            forward_mem = forward_op.operands[list(op.operands).index(mem)]
            at = Builder(InsertPoint.before(forward_op))
            sizes = self.memref_sizes(at, forward_mem)

            def push(b: Builder, idx: list[SSAValue]) -> None:
                load = memref.LoadOp.get(forward_mem, idx)
                load.attributes[OWN_SIZES_ATTR] = UnitAttr()  # 0 <= idx < its own dims
                value = b.insert(load).results[0]
                b.insert(TapePushOp(value, tape)).location = op.location

            _loop_nest(at, sizes, push, op.location)

    def restore_snapshot(self, rc: ReverseContext, op: Operation, mem: SSAValue) -> SSAValue:
        """A scratch buffer (kept across calls: `ad.workspace`) holding the
        contents `mem` had when `op` started, popped from its snapshot tape;
        `release_scratch` frees it after use."""
        tape = self.snapshot_tapes[(op, mem)]
        sizes = self.memref_sizes(rc.builder, rc.primal(mem))
        scratch = self._scratch_alloc(rc, mem, sizes)
        one = rc.index(1)

        def pop(b: Builder, idx: list[SSAValue]) -> None:
            # Popped last first: each index runs backwards.
            back = [b.insert(arith.SubiOp(b.insert(arith.SubiOp(n, one)).results[0], i)).results[0]
                    for n, i in zip(sizes, idx)]
            value = b.insert(TapePopOp(tape)).results[0]
            b.insert(memref.StoreOp.get(value, scratch, back))

        _loop_nest(rc.builder, sizes, pop, rc.loc)
        return self._as_operand_type(rc, scratch, mem)

    def scratch_buffer(self, rc: ReverseContext, mem: SSAValue) -> SSAValue:
        """An uninitialised buffer of `mem`'s sizes (for a call that writes
        it before reading it); `release_scratch` frees it."""
        scratch = self._scratch_alloc(rc, mem, self.memref_sizes(rc.builder, rc.primal(mem)))
        return self._as_operand_type(rc, scratch, mem)

    @staticmethod
    def _scratch_alloc(rc: ReverseContext, mem: SSAValue, sizes: list[SSAValue]) -> SSAValue:
        mtype = mem.type
        assert isinstance(mtype, MemRefType)
        dynamic = [s for s, n in zip(sizes, mtype.get_shape()) if n < 0]
        alloc = rc.insert(memref.AllocOp.get(mtype.element_type, shape=mtype.get_shape(),
                                             dynamic_sizes=dynamic))
        alloc.attributes[WORKSPACE_ATTR] = UnitAttr()  # kept across calls: no allocation per call
        scratch = alloc.results[0]
        scratch.name_hint = f"{mem.name_hint}_at_call" if mem.name_hint else None
        return scratch

    @staticmethod
    def _as_operand_type(rc: ReverseContext, scratch: SSAValue, mem: SSAValue) -> SSAValue:
        mtype = mem.type
        assert isinstance(mtype, MemRefType)
        if MemRefType(mtype.element_type, mtype.get_shape()) != mtype:
            # a strided view: the buffer under the operand's type
            return rc.insert(memref.CastOp.get(scratch, mtype)).results[0]
        return scratch

    def release_scratch(self, rc: ReverseContext, scratch: SSAValue) -> None:
        buffer = scratch.op.source if isinstance(scratch, OpResult) and isinstance(
            scratch.op, memref.CastOp) else scratch
        rc.insert(memref.DeallocOp.get(buffer)).attributes[WORKSPACE_ATTR] = UnitAttr()

    @staticmethod
    def memref_sizes(builder: Builder, value: SSAValue) -> list[SSAValue]:
        mtype = value.type
        assert isinstance(mtype, MemRefType)
        sizes = []
        for d, n in enumerate(mtype.get_shape()):
            if n >= 0:
                sizes.append(builder.insert(arith.ConstantOp(IntegerAttr(n, IndexType()))).results[0])
            else:
                k = builder.insert(arith.ConstantOp(IntegerAttr(d, IndexType()))).results[0]
                sizes.append(builder.insert(memref.DimOp(value, k)).results[0])
        return sizes

    def _element_count(self, mem: SSAValue, builder: Builder,
                       vmap: dict[SSAValue, SSAValue]) -> SSAValue | None:
        """The number of elements of `mem`, computed in the top block
        before the snapshot's top-level op; None if its sizes are not known
        there."""
        hoisted = self._hoist(mem, builder, vmap)
        if hoisted is None:
            return None
        total = builder.insert(arith.ConstantOp(IntegerAttr(1, IndexType()))).results[0]
        for size in self.memref_sizes(builder, hoisted):
            total = saturating_mul(builder, total, size)
        return total

    def _top_ancestor_op(self, op: Operation) -> Operation:
        while op.parent_block() is not self.top_block:
            parent = op.parent_op()
            assert parent is not None
            op = parent
        return op

    def _capacity(
        self, value: SSAValue, builder: Builder, vmap: dict[SSAValue, SSAValue]
    ) -> SSAValue | None:
        """Number of pushes of `value` per call, computed before the top-level
        op containing them; None when unknown there (growable tape)."""
        return self._capacity_of_block(home_block(value), builder, vmap)

    def _capacity_of_block(
        self, block: Block | None, builder: Builder, vmap: dict[SSAValue, SSAValue]
    ) -> SSAValue | None:
        """How often `block` runs per call (trip counts of the loops around
        it), computed before its top-level op; None when unknown there."""
        bounds: list[tuple[SSAValue, SSAValue, SSAValue]] = []
        assert block is not None
        op = block.parent_op()
        while op is not None and op is not self.primal:
            loop = trip_bounds(op)
            if loop is not None:
                bounds.append(loop)
            elif not runs_at_most_once(op):
                return None
            op = op.parent_op()
        static = 1
        dynamic: list[tuple[SSAValue, SSAValue, SSAValue]] = []
        for lb, ub, step in bounds:
            consts = [_constant_int(v) for v in (lb, ub, step)]
            if all(c is not None for c in consts):
                lo, hi, st = consts  # type: ignore[misc]
                static *= max(0, -(-(hi - lo) // st))
            else:
                dynamic.append((lb, ub, step))
        # Saturated, never wrapped (adpasses.core.index_arith): a wrapped capacity
        # is a buffer smaller than its pushes; a saturated one is an
        # allocation the lowering refuses with MemoryError.
        total = builder.insert(arith.ConstantOp(IntegerAttr(saturate(static), IndexType()))).results[0]
        for lb, ub, step in dynamic:
            hoisted = [self._hoist(v, builder, vmap) for v in (lb, ub, step)]
            if any(h is None for h in hoisted):
                return None
            n = trip_count(builder, *hoisted)  # type: ignore[arg-type]
            if not isinstance(n.type, IndexType):  # an scf.for over iN (a count >= 0)
                n = builder.insert(arith.IndexCastOp(n, IndexType())).results[0]
            total = saturating_mul(builder, total, n)
        return total

    def _hoist(
        self, value: SSAValue, builder: Builder, vmap: dict[SSAValue, SSAValue]
    ) -> SSAValue | None:
        """`value` rebuilt at the builder's point in the top block, if it is a
        top-block value, a constant, or a pure op over such values."""
        if value in self.top_values:
            return self.top_values[value]
        if not isinstance(value, OpResult):
            return None
        op = value.op
        if not (is_constant(value) or is_recomputable_op(op)):
            return None
        mapping: dict[SSAValue, SSAValue] = {}
        for operand in op.operands:
            h = self._hoist(operand, builder, vmap)
            if h is None:
                return None
            mapping[operand] = h
        new = builder.insert(op.clone(value_mapper=mapping))
        return new.results[value.index]

    # -- hooks used by rules ---------------------------------------------------------

    def forward_clone(self, op: Operation) -> Operation:
        """The forward sweep's copy of the primal op `op`."""
        return self._forward_ops[op]

    def seed_of(self, rc: ReverseContext, value: SSAValue, lane: int = 0) -> SSAValue | None:
        """The sum of the seeds, in `lane`, of the return positions that
        return `value` (None: it is returned at no seeded position), built
        in `rc`."""
        ret = self.top_block.last_op
        total: SSAValue | None = None
        if isinstance(ret, func.ReturnOp):
            for arg, seeds in zip(ret.arguments, self.seeds):
                if seeds is not None and arg is value:
                    seed = seeds[lane]
                    total = seed if total is None else rc.add(total, seed)
        return total

    def adjoint_slot(self, loop: Operation, value: SSAValue) -> SSAValue:
        """A zeroed one-element stack slot, made just before the forward
        `loop`, that sums `value`'s adjoint over the loop's iterations
        (LLVM keeps it in a register)."""
        builder = Builder(InsertPoint.before(loop))
        slot = builder.insert(memref.AllocaOp.get(value.type, shape=[1])).results[0]
        slot.name_hint = f"d{value.name_hint}_sum" if value.name_hint else None
        zero_index = builder.insert(arith.ConstantOp(IntegerAttr(0, IndexType()))).results[0]
        zero = builder.insert(arith.ConstantOp(FloatAttr(0.0, value.type))).results[0]
        store = builder.insert(memref.StoreOp.get(zero, slot, [zero_index]))
        store.attributes[UNCHECKED_ATTR] = UnitAttr()
        for new in (slot.op, zero_index.op, zero.op, store):
            new.location = loop.location
        return slot

    @staticmethod
    def add_to_slot(rc: ReverseContext, slot: SSAValue, g: SSAValue) -> None:
        zero = rc.index(0)
        load = rc.insert(memref.LoadOp.get(slot, [zero]))
        load.attributes[UNCHECKED_ATTR] = UnitAttr()
        store = rc.insert(memref.StoreOp.get(rc.add(load.results[0], g), slot, [zero]))
        store.attributes[UNCHECKED_ATTR] = UnitAttr()

    @staticmethod
    def read_slot(rc: ReverseContext, slot: SSAValue) -> SSAValue:
        load = rc.insert(memref.LoadOp.get(slot, [rc.index(0)]))
        load.attributes[UNCHECKED_ATTR] = UnitAttr()
        return load.results[0]

    def after_reverse(self, rc: ReverseContext, op: Operation) -> None:
        for tape in self._tapes_to_free.pop(op, []):
            rc.insert(TapeFreeOp(tape))

    def create_shadow_allocation(self, rc: ReverseContext, op: Operation) -> SSAValue:
        """A zero-filled shadow of an active local allocation."""
        mapping = {s: rc.primal(s) for s in op.operands}
        new = rc.insert(op.clone(value_mapper=mapping))
        shadow = new.results[0]
        primal = op.results[0]
        shadow.name_hint = f"d{primal.name_hint}" if primal.name_hint else None
        mtype = primal.type
        sizes = []
        for d, size in enumerate(mtype.get_shape()):
            if size >= 0:
                sizes.append(rc.index(size))
            else:
                sizes.append(rc.insert(memref.DimOp(shadow, rc.index(d))).results[0])
        zero = rc.zero(mtype.element_type)
        rc.loop_nest(sizes, lambda inner, idx: inner.store(zero, shadow, idx, own_sizes=True))
        return shadow

    # -- twins ----------------------------------------------------------------------

    def tag_twin(self, new: Operation, primal_op: Operation) -> None:
        """`new` (a shadow access or view, or a reload) repeats `primal_op`
        at the same indices on memory of the same sizes: tag `new` with the
        forward sweep's clone of `primal_op` as its twin (`ad.twin_of` /
        `ad.twin_id`). Whether `new` then needs a bounds check is decided
        last, on the final IR, by `ad-elide-shadow-checks`."""
        if not isinstance(new, BOUNDS_CHECKED_OPS):
            return
        forward = self._forward_ops.get(primal_op)
        if forward is None or not isinstance(forward, BOUNDS_CHECKED_OPS):
            return
        twin_id = forward.attributes.get(TWIN_ID_ATTR)
        if twin_id is None:
            twin_id = IntegerAttr(self._twin_ids, 64)
            self._twin_ids += 1
            for op in _identical_in_block(forward):
                op.attributes[TWIN_ID_ATTR] = twin_id
        new.attributes[TWIN_OF_ATTR] = twin_id


def _loop_nest(builder: Builder, sizes: Sequence[SSAValue],
               body: Callable[[Builder, list[SSAValue]], None], location) -> None:  # type: ignore[no-untyped-def]
    """for i0 < sizes[0], i1 < sizes[1], ...: body(builder, [i0, i1, ...])."""

    def nest(b: Builder, rest: Sequence[SSAValue], idx: list[SSAValue]) -> None:
        if not rest:
            body(b, idx)
            return
        zero = b.insert(arith.ConstantOp(IntegerAttr(0, IndexType()))).results[0]
        one = b.insert(arith.ConstantOp(IntegerAttr(1, IndexType()))).results[0]
        inner = Block(arg_types=[IndexType()])
        loop = b.insert(scf.ForOp(zero, rest[0], one, [], [inner]))
        loop.location = location
        ib = Builder(InsertPoint.at_end(inner))
        nest(ib, rest[1:], [*idx, inner.args[0]])
        ib.insert(scf.YieldOp())

    nest(builder, sizes, [])


def _identical_in_block(op: Operation) -> list[Operation]:
    """`op` and the ops of its block that read the same memory at the same
    indices (same name, operands and properties): they run together, so
    each one's check covers the other's repeats. Sharing one twin id keeps
    their attributes equal, so that cse may still merge them."""
    block = op.parent_block()
    if block is None or not isinstance(op, (memref.LoadOp, memref.SubviewOp)):
        return [op]
    return [other for other in block.ops
            if other is op or (other.name == op.name and other.operands == op.operands
                               and other.properties == op.properties
                               and other.result_types == op.result_types
                               and TWIN_ID_ATTR not in other.attributes)]


def _returned_allocations(returned: Sequence[SSAValue]) -> list[SSAValue]:
    """The allocations whose memory a function returns (each once)."""
    found: list[SSAValue] = []
    for value in returned:
        if isinstance(value.type, MemRefType):
            buffer = memory_object(value)
            if is_allocation(buffer) and buffer not in found:
                found.append(buffer)
    return found


def _constant_int(value: SSAValue) -> int | None:
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None
