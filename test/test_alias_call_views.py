"""Calls in the alias analysis (docs/alias.md, docs/parallel.md): a callee
that reaches its arguments' memory only through the views it is given
(`WriteEffects.stays_in_views`) reads and writes within those views, so
a loop passing row i of X to it is independent; a callee that rebuilds an
address (a reinterpret_cast, other than the flat view of all of an
identity-layout memref), or calls one that does, may touch all of X.
Each independent case has a dependent neighbour differing in one index
or one op (a test that only checked "independent" could pass with an
analysis that proves too much)."""

from __future__ import annotations

import pytest
from xdsl.dialects import func, scf

from adpasses.analysis.alias import AliasAnalysis
from adpasses.analysis.memory_writes import WriteEffects, flattens_own_elements
from adpasses.core.context import parse_module

ROW = "memref<?xf64, strided<[1], offset: ?>>"

CALLEES = f"""
func.func private @scale(%r: {ROW}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %r, %c0 : {ROW}
  scf.for %j = %c0 to %n step %c1 {{
    %v = memref.load %r[%j] : {ROW}
    %w = arith.mulf %v, %v : f64
    memref.store %w, %r[%j] : {ROW}
  }}
  func.return
}}
func.func private @first(%r: {ROW}) -> f64 {{
  %c0 = arith.constant 0 : index
  %v = memref.load %r[%c0] : {ROW}
  func.return %v : f64
}}
func.func private @rebuilt(%r: {ROW}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %all = memref.reinterpret_cast %r to offset: [0], sizes: [%c1], strides: [1] : {ROW} to memref<?xf64>
  memref.store %z, %all[%c0] : memref<?xf64>
  func.return
}}
func.func private @calls_rebuilt(%r: {ROW}) {{
  func.call @rebuilt(%r) : ({ROW}) -> ()
  func.return
}}
func.func private @flat(%m: memref<?x?xf64>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %a = memref.dim %m, %c0 : memref<?x?xf64>
  %b = memref.dim %m, %c1 : memref<?x?xf64>
  %ab = arith.muli %a, %b : index
  %all = memref.reinterpret_cast %m to offset: [0], sizes: [%ab], strides: [1] : memref<?x?xf64> to memref<?xf64>
  memref.store %z, %all[%c0] : memref<?xf64>
  func.return
}}
func.func private @flat_half(%m: memref<?x?xf64>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %a = memref.dim %m, %c0 : memref<?x?xf64>
  %ab = arith.muli %a, %a : index
  %all = memref.reinterpret_cast %m to offset: [0], sizes: [%ab], strides: [1] : memref<?x?xf64> to memref<?xf64>
  memref.store %z, %all[%c0] : memref<?xf64>
  func.return
}}
"""


def loop_over_rows(body: str) -> tuple[AliasAnalysis, scf.ForOp]:
    text = f"""
func.func @f(%X: memref<?x?xf64> {{ad.noalias}}, %Y: memref<?x?xf64> {{ad.noalias}}, %n: index, %m: index) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {{
    %ip = arith.addi %i, %c1 : index
    %row = memref.subview %X[%i, 0] [1, %m] [1, 1] : memref<?x?xf64> to {ROW}
    %next = memref.subview %X[%ip, 0] [1, %m] [1, 1] : memref<?x?xf64> to {ROW}
{body}
  }}
  func.return
}}
{CALLEES}"""
    module = parse_module(text, "t.mlir")
    function = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "f")
    loop = next(op for op in function.walk() if isinstance(op, scf.ForOp))
    return AliasAnalysis(function), loop


def test_a_callee_writing_the_row_it_is_given_keeps_the_rows_independent():
    aa, loop = loop_over_rows(f"    func.call @scale(%row) : ({ROW}) -> ()")
    assert aa.iteration_conflict(loop) is None
    # the neighbour: it also reads the next row, which the next iteration writes
    aa, loop = loop_over_rows(f"    func.call @scale(%row) : ({ROW}) -> ()\n"
                              f"    %v = func.call @first(%next) : ({ROW}) -> f64")
    conflict = aa.iteration_conflict(loop)
    assert conflict is not None and "scale" in conflict
    # scaling the next row while the row is read
    aa, loop = loop_over_rows(f"    func.call @scale(%next) : ({ROW}) -> ()\n"
                              f"    %v = func.call @first(%row) : ({ROW}) -> f64")
    assert aa.iteration_conflict(loop) is not None


def test_a_callee_rebuilding_an_address_may_write_all_of_the_object():
    for callee in ("rebuilt", "calls_rebuilt"):
        aa, loop = loop_over_rows(f"    func.call @{callee}(%row) : ({ROW}) -> ()")
        conflict = aa.iteration_conflict(loop)
        assert conflict is not None and "all of" in conflict, callee


@pytest.mark.parametrize("callee, in_views", [("scale", True), ("first", True), ("rebuilt", False),
                                              ("calls_rebuilt", False), ("flat", True),
                                              ("flat_half", False)])
def test_stays_in_views(callee, in_views):
    module = parse_module(f"func.func @f() {{\n  func.return\n}}\n{CALLEES}", "t.mlir")
    assert WriteEffects(module).stays_in_views(callee) is in_views
    casts = [op for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == callee
             for op in f.walk() if op.name == "memref.reinterpret_cast"]
    if callee in ("flat", "flat_half"):
        assert flattens_own_elements(casts[0]) is in_views
