"""Cache planning: how each primal value the reverse sweep needs gets there.

For every value the reverse sweep reads (what the rules' `needs` list, plus
what recomputing those values reads in turn) one `CacheDecision`:

- `reuse`: defined in the function's top block, or an induction variable
  the reverse loop reconstructs: already available.
- `recompute`: re-executed in the reverse sweep from available values.
- `reload`: a load re-issued in the reverse sweep; legal only when no later
  write may overwrite what it read (`AliasAnalysis.clobbers`).
- `tape`: pushed in the forward sweep, popped in the reverse sweep.
- `shared`: a value stored to memory that a later load reads back, and
  that load is taped: the value is taped once, at the load; the reverse of
  the load writes what it pops into a mirror of the memory (one buffer of
  its size), which the reverse of the store's block reads
  (`analysis.store_forwarding`).

A stored value may also be reloaded: from the element its store wrote,
when no later write may overwrite it (`AliasAnalysis.overwritten_after`).

Memory a checkpointed call reads (`MemoryNeed`: the call, a memref
operand) is planned apart: `snapshot` when the call itself or later code
may overwrite it (its contents are pushed on a tape before the call and
restored, for the recomputation, into a scratch buffer), `reuse` when no
write may change it afterwards (`AliasAnalysis.overwrites_from`).

Policies: `tape-all` tapes every needed value defined inside a loop or
branch (the simple baseline); `minimal` chooses, per block, the set of taped
values of smallest cost as a minimum cut (`adpasses.cache.mincut`), with the cost
model of `adpasses.cache.cost_model`; `min-memory` is that cut with free
recomputation (fewest taped bytes, Enzyme-MLIR's placement).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.dialects import func, memref
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from adpasses.core.effects import is_pure
from adpasses.core.ir_facts import home_block, is_constant
from adpasses.core.region_flow import is_induction_variable

DECISION_KINDS = ("reuse", "recompute", "reload", "tape", "shared")


@dataclass
class CacheDecision:
    value: SSAValue
    kind: str
    reason: str


@dataclass(frozen=True)
class MemoryNeed:
    """The contents of `memref` as they are when `op` starts, which the
    reverse of `op` reads (a checkpointed call reruns on them)."""

    op: Operation
    memref: SSAValue


@dataclass
class MemoryDecision:
    need: MemoryNeed
    kind: str  # "snapshot", "reuse", or "scratch" (an uninitialised buffer serves)
    reason: str


@dataclass
class CachePlan:
    top_block: Block
    order: ProgramOrder
    decisions: dict[SSAValue, CacheDecision] = field(default_factory=dict)
    needed: list[SSAValue] = field(default_factory=list)
    """The values rules asked for (before closing over recomputation)."""
    memory: list[MemoryDecision] = field(default_factory=list)
    """Per memory need of a checkpointed call: snapshot or reuse."""
    loops: list = field(default_factory=list)
    """Per top-level loop the reverse visits: reversed loop-locally or not,
    and why (`adpasses.cache.loop_local.LoopDecision`)."""

    stored: dict[SSAValue, memref.StoreOp] = field(default_factory=dict)
    """Values reloaded from the element their store wrote (`reload`)."""
    shared: dict[SSAValue, tuple[memref.StoreOp, memref.LoadOp]] = field(default_factory=dict)
    """Values (`shared`) read from the mirror the reverse of the taped load
    that reads them back fills: value -> (its store, the load)."""

    def is_local_loop(self, op: Operation) -> bool:
        """`op` is reversed iteration by iteration, inside its forward loop."""
        return any(d.loop is op and d.local for d in self.loops)

    def mirrored_loads(self) -> list[memref.LoadOp]:
        """Taped loads whose reverse writes what they pop into a mirror."""
        return list(dict.fromkeys(load for _, load in self.shared.values()))

    def snapshots(self) -> list[MemoryNeed]:
        return [d.need for d in self.memory if d.kind == "snapshot"]

    def is_snapshot(self, op: Operation, memref_value: SSAValue) -> bool:
        return self.memory_kind(op, memref_value) == "snapshot"

    def memory_kind(self, op: Operation, memref_value: SSAValue) -> str | None:
        need = MemoryNeed(op, memref_value)
        return next((d.kind for d in self.memory if d.need == need), None)

    def decide(self, value: SSAValue, kind: str, reason: str) -> None:
        assert kind in DECISION_KINDS
        self.decisions[value] = CacheDecision(value, kind, reason)

    def kind(self, value: SSAValue) -> str | None:
        d = self.decisions.get(value)
        return d.kind if d else None

    def taped(self) -> list[SSAValue]:
        return self.order.sorted(v for v, d in self.decisions.items() if d.kind == "tape")

    def taped_in(self, block: Block) -> list[SSAValue]:
        return [v for v in self.taped() if home_block(v) is block]

    def materialized_in(self, block: Block) -> list[SSAValue]:
        """Recomputed, reloaded and shared values of `block`, in forward order."""
        return self.order.sorted(
            v
            for v, d in self.decisions.items()
            if d.kind in ("recompute", "reload", "shared") and home_block(v) is block and not is_constant(v)
        )


class ProgramOrder:
    """Pre-order positions of a function's ops; block arguments come right
    after their parent op, so sorting by `key` gives forward program order
    within any block."""

    def __init__(self, root: Operation):
        self.index = {op: i for i, op in enumerate(root.walk())}

    def key(self, value: SSAValue) -> tuple[float, int]:
        if isinstance(value, BlockArgument):
            parent = value.block.parent_op()
            return (self.index.get(parent, -1) + 0.5 if parent else -1.0, value.index)
        assert isinstance(value, OpResult)
        return (float(self.index[value.op]), value.index)

    def sorted(self, values: Iterable[SSAValue]) -> list[SSAValue]:
        return sorted(values, key=self.key)


def is_recomputable_op(op: Operation) -> bool:
    """Pure ops with no regions: re-executing them gives the same value."""
    if op.regions or isinstance(op, (memref.AllocOp, memref.AllocaOp)):
        return False
    return is_pure(op)


def plan_tape_all(function: func.FuncOp, needed: Iterable[SSAValue]) -> CachePlan:
    """Tape every needed value defined inside a loop or a branch."""
    top_block = function.body.block
    plan = CachePlan(top_block, ProgramOrder(function))
    plan.needed = plan.order.sorted(set(needed))
    for value in plan.needed:
        if home_block(value) is top_block:
            plan.decide(value, "reuse", "defined before the reverse sweep, in the function body")
        elif is_constant(value):
            plan.decide(value, "recompute", "constant")
        elif is_induction_variable(value):
            plan.decide(value, "reuse", "induction variable, rebuilt by the reverse loop")
        else:
            plan.decide(value, "tape", "tape-all policy: needed value defined in a loop or branch")
    return plan


def plan_memory(plan: CachePlan, needs: Iterable[MemoryNeed], overwrites,  # type: ignore[no-untyped-def]
                written_first=None) -> None:  # type: ignore[no-untyped-def]
    """Snapshot or reuse the memory each need reads; `overwrites(op, memref)`
    lists the writes that may change it from `op` on
    (`AliasAnalysis.overwrites_from`); `written_first(op, memref)`: the op
    writes every element before reading it (its contents on entry never
    matter: a scratch buffer serves, nothing is taped)."""
    seen: set[MemoryNeed] = set()
    for need in needs:
        if need in seen:
            continue
        seen.add(need)
        found = overwrites(need.op, need.memref)
        if found and written_first is not None and written_first(need.op, need.memref):
            plan.memory.append(MemoryDecision(
                need, "scratch", "the call writes every element it reads before reading it: "
                "its rerun gets an uninitialised buffer"))
        elif found:
            plan.memory.append(MemoryDecision(need, "snapshot", f"overwritten: {found[0].reason}"))
        else:
            plan.memory.append(MemoryDecision(
                need, "reuse", "no write may change it from the call on (alias analysis)"))


def call_writes_first(op: Operation, memref_value: SSAValue) -> bool:
    """For a call: its callee writes the argument `memref_value` before
    reading it (`memory_writes.written_before_read`)."""
    from xdsl.traits import SymbolTable

    from adpasses.analysis.memory_writes import written_before_read

    if not isinstance(op, func.CallOp):
        return False
    module = op
    while module.parent_op() is not None:
        module = module.parent_op()  # type: ignore[assignment]
    callee = SymbolTable.lookup_symbol(module, op.callee)
    if not isinstance(callee, func.FuncOp):
        return False
    return all(written_before_read(callee, k)
               for k, v in enumerate(op.operands) if v is memref_value)
