"""How values flow through region ops: one entry per op.

Every pass that follows values across region boundaries reads this table
instead of matching op classes itself: the activity analysis (both
directions), the reverse rules of the region ops (`reverse/rules/scf.py`)
and the reverse engine (which terminators a parent's rule reverses), the
cache planner (induction variables, why a block argument is taped), the
tape capacities (`trip_bounds`), the alias analysis (how often and in which
order regions run) and the write effects (`analysis/memory_writes.py`).
Supporting a new region op is one entry here plus its reverse rule
(docs/CONVENTIONS.md, "Adding a region op"); `test/test_region_flow.py`
fails while either is missing.

An entry names the op's values by position (`Values`: a slice of its
operands, its results, a region's block arguments or a region's terminator
operands) and says:

- `edges`: (source, target) part names; the target takes the value of the
  source, position by position, when control crosses a region boundary
  (operand -> block argument on entry, terminator operand -> result on exit
  or -> block argument of the next iteration). Data flows along edges and
  only along them: activity, float bits and memory classes follow them,
  derivatives flow back along them.
- `control`: values that decide which region runs or how often (a
  condition, a switch value, loop bounds). Never data: no derivative flows
  through them, but the reverse sweep reads them again.
- `induction`: block arguments computed from the control alone (scf.for's
  induction variable): not data either; the reverse loop rebuilds them, so
  the cache planner never tapes them.
- `runs`: how the regions run each time the op runs (`Runs`).
- `trip_count`: for a counted loop, the part holding (lb, ub, step): its
  region runs ceil((ub - lb) / step) times (tape capacities, the cache
  report's loop factors). A loop without one runs an unknown number of times.
- `arg_note`: what its block arguments are, in the cache report's words.

`func.call` is not in the table: it has no regions, and calls are inlined
(`ad-inline-calls`) before the analyses run; what a call may write is the
callee's summary (`analysis/memory_writes.py`, `CalleeEffect`).

Terminator operands are read from the region's single block (`region.block`):
the structured ops here have one block per region; an op with a
multi-block region is not in the table (the analyses treat it as unknown).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from xdsl.dialects import memref, scf
from xdsl.ir import BlockArgument, Operation, SSAValue


class Runs(Enum):
    ONE_OF = "exactly one of its regions, once (or none, for an empty else)"
    ONCE = "each of its regions once, in order"
    REPEATEDLY = "its regions any number of times, in order within one iteration"


OPERANDS, RESULTS, ARGS, YIELDS = "operands", "results", "block arguments", "terminator operands"

EACH = -1
"""`Values.region`: every region of the op (for ops with a variable number
of regions, like scf.index_switch); an edge from it pairs each region's
values with its target."""


@dataclass(frozen=True)
class Values:
    """`kind` values of an op, `[start:stop]`; for ARGS and YIELDS, of the
    region `region` (an index into `op.regions`, or EACH)."""

    kind: str
    region: int | None = None
    start: int = 0
    stop: int | None = None

    def lists(self, op: Operation) -> list[Sequence[SSAValue]]:
        """The values, one list per region for EACH (regions without a block,
        like an absent else, contribute none), else one list."""
        if self.kind == OPERANDS:
            return [op.operands[self.start:self.stop]]
        if self.kind == RESULTS:
            return [op.results[self.start:self.stop]]
        regions = op.regions if self.region == EACH else [op.regions[self.region]]
        lists: list[Sequence[SSAValue]] = []
        for region in regions:
            if not region.blocks:
                continue
            block = region.block
            if self.kind == ARGS:
                lists.append(block.args[self.start:self.stop])
            else:
                terminator = block.last_op
                assert terminator is not None, f"{op.name}: a region without a terminator"
                lists.append(terminator.operands[self.start:self.stop])
        return lists


def operands(start: int = 0, stop: int | None = None) -> Values:
    return Values(OPERANDS, None, start, stop)


def results(start: int = 0, stop: int | None = None) -> Values:
    return Values(RESULTS, None, start, stop)


def args(region: int, start: int = 0, stop: int | None = None) -> Values:
    return Values(ARGS, region, start, stop)


def yields(region: int, start: int = 0, stop: int | None = None) -> Values:
    return Values(YIELDS, region, start, stop)


@dataclass(frozen=True)
class RegionFlow:
    op: type[Operation]
    runs: Runs
    parts: dict[str, Values]
    edges: tuple[tuple[str, str], ...]
    control: tuple[str, ...] = ()
    induction: str | None = None
    trip_count: str | None = None
    arg_note: str | None = None

    def values(self, op: Operation, part: str) -> list[SSAValue]:
        """The values of one part of `op` (a part of one region, or of the op)."""
        lists = self.parts[part].lists(op)
        assert self.parts[part].region != EACH, f"{part} is per region: use region_values"
        return list(lists[0]) if lists else []

    def links(self, op: Operation) -> list[tuple[SSAValue, SSAValue]]:
        """Every (source, target) pair of values along the edges of `op`."""
        pairs: list[tuple[SSAValue, SSAValue]] = []
        for source, target in self.edges:
            targets = self.parts[target].lists(op)
            for values in self.parts[source].lists(op):
                for into in targets:
                    pairs.extend(zip(values, into))
        return pairs

    def exits(self, op: Operation, region: int) -> list[tuple[SSAValue, SSAValue]]:
        """(terminator operand, result) pairs of region `region` of `op`:
        what the op's results are when that region is the last to run."""
        pairs = []
        for source, target in self.edges:
            src, dst = self.parts[source], self.parts[target]
            if src.kind != YIELDS or dst.kind != RESULTS or src.region not in (region, EACH):
                continue
            sub = Values(YIELDS, region, src.start, src.stop)
            for values in sub.lists(op):
                pairs.extend(zip(values, dst.lists(op)[0]))
        return pairs

    def control_values(self, op: Operation) -> list[SSAValue]:
        return [v for part in self.control for values in self.parts[part].lists(op) for v in values]

    def induction_values(self, op: Operation) -> list[SSAValue]:
        return self.values(op, self.induction) if self.induction else []


FOR = RegionFlow(
    scf.ForOp,
    Runs.REPEATEDLY,
    parts={
        "bounds": operands(0, 3),  # lb, ub, step
        "inits": operands(3),
        "iv": args(0, 0, 1),
        "iter_args": args(0, 1),
        "yielded": yields(0),
        "results": results(),
    },
    edges=(
        ("inits", "iter_args"),  # the first iteration
        ("yielded", "iter_args"),  # the next iteration
        ("inits", "results"),  # no iteration
        ("yielded", "results"),  # the last iteration
    ),
    control=("bounds",),
    induction="iv",
    trip_count="bounds",
    arg_note="loop-carried value (iter_arg of scf.for)",
)

WHILE = RegionFlow(
    scf.WhileOp,
    Runs.REPEATEDLY,
    parts={
        "inits": operands(),
        "before_args": args(0),
        "condition": yields(0, 0, 1),  # scf.condition's first operand
        "forwarded": yields(0, 1),  # scf.condition's other operands
        "after_args": args(1),
        "yielded": yields(1),
        "results": results(),
    },
    edges=(
        ("inits", "before_args"),
        ("yielded", "before_args"),
        ("forwarded", "after_args"),  # the condition held
        ("forwarded", "results"),  # it did not
    ),
    control=("condition",),
    arg_note="scf.while argument: changes every iteration",
)

IF = RegionFlow(
    scf.IfOp,
    Runs.ONE_OF,
    parts={"cond": operands(0, 1), "yielded": yields(EACH), "results": results()},
    edges=(("yielded", "results"),),
    control=("cond",),
)

INDEX_SWITCH = RegionFlow(
    scf.IndexSwitchOp,
    Runs.ONE_OF,
    parts={"arg": operands(0, 1), "yielded": yields(EACH), "results": results()},
    edges=(("yielded", "results"),),
    control=("arg",),
)

EXECUTE_REGION = RegionFlow(
    scf.ExecuteRegionOp,
    Runs.ONCE,
    parts={"yielded": yields(EACH), "results": results()},
    edges=(("yielded", "results"),),
)

ALLOCA_SCOPE = RegionFlow(
    memref.AllocaScopeOp,
    Runs.ONCE,
    parts={"yielded": yields(EACH), "results": results()},
    edges=(("yielded", "results"),),
)

REGION_FLOWS: dict[type[Operation], RegionFlow] = {
    flow.op: flow for flow in (FOR, WHILE, IF, INDEX_SWITCH, EXECUTE_REGION, ALLOCA_SCOPE)
}
"""The region ops the analyses see through and the reverse sweep mirrors,
by class; look entries up with `region_flow(op)`, which also checks that
the op's regions have one block each (scf.parallel, an unregistered region
op or a multi-block scf.execute_region has none: the activity analysis
treats it as unknown)."""


def region_flow(op: Operation | None) -> RegionFlow | None:
    """The entry of `op`, if it has one and each of its regions has at most
    one block (the edges read a region's single block: an scf.execute_region
    with several blocks is unknown to the analyses)."""
    flow = REGION_FLOWS.get(type(op)) if op is not None else None
    if flow is None:
        return None
    for region in op.regions:  # type: ignore[union-attr]
        first = region.blocks.first
        if first is not None and first.next_block is not None:
            return None
    return flow


def runs_at_most_once(op: Operation) -> bool:
    """Each region of `op` runs at most once each time `op` runs (a fact of
    its kind, whatever its blocks)."""
    flow = REGION_FLOWS.get(type(op))
    return flow is not None and flow.runs is not Runs.REPEATEDLY


def trip_bounds(op: Operation) -> tuple[SSAValue, SSAValue, SSAValue] | None:
    """(lb, ub, step) of a counted loop of the table; None for any other op."""
    flow = region_flow(op)
    if flow is None or flow.trip_count is None:
        return None
    lb, ub, step = flow.values(op, flow.trip_count)
    return lb, ub, step


def counted_loop(op: Operation) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue] | None:
    """(iv, lb, ub, step) of a counted loop of the table, whose induction
    variable takes lb, lb + step, ... while below ub (scf.for); else None."""
    flow = region_flow(op)
    if flow is None or flow.trip_count is None or flow.induction is None:
        return None
    (iv,) = flow.induction_values(op)
    lb, ub, step = flow.values(op, flow.trip_count)
    return iv, lb, ub, step


def is_induction_variable(value: SSAValue) -> bool:
    """A block argument computed from its region op's control alone (the
    induction variable of an scf.for)."""
    if not isinstance(value, BlockArgument):
        return False
    parent = value.block.parent_op()
    flow = region_flow(parent)
    if flow is None or flow.induction is None:
        return False
    part = flow.parts[flow.induction]
    assert parent is not None and part.kind == ARGS and part.region != EACH
    stop = len(value.block.args) if part.stop is None else part.stop
    return value.block.parent_region() is parent.regions[part.region] and part.start <= value.index < stop


def is_region_terminator(op: Operation) -> bool:
    """The terminator of a region of a table op: its data flow is the
    parent's edges, and the parent's reverse rule reverses it."""
    parent = op.parent_op()
    return parent is not None and type(parent) in REGION_FLOWS and op is op.parent_block().last_op  # type: ignore[union-attr]
