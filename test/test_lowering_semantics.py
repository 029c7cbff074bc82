"""Semantics of the LLVM lowering, executed and compared with numpy/Python:
integer and float arith (NaN rules, C division, floor/ceil division),
casts and f16 rounding, memref views and descriptors, control flow, calls
with memref arguments and results, error propagation out of callees,
tapes and their allocations, and what the emitted IR promises."""

from __future__ import annotations

import math

import numpy as np
import pytest

import adpasses

from adpasses.native import runtime
from adpasses.core.context import parse_module
from adpasses.core.diagnostics import CompileError
from adpasses.native.llvm_jit import compile_module
from adpasses.lowering import emit_llvm_ir, translate_module

rng = np.random.default_rng(11)


def fn(text: str, name: str = "f", **options: object):  # type: ignore[no-untyped-def]
    return compile_module(text, **options)[name]  # type: ignore[arg-type]


# -- arith: integers ------------------------------------------------------------------

INT_BINARY = {
    "addi": lambda a, b: a + b,
    "subi": lambda a, b: a - b,
    "muli": lambda a, b: a * b,
    "divsi": lambda a, b: int(a / b),  # C division: toward zero
    "remsi": lambda a, b: a - b * int(a / b),
    "floordivsi": lambda a, b: a // b,
    "ceildivsi": lambda a, b: -(-a // b),
    "minsi": min,
    "maxsi": max,
    "andi": lambda a, b: a & b,
    "ori": lambda a, b: a | b,
    "xori": lambda a, b: a ^ b,
}


def test_signed_integer_ops():
    for name, want in INT_BINARY.items():
        f = fn(f"""func.func @f(%a: i64, %b: i64) -> i64 {{
  %r = arith.{name} %a, %b : i64
  func.return %r : i64
}}""")
        for a, b in [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 3), (0, 5), (123456789, -1000)]:
            assert f(a, b) == want(a, b), (name, a, b)


def test_unsigned_and_shift_ops():
    f = fn("""func.func @f(%a: i64, %b: i64) -> (i64, i64, i64, i64, i64, i64, i64) {
  %0 = arith.divui %a, %b : i64
  %1 = arith.remui %a, %b : i64
  %2 = arith.minui %a, %b : i64
  %3 = arith.maxui %a, %b : i64
  %c3 = arith.constant 3 : i64
  %4 = arith.shli %a, %c3 : i64
  %5 = arith.shrsi %a, %c3 : i64
  %6 = arith.shrui %a, %c3 : i64
  func.return %0, %1, %2, %3, %4, %5, %6 : i64, i64, i64, i64, i64, i64, i64
}""")
    mask = (1 << 64) - 1

    def signed(v: int) -> int:
        v &= mask
        return v - (1 << 64) if v >> 63 else v

    for a, b in [(100, 7), (-100, 7), (100, -7)]:
        ua, ub = a & mask, b & mask
        want = (ua // ub, ua % ub, min(ua, ub), max(ua, ub), a << 3, a >> 3, ua >> 3)
        assert f(a, b) == tuple(signed(w) for w in want)


def test_integer_division_by_zero_raises():
    f = fn("""func.func @f(%a: index, %b: index) -> index {
  %r = arith.floordivsi %a, %b : index
  func.return %r : index
}""")
    assert f(7, -2) == -4
    with pytest.raises(ZeroDivisionError, match=r"<compile_module>:2:\d+"):
        f(1, 0)


def test_narrow_integers_and_casts():
    f = fn("""func.func @f(%a: i32, %b: i16, %c: i8) -> (i64, i64, i32, i64, f64, f64, i64, i64) {
  %0 = arith.extsi %a : i32 to i64
  %1 = arith.extui %b : i16 to i64
  %2 = arith.trunci %0 : i64 to i32
  %3 = arith.index_cast %c : i8 to index
  %w3 = arith.index_cast %3 : index to i64
  %4 = arith.sitofp %a : i32 to f64
  %5 = arith.uitofp %b : i16 to f64
  %big = arith.constant 3.75e9 : f64
  %6 = arith.fptoui %big : f64 to i64
  %neg = arith.constant -2.9 : f64
  %7 = arith.fptosi %neg : f64 to i64
  func.return %0, %1, %2, %w3, %4, %5, %6, %7 : i64, i64, i32, i64, f64, f64, i64, i64
}""")
    assert f(-5, -1, -3) == (-5, 65535, -5, -3, -5.0, 65535.0, 3750000000, -2)


def test_bitcast_extf_truncf():
    f = fn("""func.func @f(%x: f64) -> (i64, f64, f32) {
  %i = arith.bitcast %x : f64 to i64
  %s = arith.truncf %x : f64 to f32
  %d = arith.extf %s : f32 to f64
  func.return %i, %d, %s : i64, f64, f32
}""")
    bits, back, single = f(1.1)
    assert bits == np.float64(1.1).view(np.int64)
    assert back == float(np.float32(1.1)) and single == float(np.float32(1.1))


def test_half_conversions_round_like_numpy():
    """f64 -> f16 -> f64 through the runtime's compiler-rt replacements
    (adpasses.lowering.half), on every midpoint between neighbouring halves
    (ties to even), subnormals, overflow, infinities and NaN."""
    f = fn("""func.func @f(%x: f64) -> f64 {
  %h = arith.truncf %x : f64 to f16
  %r = arith.extf %h : f16 to f64
  func.return %r : f64
}""")
    halves = np.arange(0, 0x7C00, 7, dtype=np.uint16).view(np.float16).astype(np.float64)
    values = np.concatenate([halves, (halves[:-1] + halves[1:]) / 2, -halves[::5],
                             [65519.0, 65520.0, 1e6, -np.inf, 2.0**-25, 3 * 2.0**-26, 1e-300]])
    with np.errstate(over="ignore"):  # numpy warns when 65520 and 1e6 overflow to inf
        want = values.astype(np.float16).astype(np.float64)
    for v, w in zip(values, want):
        assert f(float(v)) == w, v
    assert math.isnan(f(math.nan))


def test_math_on_f16_goes_through_f32():
    f = fn("""func.func @f(%x: f16) -> f16 {
  %t = math.tanh %x : f16
  %e = math.exp %t : f16
  func.return %e : f16
}""")
    assert f(0.5) == pytest.approx(math.exp(math.tanh(0.5)), rel=2e-3)


def test_i1_values_and_results():
    f = fn("""func.func @f(%p: i1, %a: index) -> (i1, index) {
  %t = arith.constant true
  %q = arith.xori %p, %t : i1
  %e = arith.extui %q : i1 to i64
  %i = arith.index_cast %e : i64 to index
  %r = arith.addi %i, %a : index
  func.return %q, %r : i1, index
}""")
    assert f(True, 10) == (False, 10)
    assert f(False, 10) == (True, 11)


# -- arith: floats -------------------------------------------------------------------------

CMPF = {
    "oeq": lambda a, b: a == b, "one": lambda a, b: a < b or a > b, "olt": lambda a, b: a < b,
    "ole": lambda a, b: a <= b, "ogt": lambda a, b: a > b, "oge": lambda a, b: a >= b,
    "ord": lambda a, b: not (math.isnan(a) or math.isnan(b)),
    "ueq": lambda a, b: not (a < b or a > b), "une": lambda a, b: a != b,
    "ult": lambda a, b: not a >= b, "ule": lambda a, b: not a > b,
    "ugt": lambda a, b: not a <= b, "uge": lambda a, b: not a < b,
    "uno": lambda a, b: math.isnan(a) or math.isnan(b),
    "false": lambda a, b: False, "true": lambda a, b: True,
}


def test_cmpf_predicates_with_nan():
    body = "\n".join(f"  %{p} = arith.cmpf {p}, %a, %b : f64" for p in CMPF)
    names = ", ".join(f"%{p}" for p in CMPF)
    f = fn(f"""func.func @f(%a: f64, %b: f64) -> ({", ".join(["i1"] * len(CMPF))}) {{
{body}
  func.return {names} : {", ".join(["i1"] * len(CMPF))}
}}""")
    values = [1.0, 2.0, math.nan]
    for a in values:
        for b in values:
            assert f(a, b) == tuple(want(a, b) for want in CMPF.values()), (a, b)


def test_float_arith_and_min_max_nan_semantics():
    f = fn("""func.func @f(%a: f64, %b: f64) -> (f64, f64, f64, f64, f64, f64) {
  %0 = arith.maximumf %a, %b : f64
  %1 = arith.minimumf %a, %b : f64
  %2 = arith.maxnumf %a, %b : f64
  %3 = arith.minnumf %a, %b : f64
  %4 = arith.remf %a, %b : f64
  %n = arith.negf %a : f64
  %d = arith.divf %n, %b : f64
  %m = arith.mulf %d, %b : f64
  %s = arith.subf %m, %a : f64
  func.return %0, %1, %2, %3, %4, %s : f64, f64, f64, f64, f64, f64
}""")
    a, b = -3.5, 2.0
    assert f(a, b) == (2.0, -3.5, 2.0, -3.5, math.fmod(a, b), -2 * a)
    got = f(math.nan, 1.0)
    assert math.isnan(got[0]) and math.isnan(got[1])  # maximumf/minimumf propagate NaN
    assert got[2] == 1.0 and got[3] == 1.0  # maxnumf/minnumf ignore it


def test_select_on_scalars_and_memrefs():
    f = fn("""func.func @f(%p: i1, %x: memref<?xf64>, %y: memref<?xf64>) -> f64 {
  %m = arith.select %p, %x, %y : memref<?xf64>
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<?xf64>
  func.return %v : f64
}""")
    assert f(True, np.array([1.0]), np.array([2.0])) == 1.0
    assert f(False, np.array([1.0]), np.array([2.0])) == 2.0


# -- memref ---------------------------------------------------------------------------------


def test_subviews_static_dynamic_and_rank_reducing():
    f = fn("""func.func @f(%A: memref<?x?xf64>, %i: index, %n: index) -> (f64, f64, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %row = memref.subview %A[%i, 0] [1, %n] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[1], offset: ?>>
  %col = memref.subview %A[1, %i] [%n, 1] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[?], offset: ?>>
  %blk = memref.subview %A[1, 1] [2, 2] [2, 2] : memref<?x?xf64> to memref<2x2xf64, strided<[?, 2], offset: ?>>
  %a = memref.load %row[%c1] : memref<?xf64, strided<[1], offset: ?>>
  %b = memref.load %col[%c1] : memref<?xf64, strided<[?], offset: ?>>
  %c = memref.load %blk[%c1, %c1] : memref<2x2xf64, strided<[?, 2], offset: ?>>
  func.return %a, %b, %c : f64, f64, f64
}""")
    A = rng.random((5, 6))
    assert f(A, 2, 3) == (A[2, 1], A[2, 2], A[3, 3])
    assert f(A, 4, 3) == (A[4, 1], A[2, 4], A[3, 3])
    # a view reaching past the array is reported, even where no load reads past it
    with pytest.raises(IndexError, match=r"index 5 is out of bounds for axis 0 with size 5 \(at <compile_module>:5:"):
        f(A, 2, 5)  # the column A[1:6, 2]


STRIDED2 = "memref<?x?xf64, strided<[?, ?], offset: ?>>"


def test_descriptor_ops_cast_reinterpret_metadata_dim_rank():
    f = fn(f"""func.func @f(%A: {STRIDED2}) -> (index, index, index, index, index, f64, f64) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %base, %off, %sz:2, %st:2 = memref.extract_strided_metadata %A : {STRIDED2} -> memref<f64>, index, index, index, index, index
  %flat = memref.reinterpret_cast %base to offset: [%off], sizes: [%sz#0, %sz#1], strides: [%st#0, %st#1] : memref<f64> to {STRIDED2}
  %v = memref.load %flat[%c1, %c0] : {STRIDED2}
  %s = "memref.cast"(%A) : ({STRIDED2}) -> memref<3x?xf64, strided<[?, ?], offset: ?>>
  %w = memref.load %s[%c0, %c1] : memref<3x?xf64, strided<[?, ?], offset: ?>>
  %r = "memref.rank"(%A) : ({STRIDED2}) -> index
  %d = memref.dim %A, %c1 : {STRIDED2}
  func.return %r, %d, %st#0, %st#1, %sz#0, %v, %w : index, index, index, index, index, f64, f64
}}""")
    A = rng.random((4, 6))[1:, ::2]  # 3 x 3, strides (6, 2) elements, offset from the base
    assert f(A) == (2, 3, 6, 2, 3, A[1, 0], A[0, 1])


def test_copy_alloc_alloca_dealloc_and_allocation_counts():
    f = fn("""func.func @f(%x: memref<?xf64>, %out: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %h = memref.alloc(%n) : memref<?xf64>
  "memref.copy"(%x, %h) : (memref<?xf64>, memref<?xf64>) -> ()
  scf.for %i = %c0 to %n step %c1 {
    %s = memref.alloca() : memref<1xf64>
    %d = memref.alloca(%c1) : memref<?xf64>
    %v = memref.load %h[%i] : memref<?xf64>
    %w = arith.addf %v, %v : f64
    memref.store %w, %s[%c0] : memref<1xf64>
    memref.store %w, %d[%c0] : memref<?xf64>
    %u = memref.load %s[%c0] : memref<1xf64>
    memref.store %u, %out[%i] : memref<?xf64>
  }
  memref.dealloc %h : memref<?xf64>
  func.return
}""")
    x, out = rng.random(1000), np.zeros(1000)
    runtime.reset_stats()
    f(x, out)
    assert runtime.stats()["allocations"] == 1 and runtime.stats()["bytes"] == 8000
    np.testing.assert_array_equal(out, 2 * x)


def test_copy_of_two_dimensional_strided_views():
    f = fn(f"""func.func @f(%x: {STRIDED2}, %y: {STRIDED2}) {{
  "memref.copy"(%x, %y) : ({STRIDED2}, {STRIDED2}) -> ()
  func.return
}}""")
    A = rng.random((4, 5))
    B = np.zeros((5, 4))
    f(A.T, B)
    np.testing.assert_array_equal(B, A.T)
    C = np.zeros((8, 10))
    f(A[::-1, ::-1], C[::2, ::2])
    np.testing.assert_array_equal(C[::2, ::2], A[::-1, ::-1])
    with pytest.raises(IndexError, match=r"index 4 is out of bounds for axis 1 with size 4 \(at <compile_module>:2:3\)"):
        f(A[:, :4], np.zeros((4, 5)))  # a larger destination would read past the source


def test_zero_rank_memrefs_and_integer_and_bool_arrays():
    f = fn("""func.func @f(%s: memref<f64>, %k: memref<?xi32>, %b: memref<?xi1>) -> f64 {
  %v = memref.load %s[] : memref<f64>
  %c1 = arith.constant 1 : index
  %i = memref.load %k[%c1] : memref<?xi32>
  %p = memref.load %b[%c1] : memref<?xi1>
  %fi = arith.sitofp %i : i32 to f64
  %r = arith.addf %v, %fi : f64
  %z = arith.constant 0.0 : f64
  %o = arith.select %p, %r, %z : f64
  %t = arith.constant true
  memref.store %t, %b[%c1] : memref<?xi1>
  func.return %o : f64
}""")
    flags = np.array([False, True, False])
    assert f(np.array(1.5), np.array([5, -7, 9], dtype=np.int32), flags) == -5.5
    flags[1] = False
    assert f(np.array(1.5), np.array([5, -7, 9], dtype=np.int32), flags) == 0.0
    assert flags.tolist() == [False, True, False]


# -- control flow ----------------------------------------------------------------------------


def test_index_switch_and_triangular_nested_loops():
    f = fn("""func.func @f(%k: index, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %w = scf.index_switch %k -> f64
  case 0 {
    scf.yield %one : f64
  }
  case 2 {
    %t = arith.constant 2.0 : f64
    scf.yield %t : f64
  }
  default {
    %t = arith.constant 10.0 : f64
    scf.yield %t : f64
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f64) {
    %q = scf.for %j = %i to %n step %c1 iter_args(%b = %a) -> (f64) {
      %s = arith.addf %b, %w : f64
      scf.yield %s : f64
    }
    scf.yield %q : f64
  }
  func.return %r : f64
}""")
    for k, w in ((0, 1.0), (2, 2.0), (5, 10.0)):
        assert f(k, 4) == w * 10  # 4 + 3 + 2 + 1 inner iterations


def test_for_with_negative_bounds_and_a_step_over_the_end():
    f = fn("""func.func @f(%lb: index, %ub: index, %step: index) -> index {
  %c0 = arith.constant 0 : index
  %r = scf.for %i = %lb to %ub step %step iter_args(%a = %c0) -> (index) {
    %s = arith.addi %a, %i : index
    scf.yield %s : index
  }
  func.return %r : index
}""")
    assert f(-5, 7, 3) == sum(range(-5, 7, 3))
    assert f(5, -7, 1) == 0


def test_multi_block_function_with_a_loop_and_memref_block_arguments():
    f = fn("""func.func @f(%n: index, %a: memref<?x?xf64>, %b: memref<?x?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  cf.br ^head(%c0, %z, %a : index, f64, memref<?x?xf64>)
^head(%i: index, %acc: f64, %m: memref<?x?xf64>):
  %go = arith.cmpi slt, %i, %n : index
  cf.cond_br %go, ^body, ^exit(%acc : f64)
^body:
  %v = memref.load %m[%c0, %i] : memref<?x?xf64>
  %s = arith.addf %acc, %v : f64
  %j = arith.addi %i, %c1 : index
  cf.br ^head(%j, %s, %b : index, f64, memref<?x?xf64>)
^exit(%r: f64):
  func.return %r : f64
}""")
    a, b = rng.random((2, 4)), rng.random((2, 4))
    assert f(4, a, b) == pytest.approx(a[0, 0] + b[0, 1:].sum())
    assert f(0, a, b) == 0.0


# -- calls ------------------------------------------------------------------------------------

CALLS = """
func.func private @stats(%x: memref<?xf64, strided<[?], offset: ?>>) -> (f64, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64, strided<[?], offset: ?>>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%s = %z, %q = %z) -> (f64, f64) {
    %v = memref.load %x[%i] : memref<?xf64, strided<[?], offset: ?>>
    %s2 = arith.addf %s, %v : f64
    %v2 = arith.mulf %v, %v : f64
    %q2 = arith.addf %q, %v2 : f64
    scf.yield %s2, %q2 : f64, f64
  }
  func.return %r#0, %r#1 : f64, f64
}
func.func private @tail(%x: memref<?xf64>, %k: index) -> (index, memref<?xf64, strided<[1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %m = arith.subi %n, %k : index
  %v = memref.subview %x[%k] [%m] [1] : memref<?xf64> to memref<?xf64, strided<[1], offset: ?>>
  func.return %m, %v : index, memref<?xf64, strided<[1], offset: ?>>
}
func.func @f(%x: memref<?xf64>, %k: index) -> (f64, f64, index) {
  %m, %t = func.call @tail(%x, %k) : (memref<?xf64>, index) -> (index, memref<?xf64, strided<[1], offset: ?>>)
  %c = "memref.cast"(%t) : (memref<?xf64, strided<[1], offset: ?>>) -> memref<?xf64, strided<[?], offset: ?>>
  %r:2 = func.call @stats(%c) : (memref<?xf64, strided<[?], offset: ?>>) -> (f64, f64)
  func.return %r#0, %r#1, %m : f64, f64, index
}
func.func @g(%x: memref<?xf64>, %i: index) -> f64 {
  %r = func.call @h(%x, %i) : (memref<?xf64>, index) -> f64
  %two = arith.constant 2.0 : f64
  %s = arith.mulf %r, %two : f64
  func.return %s : f64
}
func.func private @h(%x: memref<?xf64>, %i: index) -> f64 {
  %v = memref.load %x[%i] : memref<?xf64>
  func.return %v : f64
}
"""


def test_calls_with_memref_arguments_memref_results_and_several_results():
    m = compile_module(CALLS)
    x = rng.random(10)
    s, q, n = m["f"](x, 3)
    assert s == pytest.approx(x[3:].sum()) and q == pytest.approx((x[3:] ** 2).sum()) and n == 7


def test_out_of_bounds_in_a_callee_stops_the_caller():
    m = compile_module(CALLS)
    assert m["g"](np.arange(3.0), 2) == 4.0
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 0 with size 3 \(at <compile_module>:\d+:3\)"):
        m["g"](np.arange(3.0), 3)
    assert m["g"](np.arange(3.0), 1) == 2.0  # the error slot was cleared


MEMREF_RESULTS = """
func.func @same(%x: memref<?xf64>) -> memref<?xf64> {
  func.return %x : memref<?xf64>
}
func.func @tail(%x: memref<?xf64>) -> memref<?xf64, strided<[?], offset: ?>> {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %m = arith.subi %n, %c1 : index
  %v = memref.subview %x[%c1] [%m] [%c1] : memref<?xf64> to memref<?xf64, strided<[?], offset: ?>>
  func.return %v : memref<?xf64, strided<[?], offset: ?>>
}
func.func @twice(%n: index) -> (memref<?xf64>, memref<?xf64>, f64) {
  %a = memref.alloc(%n) : memref<?xf64>
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.5 : f64
  memref.store %one, %a[%c0] : memref<?xf64>
  func.return %a, %a, %one : memref<?xf64>, memref<?xf64>, f64
}
"""


@pytest.mark.parametrize("binding", ["shim", "ctypes"])
def test_public_memref_results_are_numpy_arrays(binding):
    """An argument comes back as itself, a view of one as a numpy view of
    it (read-only if the argument is), a buffer the function allocated as
    an array that owns it, the same buffer twice as one owner and a view."""
    m = compile_module(MEMREF_RESULTS, binding=binding)
    x = rng.random(6)
    assert m["same"](x) is x
    t = m["tail"](x)
    assert np.shares_memory(t, x) and np.array_equal(t, x[1:])
    t[0] = 7.0
    assert x[1] == 7.0
    frozen = x.copy()
    frozen.flags.writeable = False
    assert not m["tail"](frozen).flags.writeable
    before = runtime.handed_arrays()
    a, b, v = m["twice"](4)
    assert v == 1.5 and a[0] == 1.5 and np.shares_memory(a, b)
    after = runtime.handed_arrays()
    assert after["handed"] == before["handed"] + 1
    del a, b
    assert runtime.handed_arrays()["freed"] == after["freed"] + 1


# -- tapes ------------------------------------------------------------------------------------

TAPES = """
func.func @f(%x: memref<?xf64>, %cap: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %t = ad.tape.create %cap : !ad.tape<f64>
  %g = ad.tape.create : !ad.tape<index>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    ad.tape.push %v, %t : f64, !ad.tape<f64>
    ad.tape.push %i, %g : index, !ad.tape<index>
  }
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = ad.tape.pop %t : !ad.tape<f64> -> f64
    %k = ad.tape.pop %g : !ad.tape<index> -> index
    %ki = arith.index_cast %k : index to i64
    %kf = arith.sitofp %ki : i64 to f64
    %w = arith.mulf %v, %kf : f64
    %s = arith.addf %acc, %w : f64
    scf.yield %s : f64
  }
  ad.tape.free %t : !ad.tape<f64>
  ad.tape.free %g : !ad.tape<index>
  func.return %r : f64
}
"""


@pytest.mark.parametrize("n,growths", [(0, 0), (1, 1), (64, 1), (65, 2), (1000, 5)])
def test_tapes_are_lifo_and_count_their_allocations(n, growths):
    """The pops pair value k with index k only if both tapes are LIFO."""
    f = fn(TAPES, workspace=False)
    x = rng.random(n)
    runtime.reset_stats()
    assert f(x, n) == pytest.approx(float(x @ np.arange(n)))
    st = runtime.stats()
    # One allocation of exactly n doubles for the capacity tape (none for
    # n = 0) and `growths` doublings from 64 elements for the growable one.
    assert st["allocations"] == (n > 0) + growths
    assert st["bytes"] == 8 * n + sum(8 * 64 * 2**k for k in range(growths))


def test_growable_tape_keeps_its_buffer_across_calls_in_a_workspace():
    """With the workspace (the default) the growable tape's buffer goes back
    to its site's pool when the tape is freed: a call that pushes no more
    than an earlier one allocates only the capacity tape."""
    f = fn(TAPES.replace("@f(", "@ws("), "ws")
    for n, growths in ((1000, 5), (1000, 0), (64, 0), (2000, 1), (1000, 0)):
        x = rng.random(n)
        runtime.reset_stats()
        assert f(x, n) == pytest.approx(float(x @ np.arange(n)))
        assert runtime.stats()["allocations"] == 1 + growths, n


# -- what the IR promises ------------------------------------------------------------------------


def test_noalias_fastmath_and_private_linkage_in_the_ir():
    text = """
func.func private @helper(%a: f64) -> f64 {
  %r = arith.mulf %a, %a : f64
  func.return %r : f64
}
func.func @f(%x: memref<?xf64> {llvm.noalias}, %y: memref<?xf64> {ad.noalias}, %z: memref<?xf64>, %a: f64) -> f64 {
  %s = func.call @helper(%a) : (f64) -> f64
  %e = math.exp %s : f64
  func.return %e : f64
}"""
    module = parse_module(text)
    plain = str(translate_module(module))
    assert 'define internal double @"u.helper"' in plain
    assert 'ptr noalias %"x"' in plain and 'ptr noalias %"y"' in plain and 'ptr %"z"' in plain
    assert "fmul double" in plain and "fmul fast" not in plain
    fast = str(translate_module(module, fastmath=True))
    assert "fmul fast double" in fast and 'call fast double @"llvm.exp.f64"' in fast


def test_an_unsupported_type_is_a_compile_error_at_the_op():
    with pytest.raises(CompileError, match=r"2:\d+: error: 'arith.constant'.*vector<2xf64>"):
        emit_llvm_ir(parse_module("""func.func @f() {
  %v = arith.constant dense<1.0> : vector<2xf64>
  func.return
}"""))


NOT_OWNED_RESULTS = {
    "alloca": """
func.func @f(%n: index) -> memref<?xf64> {
  %a = memref.alloca(%n) : memref<?xf64>
  func.return %a : memref<?xf64>
}
""",
    "get_global": """
memref.global "private" constant @table : memref<3xf64> = dense<[1.0, 2.0, 3.0]>
func.func @f() -> memref<3xf64> {
  %g = memref.get_global @table : memref<3xf64>
  func.return %g : memref<3xf64>
}
""",
    "a view of an alloca chosen at run time": """
func.func @f(%x: memref<?xf64>, %c: i1) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %a = memref.alloca(%n) : memref<?xf64>
  %r = arith.select %c, %x, %a : memref<?xf64>
  func.return %r : memref<?xf64>
}
""",
}


@pytest.mark.parametrize("case", sorted(NOT_OWNED_RESULTS))
@pytest.mark.parametrize("binding", ["shim", "ctypes"])
def test_a_result_numpy_could_not_free_is_a_compile_error(case, binding):
    """numpy frees a returned buffer: a stack slot or a global must not be
    handed over (freeing it would crash the process)."""
    op = "get_global" if case == "get_global" else "alloca"
    with pytest.raises(adpasses.CompileError,
                       match=rf"result 0 of @f may be memory of 'memref.{op}'.*copy it into a memref.alloc"):
        compile_module(NOT_OWNED_RESULTS[case], binding=binding)
