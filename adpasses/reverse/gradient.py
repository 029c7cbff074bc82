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
   the enclosing loops when those are known there, growable otherwise);
   deallocations in the top block are deferred to the end, so the reverse
   sweep may still reload from those buffers;
2. the reverse sweep: every active op in reverse order, through its rule
   (`adpasses.reverse.rules`), in `ReverseContext`s that mirror the primal regions;
3. the deferred deallocations, and the return.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IndexType, IntegerAttr, MemRefType
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.rewriter import InsertPoint

from adpasses.analysis.activity import ActivityAnalysis
from adpasses.analysis.memref_views import is_allocation, memory_object
from adpasses.cache.plan import CachePlan, is_recomputable_op
from adpasses.dialects.ad import (
    BOUNDS_CHECKED_OPS,
    TWIN_ID_ATTR,
    TWIN_OF_ATTR,
    ShadowCheckOp,
    TapeCreateOp,
    TapeFreeOp,
    TapePushOp,
)
from adpasses.core.index_arith import saturate, saturating_mul, trip_count
from adpasses.core.ir_facts import home_block, is_constant
from adpasses.core.region_flow import runs_at_most_once, trip_bounds
from adpasses.reverse.reverse_context import ReverseContext

if TYPE_CHECKING:
    from adpasses.reverse.rules import RuleTables


class GradientBuilder:
    def __init__(
        self,
        primal: func.FuncOp,
        activity: ActivityAnalysis,
        plan: CachePlan,
        name: str,
        with_primal: bool,
        rules: RuleTables,
    ):
        self.primal = primal
        self.rules = rules  # handed in: the engine does not import the rules
        self.activity = activity
        self.plan = plan
        self.name = name
        self.with_primal = with_primal
        self.top_block = primal.body.block
        self.tapes: dict[SSAValue, SSAValue] = {}
        self.top_values: dict[SSAValue, SSAValue] = {}
        self.arg_shadows: dict[SSAValue, SSAValue] = {}
        self.seeds: list[SSAValue | None] = []
        self._tapes_to_free: dict[Operation, list[SSAValue]] = {}
        self._forward_ops: dict[Operation, Operation] = {}
        self._twin_ids = 0

    # -- the function ----------------------------------------------------------

    def build(self) -> func.FuncOp:
        acts = self.activity.arg_activity
        rets = self.activity.ret_activity
        ptype = self.primal.function_type
        inputs: list = []
        for ty, act in zip(ptype.inputs.data, acts):
            inputs.append(ty)
            if act in ("dup", "dupnoneed"):
                inputs.append(ty)
        inputs += [ty for ty, act in zip(ptype.outputs.data, rets) if act in ("active", "dup")]
        outputs = list(ptype.outputs.data) if self.with_primal else []
        outputs += [ty for ty, act in zip(ptype.inputs.data, acts) if act == "active"]
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
                shadow = next(args)
                shadow.name_hint = f"d{arg.name_hint}" if arg.name_hint else None
                self.arg_shadows[arg] = shadow
        for act in rets:
            if act in ("active", "dup"):
                seed = next(args)
                seed.name_hint = "seed" if act == "active" else "dret"
                self.seeds.append(seed)
            else:
                self.seeds.append(None)

        returned, deferred = self._forward_sweep(block, vmap)
        self._insert_pushes(block, vmap)

        top = ReverseContext(self, self.top_block, InsertPoint.at_end(block))
        top.materialize_block_values()
        top.reverse_ops(self.top_block)
        self._check_shadow_shapes(block, vmap)
        for dealloc in deferred:
            block.add_op(dealloc.clone(value_mapper=vmap))
        if not self.with_primal:
            for buffer in _returned_allocations(returned):
                # The primal hands these to its caller; the gradient returns no primal: free them.
                free = memref.DeallocOp.get(vmap[buffer])
                free.location = self.primal.location
                block.add_op(free)
        results = [vmap.get(v, v) for v in returned] if self.with_primal else []
        results += [
            top.adjoint_or_zero(arg) for arg, act in zip(self.top_block.args, acts) if act == "active"
        ]
        ret = func.ReturnOp(*results)
        ret.location = self.primal.location
        block.add_op(ret)
        return gradient

    def _check_shadow_shapes(self, block: Block, vmap: dict[SSAValue, SSAValue]) -> None:
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
        for arg, shadow in self.arg_shadows.items():
            if isinstance(arg.type, MemRefType) and shadow.uses:
                check = ShadowCheckOp(vmap[arg], shadow)
                check.location = self.primal.location
                checks.append(check)
        if checks:
            assert block.first_op is not None
            block.insert_ops_before(checks, block.first_op)

    def _argument_attributes(self) -> ArrayAttr | None:
        """The primal's argument attributes (e.g. ad.noalias) on each primal
        argument and on its shadow, which is as separate as its primal."""
        attrs = self.primal.arg_attrs
        if attrs is None:
            return None
        result: list[DictionaryAttr] = []
        for d, act in zip(attrs.data, self.activity.arg_activity):
            result.append(d)
            if act in ("dup", "dupnoneed"):
                result.append(d)
        result += [DictionaryAttr({}) for act in self.activity.ret_activity if act in ("active", "dup")]
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
        for value in self.plan.taped():
            anchor = self._top_ancestor(value)
            clone = self._clones[anchor]
            builder = Builder(InsertPoint.before(clone))
            capacity = self._capacity(value, builder, vmap)
            create = builder.insert(TapeCreateOp(value.type, capacity))
            create.location = anchor.location
            tape = create.results[0]
            tape.name_hint = f"tape_{value.name_hint}" if value.name_hint else "tape"
            self.tapes[value] = tape
            self._tapes_to_free.setdefault(anchor, []).append(tape)
            forward = vmap[value]
            push = TapePushOp(forward, tape)
            push.location = (
                forward.op.location if isinstance(forward, OpResult) else anchor.location
            )
            if isinstance(forward, OpResult):
                forward.op.parent_block().insert_op_after(push, forward.op)
            else:
                target = forward.block
                if target.first_op is None:
                    target.add_op(push)
                else:
                    target.insert_op_before(push, target.first_op)

    def _capacity(
        self, value: SSAValue, builder: Builder, vmap: dict[SSAValue, SSAValue]
    ) -> SSAValue | None:
        """Number of pushes of `value` per call, computed before the top-level
        op containing them; None when unknown there (growable tape)."""
        bounds: list[tuple[SSAValue, SSAValue, SSAValue]] = []
        op = home_block(value).parent_op()
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
