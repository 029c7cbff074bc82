"""The region-flow table (adpasses/core/region_flow.py): one entry per region op.

- every region op the frontend emits, the reverse rules reverse or the
  lowering translates has an entry, and every entry has a reverse rule and
  a lowering;
- each entry's edges, control values, induction variables and exits on a
  real instance of the op (a sample per entry: a new entry fails until it
  has one);
- the readers follow the table (changing an entry changes what the
  activity analysis finds).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from xdsl.dialects import builtin, func, memref, scf
from xdsl.ir import Operation, SSAValue

from adpasses.analysis.activity import ActivityAnalysis
from adpasses.core.context import make_context
from adpasses.core.region_flow import (
    REGION_FLOWS,
    WHILE,
    RegionFlow,
    Runs,
    is_induction_variable,
    is_region_terminator,
    region_flow,
    runs_at_most_once,
    trip_bounds,
)
from adpasses.lowering.core import op_table
from adpasses.reverse.rules import rule_table
from xdsl.parser import Parser

ROOT = Path(__file__).resolve().parent.parent


def _has_regions(cls: type) -> bool:
    definition = getattr(cls, "get_irdl_definition", None)
    return definition is not None and bool(definition().regions)


def _frontend_region_ops() -> set[type[Operation]]:
    """Region op classes the frontend names (`scf.ForOp(...)`, ...)."""
    from xdsl.dialects import affine, arith, cf, math

    modules = {"scf": scf, "memref": memref, "func": func, "affine": affine, "arith": arith,
               "cf": cf, "math": math}
    found = set()
    for path in sorted((ROOT / "frontend").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                module = modules.get(node.value.id)
                cls = getattr(module, node.attr, None) if module else None
                if isinstance(cls, type) and _has_regions(cls) and cls is not func.FuncOp:
                    found.add(cls)
    return found


def _names(ops) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(op.name for op in ops)


def test_the_frontend_emits_only_region_ops_of_the_table() -> None:
    used = _frontend_region_ops()
    assert {scf.ForOp, scf.IfOp, scf.WhileOp} <= used  # the scan sees the frontend
    assert not used - REGION_FLOWS.keys(), (
        f"the frontend emits {_names(used - REGION_FLOWS.keys())}, which have no entry in "
        "adpasses/core/region_flow.py (docs/CONVENTIONS.md, 'Adding a region op')")


def test_every_reversed_region_op_has_an_entry_and_every_entry_a_rule() -> None:
    # A structured op (linalg.matmul) has a region, but it is its scalar
    # body, not control flow: the op is differentiated whole, from its
    # entry in core/structured_ops.py (reads, writes), never entered.
    from adpasses.core.structured_ops import STRUCTURED_OPS

    reversed_ops = {cls for cls in rule_table() if _has_regions(cls) and cls not in STRUCTURED_OPS}
    assert reversed_ops - REGION_FLOWS.keys() == set(), (
        f"reverse rules without a region-flow entry: {_names(reversed_ops - REGION_FLOWS.keys())}")
    assert REGION_FLOWS.keys() - reversed_ops == set(), (
        f"region-flow entries without a reverse rule: {_names(REGION_FLOWS.keys() - reversed_ops)}")


def test_every_lowered_region_op_has_an_entry_and_every_entry_a_lowering() -> None:
    lowered = {cls for cls in op_table() if _has_regions(cls)}
    assert lowered == set(REGION_FLOWS), (
        f"lowered only: {_names(lowered - REGION_FLOWS.keys())}; "
        f"in the table only: {_names(REGION_FLOWS.keys() - lowered)}")


def test_entries_are_keyed_by_their_op() -> None:
    for cls, flow in REGION_FLOWS.items():
        assert flow.op is cls
        for source, target in flow.edges:
            assert source in flow.parts and target in flow.parts, (cls.name, source, target)
        for part in (*flow.control, *filter(None, (flow.induction, flow.trip_count))):
            assert part in flow.parts, (cls.name, part)


# -- a sample of each op, and what its edges must be ---------------------------------

SAMPLES = {
    scf.ForOp: """
func.func @f(%lb: index, %ub: index, %st: index, %a0: f64, %b0: f64) -> (f64, f64) {
  %ra, %rb = scf.for %i = %lb to %ub step %st iter_args(%a = %a0, %b = %b0) -> (f64, f64) {
    %a2 = arith.addf %a, %b : f64
    %b2 = arith.mulf %a, %b : f64
    scf.yield %a2, %b2 : f64, f64
  }
  func.return %ra, %rb : f64, f64
}""",
    scf.WhileOp: """
func.func @f(%x0: f64, %n: f64) -> f64 {
  %r = scf.while (%x = %x0) : (f64) -> f64 {
    %go = arith.cmpf olt, %x, %n : f64
    %c = arith.addf %x, %x : f64
    scf.condition(%go) %c : f64
  } do {
  ^bb0(%y: f64):
    %y2 = arith.mulf %y, %y : f64
    scf.yield %y2 : f64
  }
  func.return %r : f64
}""",
    scf.IfOp: """
func.func @f(%c: i1, %x: f64, %y: f64) -> f64 {
  %r = scf.if %c -> (f64) {
    %t = arith.addf %x, %y : f64
    scf.yield %t : f64
  } else {
    %e = arith.mulf %x, %y : f64
    scf.yield %e : f64
  }
  func.return %r : f64
}""",
    scf.IndexSwitchOp: """
func.func @f(%k: index, %x: f64, %y: f64) -> f64 {
  %r = scf.index_switch %k -> f64
  case 1 {
    %p = arith.addf %x, %y : f64
    scf.yield %p : f64
  }
  case 2 {
    %q = arith.mulf %x, %y : f64
    scf.yield %q : f64
  }
  default {
    %d = arith.subf %x, %y : f64
    scf.yield %d : f64
  }
  func.return %r : f64
}""",
    scf.ExecuteRegionOp: """
func.func @f(%x: f64) -> f64 {
  %r = scf.execute_region -> (f64) {
    %s = arith.mulf %x, %x : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}""",
    memref.AllocaScopeOp: """
func.func @f(%x: f64) -> f64 {
  %r = "memref.alloca_scope"() ({
    %s = arith.mulf %x, %x : f64
    "memref.alloca_scope.return"(%s) : (f64) -> ()
  }) : () -> f64
  func.return %r : f64
}""",
}

EXPECTED_LINKS = {
    scf.ForOp: {("a0", "a"), ("b0", "b"), ("a2", "a"), ("b2", "b"),
                ("a0", "ra"), ("b0", "rb"), ("a2", "ra"), ("b2", "rb")},
    scf.WhileOp: {("x0", "x"), ("y2", "x"), ("c", "y"), ("c", "r")},
    scf.IfOp: {("t", "r"), ("e", "r")},
    scf.IndexSwitchOp: {("d", "r"), ("p", "r"), ("q", "r")},
    scf.ExecuteRegionOp: {("s", "r")},
    memref.AllocaScopeOp: {("s", "r")},
}
EXPECTED_CONTROL = {
    scf.ForOp: ["lb", "ub", "st"],
    scf.WhileOp: ["go"],
    scf.IfOp: ["c"],
    scf.IndexSwitchOp: ["k"],
    scf.ExecuteRegionOp: [],
    memref.AllocaScopeOp: [],
}
EXPECTED_EXITS = {  # per region, in op.regions order
    scf.ForOp: [{("a2", "ra"), ("b2", "rb")}],
    scf.WhileOp: [{("c", "r")}, set()],
    scf.IfOp: [{("t", "r")}, {("e", "r")}],
    scf.IndexSwitchOp: [{("d", "r")}, {("p", "r")}, {("q", "r")}],
    scf.ExecuteRegionOp: [{("s", "r")}],
    memref.AllocaScopeOp: [{("s", "r")}],
}


def _sample(cls: type[Operation]) -> tuple[func.FuncOp, Operation]:
    module = Parser(make_context(), SAMPLES[cls]).parse_module()
    function = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    op = next(op for op in function.walk() if type(op) is cls)
    return function, op


def _name(value: SSAValue) -> str:
    assert value.name_hint, value
    return value.name_hint


@pytest.mark.parametrize("cls", list(REGION_FLOWS), ids=lambda c: c.name)
def test_every_entry_has_a_sample(cls) -> None:  # noqa: ANN001
    assert cls in SAMPLES and cls in EXPECTED_LINKS and cls in EXPECTED_CONTROL, (
        f"add a sample of {cls.name} and its expected edges to this test")


@pytest.mark.parametrize("cls", list(SAMPLES), ids=lambda c: c.name)
def test_edges_of_each_op(cls) -> None:  # noqa: ANN001
    _, op = _sample(cls)
    flow = region_flow(op)
    assert flow is not None and flow is REGION_FLOWS[cls]
    links = flow.links(op)
    assert {(_name(s), _name(t)) for s, t in links} == EXPECTED_LINKS[cls]
    assert len(links) == len(EXPECTED_LINKS[cls])  # no pair twice
    assert [_name(v) for v in flow.control_values(op)] == EXPECTED_CONTROL[cls]
    for k, expected in enumerate(EXPECTED_EXITS[cls]):
        assert {(_name(y), _name(r)) for y, r in flow.exits(op, k)} == expected, k


@pytest.mark.parametrize("cls", list(SAMPLES), ids=lambda c: c.name)
def test_each_edge_pairs_lists_of_one_length(cls) -> None:  # noqa: ANN001
    """A slice off by one in an entry shows as lists of different lengths."""
    _, op = _sample(cls)
    flow = REGION_FLOWS[cls]
    for source, target in flow.edges:
        targets = flow.parts[target].lists(op)
        for values in flow.parts[source].lists(op):
            for into in targets:
                assert len(values) == len(into), (cls.name, source, target)


def test_control_is_not_data() -> None:
    """No edge starts at a control value or ends at an induction variable."""
    for cls in SAMPLES:
        _, op = _sample(cls)
        flow = REGION_FLOWS[cls]
        control = set(flow.control_values(op))
        induction = set(flow.induction_values(op))
        for source, target in flow.links(op):
            assert source not in control and target not in induction, cls.name


def test_induction_variables_and_trip_bounds() -> None:
    _, loop = _sample(scf.ForOp)
    iv, a, b = loop.body.block.args
    assert is_induction_variable(iv)
    assert not is_induction_variable(a) and not is_induction_variable(b)
    assert [_name(v) for v in trip_bounds(loop)] == ["lb", "ub", "st"]
    function, w = _sample(scf.WhileOp)
    assert trip_bounds(w) is None
    assert not any(is_induction_variable(v) for r in w.regions for v in r.block.args)
    assert not any(is_induction_variable(v) for v in function.body.block.args)


def test_how_regions_run() -> None:
    assert {cls for cls, f in REGION_FLOWS.items() if f.runs is Runs.REPEATEDLY} == {
        scf.ForOp, scf.WhileOp}
    assert {cls for cls, f in REGION_FLOWS.items() if f.runs is Runs.ONE_OF} == {
        scf.IfOp, scf.IndexSwitchOp}
    _, w = _sample(scf.WhileOp)
    _, e = _sample(scf.ExecuteRegionOp)
    assert not runs_at_most_once(w) and runs_at_most_once(e)
    function, _ = _sample(scf.IfOp)
    assert not runs_at_most_once(function)  # not in the table: may run anything again


def test_region_terminators() -> None:
    function, op = _sample(scf.IfOp)
    terminators = [r.block.last_op for r in op.regions]
    assert all(is_region_terminator(t) for t in terminators)
    assert not is_region_terminator(function.body.block.last_op)  # func.return has a rule
    assert not any(is_region_terminator(o) for o in op.regions[0].block.ops if o not in terminators)


def test_unknown_region_ops_have_no_entry() -> None:
    text = """
func.func @f(%n: index, %x: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    "scf.reduce"() : () -> ()
  }) : (index, index, index) -> ()
  func.return
}"""
    module = Parser(make_context(), text).parse_module()
    parallel = next(op for op in module.walk() if isinstance(op, scf.ParallelOp))
    assert region_flow(parallel) is None and trip_bounds(parallel) is None
    assert not is_induction_variable(parallel.body.block.args[0])


# -- the readers follow the table -----------------------------------------------------


def test_activity_follows_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without WHILE's back edge (`yielded` -> `before_args`), a value that
    becomes varied only in the second iteration is no longer found varied:
    the analysis reads the edges from the table, nowhere else."""
    text = """
func.func @f(%x: f64, %n: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %r:2 = scf.while (%s = %zero, %t = %zero) : (f64, f64) -> (f64, f64) {
    %go = arith.cmpf olt, %t, %n : f64
    scf.condition(%go) %s, %t : f64, f64
  } do {
  ^bb0(%s2: f64, %t2: f64):
    %u = arith.mulf %x, %t2 : f64
    scf.yield %u, %t2 : f64, f64
  }
  func.return %r#0 : f64
}"""

    def varied_s() -> bool:
        module = Parser(make_context(), text).parse_module()
        function = next(op for op in module.walk() if isinstance(op, func.FuncOp))
        analysis = ActivityAnalysis(function, ["active", "const"], ["active"])
        w = next(op for op in function.walk() if isinstance(op, scf.WhileOp))
        return analysis.is_active(w.before_region.block.args[0])

    assert varied_s()
    cut = RegionFlow(WHILE.op, WHILE.runs, WHILE.parts,
                     tuple(e for e in WHILE.edges if e != ("yielded", "before_args")),
                     WHILE.control, WHILE.induction, WHILE.trip_count, WHILE.arg_note)
    monkeypatch.setitem(REGION_FLOWS, scf.WhileOp, cut)
    assert not varied_s()


def test_module_builtin_is_not_a_region_op() -> None:
    assert region_flow(builtin.ModuleOp([])) is None


def test_counted_loops() -> None:
    from adpasses.core.region_flow import counted_loop

    _, loop = _sample(scf.ForOp)
    iv, lb, ub, step = counted_loop(loop)
    assert iv is loop.body.block.args[0] and [_name(v) for v in (lb, ub, step)] == ["lb", "ub", "st"]
    for cls in SAMPLES:
        if cls is not scf.ForOp:
            assert counted_loop(_sample(cls)[1]) is None, cls.name


def test_a_multi_block_region_op_is_unknown() -> None:
    """The edges read one block per region: an scf.execute_region with
    several blocks has no entry (the activity analysis treats it as
    unknown), though it still runs its region once."""
    text = """
func.func @f(%x: f64, %c: i1) -> f64 {
  %r = scf.execute_region -> (f64) {
    cf.cond_br %c, ^bb1, ^bb2
  ^bb1:
    %a = arith.mulf %x, %x : f64
    scf.yield %a : f64
  ^bb2:
    scf.yield %x : f64
  }
  func.return %r : f64
}"""
    module = Parser(make_context(), text).parse_module()
    function = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    op = next(op for op in function.walk() if isinstance(op, scf.ExecuteRegionOp))
    assert region_flow(op) is None and runs_at_most_once(op)
    analysis = ActivityAnalysis(function, ["active", "const"], ["active"])
    assert op in analysis.unknown and analysis.is_active(op.results[0])


def test_ops_of_the_once_region_rule_take_only_control_operands() -> None:
    """`OnceRegionRule` rebuilds the op from its control values alone: an
    op given that rule must have no operand that flows into a region."""
    from adpasses.reverse.rules.scf import OnceRegionRule

    once = [cls for cls, rule in rule_table().items() if isinstance(rule, OnceRegionRule)]
    assert {scf.IndexSwitchOp, scf.ExecuteRegionOp, memref.AllocaScopeOp} <= set(once)
    for cls in once:
        _, op = _sample(cls)
        flow = REGION_FLOWS[cls]
        assert flow.runs is not Runs.REPEATEDLY, cls.name
        assert list(op.operands) == flow.control_values(op), cls.name
