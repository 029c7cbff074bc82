"""The `minimal` cache policy: per block, a minimum cut decides what to tape.

Enzyme's formulation (DifferentialUseAnalysis::minCut): blocks are handled
innermost first. For the values of one block B that the reverse sweep needs,
build a flow network over the values of B that could produce them:

- each value v is split `v_in -> v_out` with capacity = bytes to tape it
  (infinite for memrefs, which cannot be taped);
- a value that cannot be recomputed (a loop-carried block argument, a
  result of a loop or if, a load that a later write may clobber, an
  allocation) gets `S -> v_in` of infinite capacity: it must be taped if
  needed;
- a value that can be recomputed (pure op, or a load no later write can
  clobber, re-issued as a reload) gets `S -> v_in` with its recompute cost
  (`adpasses.cache.cost_model`) and `w_out -> v_in` (infinite) for each operand
  w defined in B; operands defined outside B are available for free (and
  become needs of their own block, handled later);
- each needed value has `v_out -> T` (infinite).

In a minimum cut, a value whose `v_out` is on the sink side is present in
the reverse sweep: taped if its `v_in` is on the source side, recomputed
otherwise. Splitting nodes makes taping a value cost its size once, however
many uses it has (as in Enzyme-MLIR's min-cut cache planning).

Inside a loop marked parallel (`ad.parallel`: prange, jit(parallel=True)),
a tape is shared by the loop's iterations: unless `ad-lower-tapes` can give
it a fixed layout (a row per iteration, transforms/tape_layout.py) the loop
and its reverse run serially, and even then it costs memory traffic: taping
there costs `PARALLEL_TAPE_SCALE` times more, so whatever can be recomputed
or reloaded is (docs/parallel.md, "Tapes and parallel loops").
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from adpasses.analysis.activity import ActivityAnalysis
from adpasses.cache.plan import (
    CachePlan,
    MemoryNeed,
    ProgramOrder,
    call_writes_first,
    is_recomputable_op,
    plan_memory,
    plan_tape_all,
)
from adpasses.cache.cost_model import RELOAD as RELOAD_COST, CostModel
from adpasses.core.diagnostics import op_location
from adpasses.cache.mincut import INF, FlowGraph, MinCut
from adpasses.core.ir_facts import home_block, is_constant
from adpasses.core.region_flow import is_induction_variable, region_flow
from adpasses.dialects.ad import PARALLEL_ATTR

PARALLEL_TAPE_SCALE = 1e6
"""Tape costs in a block inside a loop marked parallel: recomputing any
chain of ops costs less than taping one byte there."""


def plan_cache(
    function: func.FuncOp,
    needed: Iterable[SSAValue],
    activity: ActivityAnalysis,
    policy: str = "minimal",
    model: CostModel | None = None,
    memory_needs: Iterable[MemoryNeed] = (),
    loop_local: bool = True,
) -> CachePlan:
    """The cache plan; `memory_needs` (memory checkpointed calls rerun on)
    are snapshot where some write may change them (`plan.plan_memory`);
    `loop_local`: reverse the top-level loops whose iterations are
    independent one iteration at a time (`cache.loop_local`; the `minimal`
    policy only: `tape-all` is the baseline that tapes everything).
    `min-memory` is `minimal` with every recompute and reload free: the cut
    of fewest taped bytes, recomputing whatever is legal (Enzyme-MLIR's
    placement), whatever the recomputation costs."""
    memory_needs = list(memory_needs)
    if policy == "min-memory" and model is None:
        model = CostModel(recompute_scale=0.0)
    if policy == "tape-all":
        plan = plan_tape_all(function, needed)
        if memory_needs:
            from adpasses.analysis.alias import AliasAnalysis

            planner = MinCutPlanner(function, model or CostModel())
            plan_memory(plan, memory_needs, planner.overwrites_from, call_writes_first)
            check_rerun_buffers(plan, planner.alias)
        return plan
    planner = MinCutPlanner(function, model or CostModel())
    loops = []
    if loop_local:
        from adpasses.cache.loop_local import choose_local_loops

        loops = choose_local_loops(function, activity, planner.alias, [n.op for n in memory_needs])
        planner.local_blocks = {d.loop.body.block for d in loops if d.local}
    plan = planner.plan(needed)
    plan.loops = loops
    plan_memory(plan, memory_needs, planner.overwrites_from, call_writes_first)
    check_rerun_buffers(plan, planner.alias)
    return plan


def check_rerun_buffers(plan: CachePlan, alias) -> None:  # type: ignore[no-untyped-def]
    """A checkpointed call reruns on scratch copies of the memory it
    snapshots: two of its memref operands that may share memory would be
    rerun on separate copies, a different computation. That is an error at
    the call (never a silently wrong gradient)."""
    from adpasses.analysis.alias import AliasKind
    from adpasses.core.diagnostics import error_at

    from adpasses.core.custom_rules import custom_rule_of_call

    copied: dict[Operation, list[SSAValue]] = {}
    for d in plan.memory:
        if custom_rule_of_call(d.need.op) is not None:
            continue  # an array residual's snapshot is only read, by the reverse rule
        if d.kind in ("snapshot", "scratch") and isinstance(d.need.op, func.CallOp):
            # (a matrix product's snapshots are only read: its rule reads
            # them as they were, whatever else shares their memory)
            copied.setdefault(d.need.op, []).append(d.need.memref)
    for op, values in copied.items():
        memrefs = list(dict.fromkeys(v for v in op.operands if isinstance(v.type, MemRefType)))
        for v in values:
            for w in memrefs:
                if w is not v and alias.alias(v, w).kind is not AliasKind.NO_ALIAS:
                    raise error_at(
                        op,
                        f"is a checkpointed call whose arrays {_array_label(v)} and "
                        f"{_array_label(w)} may share memory; its recomputation copies "
                        f"{_array_label(v, where=False)} and would no longer see the other's writes: "
                        "pass the array once, or mark the arguments noalias (the Python API does "
                        "when no arrays of a call overlap)",
                    )


def _array_label(value: SSAValue, where: bool = True) -> str:
    """An array as the user wrote it: its name (the Python variable, or the
    SSA name in MLIR) or its source expression (`u[1:]`), and where it is
    defined (`file:line`) when known."""
    from adpasses.cache.report import value_label, value_location

    location = value_location(value)
    label = _assigned_name(location) or value_label(value)
    if location and location.rsplit(":", 2)[0].endswith(".py") and label.startswith("%"):
        label = label[1:]  # a Python variable (an argument), not an SSA value
    if where and location and location.count(":") >= 2:
        return f"{label} ({location.rsplit(':', 1)[0]})"
    return label


def _assigned_name(location: str | None) -> str | None:
    """`h` for a value made at `h = <here>` in a Python source file."""
    import linecache
    import re

    if not location or location.count(":") < 2:
        return None
    path, line, col = location.rsplit(":", 2)
    if not path.endswith(".py") or not line.isdigit() or not col.isdigit():
        return None
    text = linecache.getline(path, int(line))
    m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*=\s*", text[: max(int(col) - 1, 0)])
    return m.group(1) if m else None


def _inside_parallel_loop(block: Block) -> bool:
    op = block.parent_op()
    while op is not None:
        if PARALLEL_ATTR in op.attributes:
            return True
        op = op.parent_op()
    return False


def _depth(block: Block) -> int:
    depth = 0
    op = block.parent_op()
    while op is not None:
        depth += 1
        parent = op.parent_block()
        op = parent.parent_op() if parent is not None else None
    return depth


def _short_loc(op: Operation | None) -> str:
    loc = op_location(op)
    return loc if loc is not None else (op.name if op else "?")


class MinCutPlanner:
    def __init__(self, function: func.FuncOp, model: CostModel):
        from adpasses.analysis.alias import AliasAnalysis

        self.function = function
        self.model = model
        self.top = function.body.block
        self.alias = AliasAnalysis(function)
        self._clobbers: dict[Operation, list] = {}
        self._freed_after: dict[Operation, list[Operation]] = {}
        self.local_blocks: set[Block] = set()
        """Bodies of loops reversed loop-locally: their values are in
        registers when each iteration's reverse runs (`cache.loop_local`)."""
        self._overwritten: dict[Operation, list] = {}
        self._stored: dict[SSAValue, memref.StoreOp] = {}  # of the block being cut

    def clobbers(self, load: memref.LoadOp) -> list:
        """The writes that may overwrite what `load` read before the reverse
        sweep reloads it: `AliasAnalysis.clobbers`, less the deallocations
        in the function's top block, which the gradient runs only after the
        reverse sweep (`GradientBuilder._forward_sweep` defers them). A dealloc
        nested in a loop or a branch still runs in the forward sweep and
        still blocks the reload."""
        if load not in self._clobbers:
            found = list(self.alias.clobbers(load))
            self._clobbers[load] = [c for c in found if not self._deferred_dealloc(c.op)]
            self._freed_after[load] = [c.op for c in found if self._deferred_dealloc(c.op)]
        return self._clobbers[load]

    def overwritten_after(self, store: memref.StoreOp) -> list:
        """`AliasAnalysis.overwritten_after`, less the deallocations of the
        top block (deferred until after the reverse sweep, as for `clobbers`)."""
        if store not in self._overwritten:
            self._overwritten[store] = [c for c in self.alias.overwritten_after(store)
                                        if not self._deferred_dealloc(c.op)]
        return self._overwritten[store]

    def _reloadable_store(self, value: SSAValue, block: Block) -> memref.StoreOp | None:
        """A store of `value` in its own block (so it runs whenever `value`
        is computed) into memory of the function's top block that no later
        write may overwrite: the reverse sweep can load `value` back from
        the element it wrote instead of taping it."""
        if not isinstance(value, OpResult) or isinstance(value.op, memref.LoadOp):
            return None
        for use in value.uses:
            store = use.operation
            if (isinstance(store, memref.StoreOp) and store.value is value
                    and store.parent_block() is block and home_block(store.memref) is self.top
                    and not self.overwritten_after(store)):
                return store
        return None

    def overwrites_from(self, op: Operation, memref_value: SSAValue) -> list:
        """`AliasAnalysis.overwrites_from`, less the deallocations of the top
        block (deferred until after the reverse sweep, as for `clobbers`)."""
        return [c for c in self.alias.overwrites_from(op, memref_value)
                if not self._deferred_dealloc(c.op)]

    def _deferred_dealloc(self, op: Operation) -> bool:
        return isinstance(op, memref.DeallocOp) and op.parent_block() is self.top

    # -- classification of one value ------------------------------------------------

    def _free(self, value: SSAValue, block: Block) -> bool:
        """Available in the reverse of `block` without any cost here."""
        return is_constant(value) or home_block(value) is not block or is_induction_variable(value)

    def _why_not_recomputable(self, value: SSAValue) -> str | None:
        """None if `value` can be recomputed (or reloaded), else why not."""
        if isinstance(value, BlockArgument):
            parent = value.block.parent_op()
            flow = region_flow(parent)
            if flow is not None and flow.arg_note is not None:
                return flow.arg_note
            return f"argument of {parent.name if parent else 'a block'}: changes as control passes"
        assert isinstance(value, OpResult)
        op = value.op
        if isinstance(op, memref.LoadOp):
            found = self.clobbers(op)
            if found:
                first = found[0]
                return f"overwritten later: {first.reason}"
            return self._reads_unavailable_memref(op)
        if isinstance(op, (memref.AllocOp, memref.AllocaOp)):
            return "allocation"
        if op.regions:
            return f"result of {op.name}: recomputing would run the region again"
        if isinstance(op, func.CallOp):
            return f"result of a call of {op.callee}: recomputing it would call it again"
        if not is_recomputable_op(op):
            return f"{op.name} has side effects"
        return self._reads_unavailable_memref(op)

    def _reads_unavailable_memref(self, op: Operation) -> str | None:
        for operand in op.operands:
            missing = self._unavailable_memref(operand)
            if missing:
                return f"reads {missing}, which the reverse sweep cannot see (a memref cannot be taped)"
        return None

    def _unavailable_memref(self, value: SSAValue) -> str | None:
        """What makes the memref `value` impossible to have in the reverse
        sweep, or None: an allocation (or any memref that is not a pure
        view of available ones) inside a loop or a branch (e.g. a reload
        from an alloca of an scf.if branch)."""
        if not isinstance(value.type, MemRefType) or home_block(value) is self.top:
            return None
        if home_block(value) in self.local_blocks:
            return None
        if isinstance(value, OpResult) and is_recomputable_op(value.op):
            for operand in value.op.operands:
                found = self._unavailable_memref(operand)
                if found:
                    return found
            return None
        what = value.op.name if isinstance(value, OpResult) else "a block argument"
        return f"a memref defined by {what} in a loop or branch"

    # -- planning -------------------------------------------------------------------

    def plan(self, needed: Iterable[SSAValue]) -> CachePlan:
        plan = CachePlan(self.top, ProgramOrder(self.function))
        plan.needed = plan.order.sorted(set(needed))
        pending: dict[Block, set[SSAValue]] = {}
        for v in plan.needed:
            pending.setdefault(home_block(v), set()).add(v)
        while pending:
            block = max(pending, key=_depth)
            values = pending.pop(block)
            if block is self.top:
                for v in values:
                    if v not in plan.decisions:
                        plan.decide(v, "reuse", "defined in the function body, before the reverse sweep")
                continue
            if block in self.local_blocks:
                for v in values:
                    if v not in plan.decisions:
                        plan.decide(v, "reuse", "defined in the iteration of a loop reversed loop-locally: "
                                                "still in registers when its reverse runs")
                continue
            for outer in self._cut(block, values, plan):
                if outer not in plan.decisions:
                    pending.setdefault(home_block(outer), set()).add(outer)
        self._share_tapes(plan)
        return plan

    def _cut(self, block: Block, values: set[SSAValue], plan: CachePlan) -> set[SSAValue]:
        """Decide the values of `block`; return values of outer blocks that
        the chosen recomputations read."""
        graph = FlowGraph()
        s, t = ("S",), ("T",)
        nodes: dict[SSAValue, str | None] = {}  # value -> why it cannot be recomputed
        stored: dict[SSAValue, memref.StoreOp] = {}  # values reloadable from their store's element
        self._stored = stored
        # In program order: a set of values iterates by identity hashes, and
        # the graph's order decides ties between cuts and the report's order.
        needed = plan.order.sorted(values)
        stack = list(needed)
        tape_scale = PARALLEL_TAPE_SCALE if _inside_parallel_loop(block) else 1.0
        for v in needed:
            if self._free(v, block):
                continue
            graph.add_edge(("out", v), t, INF)
        while stack:
            v = stack.pop()
            if v in nodes or self._free(v, block):
                continue
            why = self._why_not_recomputable(v)
            store = self._reloadable_store(v, block)
            op = v.owner
            if store is not None and (why is not None or self.model.recompute_cost(op) > RELOAD_COST):
                why = None
                stored[v] = store  # reloaded from the element its store wrote
            nodes[v] = why
            graph.add_edge(("in", v), ("out", v), self.model.tape_cost(v.type) * tape_scale)
            if why is not None:
                graph.add_edge(s, ("in", v), INF)
                continue
            assert isinstance(op, Operation)
            if v in stored:
                graph.add_edge(s, ("in", v), RELOAD_COST * self.model.recompute_scale)
            else:
                graph.add_edge(s, ("in", v), self.model.recompute_cost(op))
            for operand in _rebuilt_from(v, stored):
                if not self._free(operand, block):
                    graph.add_edge(("out", operand), ("in", v), INF)
                    stack.append(operand)

        cut = graph.min_cut(s, t)
        source_side = cut.source_side
        outer: set[SSAValue] = set()
        for v in needed:
            if is_constant(v):
                plan.decide(v, "recompute", "constant")
            elif is_induction_variable(v):
                plan.decide(v, "reuse", "induction variable, rebuilt by the reverse loop")
        for v, why in nodes.items():
            if ("out", v) in source_side:
                continue  # not needed in the reverse sweep
            if ("in", v) in source_side:
                plan.decide(v, "tape", why or self._why_tape(v, cut, nodes))
                continue
            op = v.owner
            assert isinstance(op, Operation)
            if v in stored:
                plan.decide(v, "reload", self._why_reload_stored(stored[v]))
                plan.stored[v] = stored[v]
            elif isinstance(op, memref.LoadOp):
                plan.decide(v, "reload", self._why_reload(op))
            else:
                plan.decide(v, "recompute", f"{op.name} of values available in the reverse sweep")
            for operand in _rebuilt_from(v, stored):
                if is_constant(operand):
                    plan.decisions.setdefault(operand, _constant_decision(operand))
                elif home_block(operand) is not block:
                    outer.add(operand)
                elif is_induction_variable(operand):
                    plan.decide(operand, "reuse", "induction variable, rebuilt by the reverse loop")
        return outer

    def _why_reload_stored(self, store: memref.StoreOp) -> str:
        why = (f"stored at {_short_loc(store)}, where no later write may overwrite it (alias "
               "analysis): loaded back from there")
        freed = [c.op for c in self.alias.overwritten_after(store) if self._deferred_dealloc(c.op)]
        if freed:
            where = ", ".join(f"dealloc at {_short_loc(op)}" for op in freed)
            why += f"; {where}: deferred until after the reverse sweep"
        return why

    def _share_tapes(self, plan: CachePlan) -> None:
        """Tape once: a taped value that a store writes and a later load
        reads back (`store_forwarding.load_reading_back`), where that load
        is taped too, is not taped again: the reverse of the load writes
        what it pops into a mirror of the memory, and the reverse of the
        store's block reads it there (`shared`)."""
        from adpasses.analysis.store_forwarding import load_reading_back

        for value in plan.taped():
            if not isinstance(value, OpResult) or isinstance(value.op, memref.LoadOp):
                continue
            for use in list(value.uses):
                store = use.operation
                if not (isinstance(store, memref.StoreOp) and store.value is value
                        and store.parent_block() is home_block(value)):
                    continue
                load = load_reading_back(store, self.alias, self.top)
                if load is None or plan.kind(load.res) != "tape":
                    continue
                plan.decide(value, "shared", (
                    f"stored at {_short_loc(store)} and read back by the load at {_short_loc(load)}, "
                    "which is taped: taped once, there; the reverse of that load writes it into a "
                    f"mirror of {value_label(store.memref)}, read here"))
                plan.shared[value] = (store, load)
                taped = plan.decisions[load.res]
                taped.reason += f"; also gives {value_label(value)} stored at {_short_loc(store)} (tape once)"
                break

    def _why_reload(self, load: memref.LoadOp) -> str:
        why = "no later write may overwrite it (alias analysis)"
        freed = self._freed_after.get(load)
        if freed:
            where = ", ".join(f"dealloc at {_short_loc(op)}" for op in freed)
            why += f"; {where}: deferred until after the reverse sweep"
        return why

    def _why_tape(self, value: SSAValue, cut: MinCut, nodes: dict[SSAValue, str | None]) -> str:
        """Why a value that could be recomputed is taped: what the best
        plan of this block that recomputes it would cost instead (the cut
        with `value`'s recomputation forced), item by item."""
        size = self.model.tape_cost(value.type)
        try:
            alternative = cut.forcing_to_sink(("in", value))
        except ValueError:
            return ("recomputing it would need values that can be neither taped nor recomputed "
                    "in the reverse sweep (memrefs defined in a loop or branch)")
        chosen, other = cut.edges, alternative.edges
        added = [(edge, cost) for edge, cost in other.items() if edge not in chosen]
        dropped = [(edge, cost) for edge, cost in chosen.items()
                   if edge not in other and edge != (("in", value), ("out", value))]
        cost = sum(c for _, c in added) - sum(c for _, c in dropped)
        items = _cost_items(added, nodes, self._stored) + [f"no tape for {value_label(e[0][1])} (-{c:g} bytes)"
                                             for e, c in dropped]
        verdict = "as much (a tie: both are optimal)" if abs(cost - size) < 1e-9 else f"{cost:g}"
        return (f"cost model: taping it costs {size:g} bytes per iteration; recomputing it instead would "
                f"cost {verdict} per iteration: {', '.join(items)}")


def _cost_items(edges: list[tuple[tuple, float]], nodes: dict[SSAValue, str | None],
                stored: dict[SSAValue, memref.StoreOp]) -> list[str]:
    """The cut edges of a plan, in words: `tape %s (8 bytes; why)`,
    `reload x[i] (0.25)`, `recompute math.exp (16)`, grouped by op."""
    tapes, reloads = [], []
    recomputes: dict[str, list[float]] = {}
    for (u, v), cost in edges:
        if u == ("S",):  # S -> v_in: v is recomputed
            value = v[1]
            op = value.owner
            if isinstance(op, memref.LoadOp) or value in stored:
                reloads.append(f"reload {value_label(value)} ({cost:g})")
            else:
                recomputes.setdefault(op.name, []).append(cost)
        else:  # v_in -> v_out: v is taped
            value = u[1]
            why = nodes.get(value)
            tapes.append(f"tape {value_label(value)} ({cost:g} bytes" + (f"; {why})" if why else ")"))
    ops = [f"recompute {name}" + (f" x{len(costs)}" if len(costs) > 1 else "") + f" ({sum(costs):g})"
           for name, costs in recomputes.items()]
    return tapes + reloads + ops


def _rebuilt_from(value: SSAValue, stored: dict[SSAValue, memref.StoreOp]) -> list[SSAValue]:
    """What the reverse sweep reads to rebuild `value`: its op's operands,
    or, reloaded from its store's element, that memref and its indices."""
    store = stored.get(value)
    if store is not None:
        return [store.memref, *store.indices]
    op = value.owner
    assert isinstance(op, Operation)
    return list(op.operands)


def value_label(value: SSAValue) -> str:
    from adpasses.cache.report import value_label as label

    return label(value)


def _constant_decision(value: SSAValue):  # type: ignore[no-untyped-def]
    from adpasses.cache.plan import CacheDecision

    return CacheDecision(value, "recompute", "constant")
