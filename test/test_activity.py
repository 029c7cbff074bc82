"""Activity analysis: its answers, and what it saves in generated code."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func

from adpasses.analysis.activity import ActivityAnalysis
from adpasses.core.context import parse_module
from adpasses.transforms.reverse_pass import ReverseOptions, differentiate
from gradcheck import check_gradient

HISTOGRAM = """
func.func @f(%x: memref<?xf64>, %c: memref<?xf64>, %y: memref<?xf64>, %h: memref<?xi64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %k = memref.load %c[%i] : memref<?xf64>
    %u = memref.load %y[%i] : memref<?xf64>
    %ek = math.exp %k : f64
    %p = arith.mulf %a, %ek : f64
    %s = arith.addf %acc, %p : f64
    %j = arith.remsi %i, %c4 : index
    %old = memref.load %h[%j] : memref<?xi64>
    %one = arith.constant 1 : i64
    %new = arith.addi %old, %one : i64
    memref.store %new, %h[%j] : memref<?xi64>
    scf.yield %s : f64
  }
  func.return %r : f64
}
"""
ACTS = ["dup", "const", "dup", "const"]


def analyse(text: str, acts, rets=("active",)) -> tuple[ActivityAnalysis, dict]:
    f = next(op for op in parse_module(text).ops if isinstance(op, func.FuncOp))
    a = ActivityAnalysis(f, list(acts), list(rets))
    names = {}
    for op in f.walk():
        for r in op.results:
            if r.name_hint:
                names[r.name_hint] = r
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    if arg.name_hint:
                        names[arg.name_hint] = arg
    return a, names


def test_values_and_memory():
    a, v = analyse(HISTOGRAM, ACTS)
    assert a.is_active(v["a"]) and a.is_active(v["p"]) and a.is_active(v["acc"])
    assert not a.is_active(v["k"]) and not a.is_active(v["ek"])  # const table
    assert not a.is_active(v["u"])  # dup, but influences nothing
    assert not a.is_active(v["old"]) and not a.is_active(v["j"])  # integers never
    f_args = {arg.name_hint: arg for arg in a.function.body.block.args}
    assert a.is_active_memory(f_args["x"]) and not a.is_active_memory(f_args["c"])
    assert not a.is_active_memory(f_args["h"])


def test_loop_carried_value_starting_constant_becomes_active():
    text = """
func.func @f(%w: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %s = arith.addf %acc, %w : f64
    scf.yield %s : f64
  }
  %unused = arith.mulf %w, %w : f64
  func.return %r : f64
}"""
    a, v = analyse(text, ["active", "const"])
    assert a.is_active(v["acc"]) and a.is_active(v["r"])
    assert not a.is_active(v["z"])  # the constant itself does not vary
    assert not a.is_active(v["unused"])  # varied but useless


def test_const_result_makes_everything_inactive():
    a, v = analyse(HISTOGRAM, ACTS, rets=("const",))
    assert not a.is_active(v["p"]) and not a.is_active(v["a"])


def count_ops(function) -> int:  # type: ignore[no-untyped-def]
    return sum(1 for _ in function.walk())


def test_activity_analysis_shrinks_the_gradient():
    with_analysis = differentiate(parse_module(HISTOGRAM), "f", ACTS, ["active"])
    without = differentiate(parse_module(HISTOGRAM), "f", ACTS, ["active"],
                            options=ReverseOptions(activity=False))
    n_with, n_without = count_ops(with_analysis.function), count_ops(without.function)
    assert n_with < n_without
    text = str(with_analysis.function)
    assert "%dy" not in text.split("func.func")[1].split(")")[1]  # no adjoint code touches dy


@pytest.mark.parametrize("use_activity", [True, False])
def test_gradient_right_with_and_without_activity(use_activity):
    rng = np.random.default_rng(3)
    args = [rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6), np.zeros(4, np.int64)]
    check_gradient(HISTOGRAM, "f", ACTS, ["active"], args, use_activity=use_activity)
