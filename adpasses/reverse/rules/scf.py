"""Reverse rules of the scf dialect: the reverse sweep mirrors the loops.

- scf.for: a reverse scf.for over the same trip count N, iteration k
  revisiting i = lb + (N-1-k)*step. Loop-carried adjoints (of iter_args, and
  of active values from outside the loop that the body uses) are the
  reverse loop's iter_args.
- scf.if: an scf.if on the same condition; each branch reverses its own
  block and yields the updated adjoints of outer values.
- scf.index_switch, scf.execute_region, memref.alloca_scope: like scf.if,
  the same op in reverse, each region undoing its own block
  (`OnceRegionRule`, built from the region-flow entry alone).
- scf.while: the forward loop counts its iterations (`ad.counted`, added by
  `ad-count-while`, transforms/count_while.py, before analysis); the reverse first undoes the
  last `before` region (the one whose condition was false), then runs an
  scf.for over the count, each iteration undoing `after` then `before`.

Values are named by the region-flow table (`adpasses/core/region_flow.py`):
adjoints flow back along its edges, and its control values are what the
rules read again (`needs`).

Vector reverse mode: each rule builds one reverse region for all lanes
(`lanes = True`); what it carries (iter_args, yielded values, results) is
each value's adjoint in every lane, value-major: value j's lane k at
`j * width + k`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from adpasses.dialects.ad import COUNTED_ATTR, PARALLEL_ATTR
from adpasses.core.index_arith import trip_count
from adpasses.core.ir_walk import nested_ops
from adpasses.core.region_flow import FOR, IF, REGION_FLOWS, WHILE
from adpasses.reverse.reverse_context import ReverseContext


def outer_active_values(op: Operation, rc: ReverseContext) -> list[SSAValue]:
    """Active values defined outside `op` that ops inside it use, in order of
    first use: their adjoints may change inside, so they are threaded
    through the reverse region."""
    # The values defined inside, collected once: asking `is_ancestor` per
    # operand cost O(depth) each, O(d^3) over a nest of d loops.
    inner_ops = nested_ops(op)
    inside: set[SSAValue] = set()
    for inner in inner_ops:
        if inner is not op:
            inside.update(inner.results)
        for region in inner.regions:
            for block in region.blocks:
                inside.update(block.args)
    seen: dict[SSAValue, None] = {}
    for inner in inner_ops:
        if inner is op:
            continue
        for operand in inner.operands:
            if operand not in seen and operand not in inside and rc.activity.is_active(operand):
                seen[operand] = None
    return list(seen)


def _float_positions(values: Sequence[SSAValue], rc: ReverseContext, *related) -> list[int]:  # type: ignore[no-untyped-def]
    """Positions whose value (or a related value at the same position) is active."""
    return [
        i
        for i, v in enumerate(values)
        if rc.activity.is_active(v) or any(rc.activity.is_active(r[i]) for r in related)
    ]


def _results_to_yields(rc: ReverseContext, child: ReverseContext, exits) -> None:  # type: ignore[no-untyped-def]
    """The adjoint of each result flows back, in the reverse of the region
    that produced it, to what its terminator yielded (the exit edges)."""
    for yielded, result in exits:
        for k in range(rc.width):
            g = rc.adjoint(result, k)
            if g is not None:
                child.add_adjoint(yielded, g, k)


def _lane_adjoints(rc: ReverseContext, values: Sequence[SSAValue]) -> list[SSAValue]:
    """Each value's adjoint (zero if none) in every lane, value-major."""
    return [rc.adjoint_or_zero(v, k) for v in values for k in range(rc.width)]


def _set_lanes(rc: ReverseContext, values: Sequence[SSAValue], adjoints: Sequence[SSAValue],
               add: bool = False) -> None:
    """Value j's adjoint in lane k is `adjoints[j * width + k]` (set, or added)."""
    w = rc.width
    for j, v in enumerate(values):
        for k in range(w):
            if add:
                rc.add_adjoint(v, adjoints[j * w + k], k)
            else:
                rc.set_adjoint(v, adjoints[j * w + k], k)


def _changed(outer: Sequence[SSAValue], children: Sequence[ReverseContext]) -> list[SSAValue]:
    """The outer values whose adjoint some child context set, in some lane."""
    return [v for v in outer if any(child.changed_in_any_lane(v) for child in children)]


class ForRule:
    """Values by the table's names (`region_flow.FOR`): `inits` flow to
    `iter_args` and `results`, `yielded` to the next `iter_args` and to
    `results`; the adjoints flow back along the same edges."""

    lanes = True

    def needs(self, op: scf.ForOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        return FOR.control_values(op)

    def reverse(self, rc: ReverseContext, op: scf.ForOp) -> None:
        if rc.sweep.plan.is_local_loop(op):
            self.reverse_locally(rc, op)
            return
        body = op.body.block
        inits_fwd = FOR.values(op, "inits")
        iter_block_args = FOR.values(op, "iter_args")
        yielded = FOR.values(op, "yielded")
        results = FOR.values(op, "results")
        (iv,) = FOR.induction_values(op)
        carried = _float_positions(iter_block_args, rc, results)
        outer = outer_active_values(op, rc)

        lb, ub, step = (rc.primal(v) for v in FOR.values(op, "bounds"))
        n = trip_count(rc.builder, lb, ub, step)
        inits = _lane_adjoints(rc, [results[i] for i in carried])
        inits += _lane_adjoints(rc, outer)
        n_carried = len(carried) * rc.width
        # The reverse loop counts in the forward loop's type (index or iN).
        iv_type = iv.type
        block = Block(arg_types=[iv_type, *(v.type for v in inits)])
        k, carried_adj = block.args[0], block.args[1 : 1 + n_carried]
        outer_adj = block.args[1 + n_carried :]

        inner = ReverseContext(rc.sweep, body, InsertPoint.at_end(block), rc)
        inner.loc = rc.loc
        # i = lb + (n - 1 - k) * step: iterations in reverse order.
        last = inner.insert(arith.SubiOp(inner.insert(arith.SubiOp(n, inner.const(1, iv_type))).results[0], k))
        offset = inner.insert(arith.MuliOp(last.results[0], step)).results[0]
        inner.values[iv] = inner.insert(arith.AddiOp(lb, offset)).results[0]
        inner.materialize_block_values()
        _set_lanes(inner, outer, outer_adj)
        _set_lanes(inner, [yielded[i] for i in carried], carried_adj, add=True)
        inner.reverse_ops(body)
        outs = _lane_adjoints(inner, [iter_block_args[i] for i in carried])
        outs += _lane_adjoints(inner, outer)
        inner.builder.insert(scf.YieldOp(*outs))

        loop = rc.insert(scf.ForOp(rc.const(0, iv_type), n, rc.const(1, iv_type), inits, block))
        if PARALLEL_ATTR in op.attributes:
            # The reverse of a loop that may run in parallel may too, if
            # ad-parallelize proves its iterations independent (docs/parallel.md).
            loop.attributes[PARALLEL_ATTR] = op.attributes[PARALLEL_ATTR]
        # Outer adjoints first (they carry the totals), then the init operands'
        # contributions, which may be outer values themselves.
        _set_lanes(rc, outer, loop.results[n_carried:])
        _set_lanes(rc, [inits_fwd[i] for i in carried], loop.results[:n_carried], add=True)


    def reverse_locally(self, rc: ReverseContext, op: scf.ForOp) -> None:
        """Loop-local reverse (`adpasses.cache.loop_local`): each iteration's
        reverse goes at the end of the same iteration of the forward loop
        (its values are still there, nothing is taped), seeded with the
        adjoints of the loop's results, which are the function's seeds
        (nothing after the loop is differentiated). Sum reductions pass
        their adjoint unchanged to every iteration; adjoints of outer
        values are summed in a stack slot across iterations."""
        sweep = rc.sweep
        body = op.body.block
        forward = sweep.forward_clone(op)
        assert isinstance(forward, scf.ForOp)
        fbody = forward.body.block
        yield_op = fbody.last_op
        assert yield_op is not None
        inits_fwd = FOR.values(op, "inits")
        yielded = FOR.values(op, "yielded")
        results = FOR.values(op, "results")
        iter_block_args = FOR.values(op, "iter_args")
        carried = _float_positions(iter_block_args, rc, results)
        outer = outer_active_values(op, rc)
        lanes = range(rc.width)
        slots = {(v, k): sweep.adjoint_slot(forward, v) for v in outer for k in lanes}

        # A root context: nothing of the reverse sweep's own code (built
        # after the forward loop) may be used inside it.
        inner = ReverseContext(sweep, body, InsertPoint.before(yield_op))
        inner.loc = op.location
        for old, new in zip(body.args, fbody.args):
            inner.values[old] = new
        for old_op in body.ops:
            for old, new in zip(old_op.results, sweep.forward_clone(old_op).results):
                inner.values[old] = new
        inner.materialize_block_values()
        for i in carried:
            for k in lanes:
                seed = sweep.seed_of(inner, results[i], k)
                if seed is not None:
                    inner.add_adjoint(yielded[i], seed, k)
        inner.reverse_ops(body)
        for (v, k), slot in slots.items():
            g = inner.adjoint(v, k)
            if g is not None:
                sweep.add_to_slot(inner, slot, g)
        for (v, k), slot in slots.items():
            rc.add_adjoint(v, sweep.read_slot(rc, slot), k)
        for i in carried:
            for k in lanes:
                g = rc.adjoint(results[i], k)
                if g is not None:
                    rc.add_adjoint(inits_fwd[i], g, k)


class IfRule:
    lanes = True

    def needs(self, op: scf.IfOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        return IF.control_values(op)

    def reverse(self, rc: ReverseContext, op: scf.IfOp) -> None:
        outer = outer_active_values(op, rc)
        branches: list[tuple[Block, ReverseContext]] = []
        for k, region in enumerate(op.regions):  # then, else
            block = Block()
            if region.blocks:
                forward = region.block
                child = rc.child(forward, InsertPoint.at_end(block))
                _results_to_yields(rc, child, IF.exits(op, k))
                child.reverse_ops(forward)
            else:
                child = ReverseContext(rc.sweep, rc.block, InsertPoint.at_end(block), rc)
                child.loc = rc.loc
            branches.append((block, child))
        changed = _changed(outer, [child for _, child in branches])
        for block, child in branches:
            child.builder.insert(scf.YieldOp(*_lane_adjoints(child, changed)))
        types = [v.type for v in changed for _ in range(rc.width)]
        new_if = rc.insert(scf.IfOp(rc.primal(op.cond), types, [branches[0][0]], [branches[1][0]]))
        _set_lanes(rc, changed, new_if.results)


class OnceRegionRule:
    """scf.index_switch, scf.execute_region, memref.alloca_scope: ops that
    run one of their regions once (like scf.if), each region with one block
    and whose operands are all control (no entry edges). The reverse is the
    same op on the same control values, with the same properties: each
    region reverses its own block and ends with the forward region's kind of
    terminator, yielding the updated adjoints of the outer values it
    changed. A reverse alloca_scope frees the shadows of the allocas its
    forward scope frees. Any op of that shape needs only its table entry and
    this rule."""

    lanes = True

    def needs(self, op: Operation, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        return REGION_FLOWS[type(op)].control_values(op)

    def reverse(self, rc: ReverseContext, op: Operation) -> None:
        flow = REGION_FLOWS[type(op)]
        outer = outer_active_values(op, rc)
        branches: list[tuple[Block, ReverseContext]] = []
        for k, region in enumerate(op.regions):
            forward = region.block
            block = Block()
            child = rc.child(forward, InsertPoint.at_end(block))
            _results_to_yields(rc, child, flow.exits(op, k))
            child.reverse_ops(forward)
            branches.append((block, child))
        changed = _changed(outer, [child for _, child in branches])
        types = [v.type for v in changed for _ in range(rc.width)]
        for region, (block, child) in zip(op.regions, branches):
            values = _lane_adjoints(child, changed)
            terminator = type(region.block.last_op)
            child.builder.insert(terminator.create(operands=values))
        control = flow.control_values(op)
        assert list(op.operands) == control, f"{op.name}: operands that are not control"
        new = type(op).create(
            operands=[rc.primal(v) for v in control],
            result_types=types,
            properties=dict(op.properties),
            regions=[Region(block) for block, _ in branches],
        )
        rc.insert(new)
        _set_lanes(rc, changed, new.results)


class WhileRule:
    lanes = True

    def needs(self, op: scf.WhileOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        return [iteration_count(op)]

    def reverse(self, rc: ReverseContext, op: scf.WhileOp) -> None:
        """Values by the table's names (`region_flow.WHILE`), less the
        iteration counter each part ends with."""
        before, after = op.before_region.block, op.after_region.block
        inits_fwd = WHILE.values(op, "inits")[:-1]
        cond_args = WHILE.values(op, "forwarded")[:-1]
        after_yield = WHILE.values(op, "yielded")[:-1]
        results = WHILE.values(op, "results")[:-1]
        before_args = WHILE.values(op, "before_args")[:-1]
        after_args = WHILE.values(op, "after_args")[:-1]
        b_pos = _float_positions(before_args, rc, inits_fwd, after_yield)
        c_pos = _float_positions(cond_args, rc, after_args, results)
        outer = outer_active_values(op, rc)

        # The last `before` ran once more than `after` and decided to exit.
        w = rc.width
        last = rc.child(before, rc.builder.insertion_point)
        _results_to_yields(rc, last, [(cond_args[j], results[j]) for j in c_pos])
        last.reverse_ops(before)
        for v in outer:
            for k in range(w):
                if v in last.lane_adjoints[k]:
                    rc.set_adjoint(v, last.lane_adjoints[k][v], k)
        inits = _lane_adjoints(last, [before_args[i] for i in b_pos])
        inits += _lane_adjoints(rc, outer)

        count = rc.primal(iteration_count(op))
        block = Block(arg_types=[IndexType(), *(v.type for v in inits)])
        b_adj = block.args[1 : 1 + len(b_pos) * w]
        outer_adj = block.args[1 + len(b_pos) * w :]
        loop_rc = ReverseContext(rc.sweep, rc.block, InsertPoint.at_end(block), rc)
        loop_rc.loc = rc.loc
        _set_lanes(loop_rc, outer, outer_adj)

        undo_after = loop_rc.child(after, InsertPoint.at_end(block))
        _set_lanes(undo_after, [after_yield[i] for i in b_pos], b_adj, add=True)
        undo_after.reverse_ops(after)
        undo_before = loop_rc.child(before, InsertPoint.at_end(block))
        _set_lanes(undo_before, outer, _lane_adjoints(undo_after, outer))
        _set_lanes(undo_before, [cond_args[j] for j in c_pos],
                   _lane_adjoints(undo_after, [after_args[j] for j in c_pos]), add=True)
        undo_before.reverse_ops(before)
        outs = _lane_adjoints(undo_before, [before_args[i] for i in b_pos])
        outs += _lane_adjoints(undo_before, outer)
        undo_before.builder.insert(scf.YieldOp(*outs))

        loop = rc.insert(scf.ForOp(rc.index(0), count, rc.index(1), inits, block))
        _set_lanes(rc, outer, loop.results[len(b_pos) * w:])
        _set_lanes(rc, [inits_fwd[i] for i in b_pos], loop.results[:len(b_pos) * w], add=True)


def iteration_count(op: scf.WhileOp) -> SSAValue:
    """The result counting how often the `after` region ran (see below)."""
    if COUNTED_ATTR not in op.attributes:
        raise AssertionError("scf.while reached the reverse pass without an iteration counter")
    return op.results[-1]


RULES = {
    scf.ForOp: ForRule(),
    scf.IfOp: IfRule(),
    scf.WhileOp: WhileRule(),
    scf.IndexSwitchOp: OnceRegionRule(),
    scf.ExecuteRegionOp: OnceRegionRule(),
    memref.AllocaScopeOp: OnceRegionRule(),
}
