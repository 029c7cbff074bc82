"""The alias analysis's answers through its Python API.

A wrong "not overwritten" makes gradients silently wrong (the reverse sweep
would reload a value that changed), so the cases that must clobber are
tested as carefully as those that must not.
"""

from __future__ import annotations

import pytest
from xdsl.dialects import func, memref

from adpasses.alias import AliasAnalysis, AliasKind
from adpasses.context import parse_module


def analyse(body: str, args: str = "%x: memref<?xf64>"):
    text = f"""
func.func @f({args}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
{body}
  func.return
}}
"""
    f = next(op for op in parse_module(text).ops if isinstance(op, func.FuncOp))
    aa = AliasAnalysis(f)
    loads = {op.res.name_hint: op for op in f.walk() if isinstance(op, memref.LoadOp)}
    return aa, loads, f


def clobbered(body: str, load: str, args: str = "%x: memref<?xf64>") -> bool:
    aa, loads, _ = analyse(body, args)
    return bool(aa.clobbers(loads[load]))


LOOP = "  scf.for %i = %c1 to %n step %c1 {{\n{}\n  }}"


def test_read_only_loop_is_not_clobbered():
    body = LOOP.format("""
    %i1 = arith.addi %i, %c1 : index
    %a = memref.load %x[%i1] : memref<?xf64>
    %b = memref.load %x[%i] : memref<?xf64>""")
    assert not clobbered(body, "a") and not clobbered(body, "b")


@pytest.mark.parametrize("rhs", ["arith.mulf %a, %a", "arith.addf %a, %z"])
def test_in_place_update_clobbers_its_load(rhs):
    body = LOOP.format(f"""
    %a = memref.load %x[%i] : memref<?xf64>
    %p = {rhs} : f64
    memref.store %p, %x[%i] : memref<?xf64>""")
    aa, loads, _ = analyse(body)
    found = aa.clobbers(loads["a"])
    assert len(found) == 1 and "the same element of %x" in found[0].reason


def test_store_ahead_does_not_clobber_earlier_load():
    # store x[i+1] at iteration j hits x[i] only when j = i - 1: before the load.
    body = LOOP.format("""
    %a = memref.load %x[%i] : memref<?xf64>
    %i1 = arith.addi %i, %c1 : index
    memref.store %a, %x[%i1] : memref<?xf64>""")
    assert not clobbered(body, "a")


def test_store_behind_clobbers_in_next_iteration():
    # store x[i-1] at iteration i+1 overwrites what iteration i loaded.
    body = LOOP.format("""
    %a = memref.load %x[%i] : memref<?xf64>
    %i1 = arith.subi %i, %c1 : index
    memref.store %a, %x[%i1] : memref<?xf64>""")
    aa, loads, _ = analyse(body)
    assert "later iteration" in aa.clobbers(loads["a"])[0].reason


def test_store_before_load_in_body_with_step_two():
    # store x[i] then load x[i+2]: the next iteration (i+2) stores x[i+2].
    body = "  scf.for %i = %c0 to %n step %c2 {\n" + """
    memref.store %z, %x[%i] : memref<?xf64>
    %i2 = arith.addi %i, %c2 : index
    %a = memref.load %x[%i2] : memref<?xf64>
  }"""
    assert clobbered(body, "a")
    # load x[i+1] is never hit by stores at even indices x[i], x[i+2], ...
    body_odd = body.replace("%i2 = arith.addi %i, %c2", "%i2 = arith.addi %i, %c1")
    assert not clobbered(body_odd, "a")


def test_later_store_at_zero_after_loop_clobbers():
    body = LOOP.format("    %a = memref.load %x[%i] : memref<?xf64>") + """
  memref.store %z, %x[%c0] : memref<?xf64>"""
    assert clobbered(body, "a")


def test_constant_indices():
    body = """
  %a = memref.load %x[%c2] : memref<?xf64>
  memref.store %a, %x[%c3] : memref<?xf64>
  %b = memref.load %x[%c3] : memref<?xf64>
  memref.store %b, %x[%c3] : memref<?xf64>"""
    assert not clobbered(body, "a")
    assert clobbered(body, "b")


def test_store_before_load_in_straight_line_code_does_not_clobber():
    body = """
  memref.store %z, %x[%c2] : memref<?xf64>
  %a = memref.load %x[%c2] : memref<?xf64>"""
    assert not clobbered(body, "a")


@pytest.mark.parametrize("attr,expected", [("", True), (" {ad.noalias}", False), (" {llvm.noalias}", False)])
def test_two_arguments_with_and_without_noalias(attr, expected):
    body = LOOP.format("""
    %a = memref.load %x[%i] : memref<?xf64>
    memref.store %a, %y[%i] : memref<?xf64>""")
    assert clobbered(body, "a", f"%x: memref<?xf64>{attr}, %y: memref<?xf64>") is expected


def test_allocations_do_not_alias_each_other_or_arguments():
    body = """
  %p = memref.alloc(%n) : memref<?xf64>
  %q = memref.alloc(%n) : memref<?xf64>
""" + LOOP.format("""
    %a = memref.load %p[%i] : memref<?xf64>
    memref.store %a, %q[%i] : memref<?xf64>
    memref.store %a, %x[%i] : memref<?xf64>""")
    aa, loads, f = analyse(body)
    assert not aa.clobbers(loads["a"])
    allocs = [op.memref for op in f.walk() if isinstance(op, memref.AllocOp)]
    assert aa.alias(allocs[0], allocs[1]).kind is AliasKind.NO_ALIAS
    assert aa.alias(allocs[0], f.body.block.args[0]).kind is AliasKind.NO_ALIAS


def test_subviews_disjoint_and_overlapping():
    args = "%x: memref<?xf64>, %buf: memref<8xf64>"
    views = """
  %lo = memref.subview %buf[0] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1]>>
  %hi = memref.subview %buf[4] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1], offset: 4>>
  %mid = memref.subview %buf[3] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1], offset: 3>>
  %a = memref.load %lo[%c2] : memref<4xf64, strided<[1]>>
"""
    assert not clobbered(views + "  memref.store %z, %hi[%c0] : memref<4xf64, strided<[1], offset: 4>>", "a", args)
    # mid[0] is buf[3]; lo[2] is buf[2]: different elements, but mid[c] with
    # an unknown index may hit it.
    assert not clobbered(views + "  memref.store %z, %mid[%c0] : memref<4xf64, strided<[1], offset: 3>>", "a", args)
    assert clobbered(views + "  memref.store %z, %mid[%n] : memref<4xf64, strided<[1], offset: 3>>", "a", args)
    aa, _, f = analyse(views, args)
    vals = {op.results[0].name_hint: op.results[0] for op in f.walk() if isinstance(op, memref.SubviewOp)}
    assert aa.alias(vals["lo"], vals["hi"]).kind is AliasKind.NO_ALIAS
    assert aa.alias(vals["lo"], vals["mid"]).kind is AliasKind.MAY_ALIAS


def test_strided_subview_composes_indices():
    # even[i] = x[2i], odd[i] = x[2i+1]: stores to odd never touch even.
    body = """
  %h = arith.divsi %n, %c2 : index
  %even = memref.subview %x[0] [%h] [2] : memref<?xf64> to memref<?xf64, strided<[2]>>
  %odd = memref.subview %x[1] [%h] [2] : memref<?xf64> to memref<?xf64, strided<[2], offset: 1>>
""" + "  scf.for %i = %c0 to %h step %c1 {\n" + """
    %a = memref.load %even[%i] : memref<?xf64, strided<[2]>>
    memref.store %a, %odd[%i] : memref<?xf64, strided<[2], offset: 1>>
  }"""
    assert not clobbered(body, "a")
    assert clobbered(body.replace("%odd[%i]", "%even[%i]").replace(
        "memref.store %a, %even[%i] : memref<?xf64, strided<[2], offset: 1>>",
        "memref.store %a, %even[%i] : memref<?xf64, strided<[2]>>"), "a")


def test_write_in_while_loop_is_conservative():
    body = """
  %r = scf.while (%k = %c0) : (index) -> index {
    %a = memref.load %x[%c2] : memref<?xf64>
    %go = arith.cmpi slt, %k, %n : index
    scf.condition(%go) %k : index
  } do {
  ^bb0(%k2: index):
    memref.store %z, %x[%c3] : memref<?xf64>
    %k3 = arith.addi %k2, %c1 : index
    scf.yield %k3 : index
  }"""
    # x[3] can never be x[2], but the analysis does not reason about while
    # iterations: it must say "clobbered".
    assert clobbered(body, "a")


def test_dealloc_and_calls_clobber_everything_they_touch():
    body = """
  %p = memref.alloc(%n) : memref<?xf64>
  %a = memref.load %p[%c0] : memref<?xf64>
  memref.dealloc %p : memref<?xf64>"""
    assert clobbered(body, "a")
