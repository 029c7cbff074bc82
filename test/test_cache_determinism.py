"""The cache plan and its reasons do not depend on the order in which sets
of IR values iterate (they hash by identity, so that order changes from run
to run: `--print-cache-report` listed the items of a `cost model: ...`
reason in either order)."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.parser import Parser

from adpasses.analysis.activity import ActivityAnalysis
from adpasses.cache.mincut import FlowGraph
from adpasses.cache.planner import MinCutPlanner
from adpasses.cache.cost_model import CostModel
from adpasses.core.context import make_context
from adpasses.transforms.build_gradients import collect_needs

TEXT = """
func.func @g(%x: memref<?xf64>, %w: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %buf = memref.alloc() : memref<4xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %m = arith.remsi %i, %c4 : index
    memref.store %a, %buf[%m] : memref<4xf64>
    %e = memref.load %buf[%m] : memref<4xf64>
    %s = arith.addf %acc, %e : f64
    %s2 = arith.mulf %s, %w : f64
    scf.yield %s2 : f64
  }
  memref.dealloc %buf : memref<4xf64>
  func.return %r : f64
}
"""


def _reasons(monkeypatch: pytest.MonkeyPatch, reverse_input: bool) -> list[tuple[str, str, str]]:
    function = next(op for op in Parser(make_context(), TEXT).parse_module().walk()
                    if isinstance(op, func.FuncOp))
    activity = ActivityAnalysis(function, ["dup", "active"], ["active"], enabled=False)
    needed = collect_needs(function, activity)
    if reverse_input:
        cut = MinCutPlanner._cut

        def reversed_cut(self, block, values, plan):  # type: ignore[no-untyped-def]
            return cut(self, block, list(reversed(plan.order.sorted(values))), plan)

        monkeypatch.setattr(MinCutPlanner, "_cut", reversed_cut)
    plan = MinCutPlanner(function, CostModel()).plan(needed)
    return sorted((v.name_hint or "?", d.kind, d.reason) for v, d in plan.decisions.items())


def test_plan_does_not_depend_on_the_order_of_its_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    forward = _reasons(monkeypatch, False)
    assert any(name == "s" and kind == "tape" and "tape %acc" in reason and "tape %e" in reason
               for name, kind, reason in forward), forward  # the reason lists both
    assert _reasons(monkeypatch, True) == forward


class _Node:
    """A node whose hash puts it in a set in the reverse of its creation order."""

    def __init__(self, k: int):
        self.k = k

    def __hash__(self) -> int:
        return -self.k

    def __repr__(self) -> str:
        return f"n{self.k}"


def test_cut_edges_come_in_the_order_they_were_added() -> None:
    graph = FlowGraph()
    s, t = ("S",), ("T",)
    nodes = [_Node(k) for k in range(6)]
    for node in nodes:
        graph.add_edge(s, node, 5.0)
        graph.add_edge(node, t, 1.0)
    cut = graph.min_cut(s, t)
    assert set(nodes) <= cut.source_side
    assert list(cut.edges) == [(node, t) for node in nodes]
