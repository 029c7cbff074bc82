"""Whole functions differentiated by the reverse pass, checked against
central finite differences (test/gradcheck.py) for gradient and primal, on
random inputs, under every cache policy."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import check_gradient

POLICIES = ["tape-all", "minimal", "min-memory"]

DOT = """
func.func @dot(%x: memref<?xf64>, %y: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %b = memref.load %y[%i] : memref<?xf64>
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %p : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
"""

STRIDED_DIFF = """
func.func @sdiff(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %m = arith.subi %n, %c1 : index
  %r = scf.for %i = %c0 to %m step %c2 iter_args(%acc = %z) -> (f64) {
    %i1 = arith.addi %i, %c1 : index
    %a = memref.load %x[%i1] : memref<?xf64>
    %b = memref.load %x[%i] : memref<?xf64>
    %d = arith.subf %a, %b : f64
    %d2 = arith.mulf %d, %d : f64
    %s = arith.addf %acc, %d2 : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
"""

ENERGY = """
func.func @energy(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %m3 = arith.constant -3.0 : f64
  %q = arith.constant 0.25 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %rho = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %t = arith.addf %a, %one : f64
    %u = arith.mulf %m3, %t : f64
    %e = math.exp %u : f64
    %s = arith.addf %acc, %e : f64
    scf.yield %s : f64
  }
  %r2 = arith.mulf %rho, %rho : f64
  %r3 = arith.mulf %r2, %rho : f64
  %r4 = arith.mulf %r3, %rho : f64
  %r44 = arith.mulf %r4, %q : f64
  %s1 = arith.addf %r2, %r3 : f64
  %s2 = arith.addf %s1, %r44 : f64
  func.return %s2 : f64
}
"""

INPLACE_SQUARE = """
func.func @sq(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %p = arith.mulf %a, %a : f64
    memref.store %p, %x[%i] : memref<?xf64>
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %s = arith.addf %acc, %a : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
"""

NESTED_2D = """
func.func @quad(%A: memref<?x?xf64>, %v: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %A, %c0 : memref<?x?xf64>
  %m = memref.dim %A, %c1 : memref<?x?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %row = scf.for %j = %c0 to %m step %c1 iter_args(%s = %z) -> (f64) {
      %a = memref.load %A[%i, %j] : memref<?x?xf64>
      %b = memref.load %v[%j] : memref<?xf64>
      %p = arith.mulf %a, %b : f64
      %s2 = arith.addf %s, %p : f64
      scf.yield %s2 : f64
    }
    %t = math.tanh %row : f64
    %sq = arith.mulf %t, %t : f64
    %acc2 = arith.addf %acc, %sq : f64
    scf.yield %acc2 : f64
  }
  func.return %r : f64
}
"""

PRODUCT = """
func.func @prod(%x: memref<?xf64>, %w: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %one) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %aw = arith.mulf %a, %w : f64
    %p = arith.mulf %acc, %aw : f64
    scf.yield %p : f64
  }
  func.return %r : f64
}
"""

BRANCHY = """
func.func @branchy(%x: memref<?xf64>, %w: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %pos = arith.cmpf ogt, %a, %z : f64
    %v = scf.if %pos -> (f64) {
      %e = math.exp %a : f64
      %m = arith.mulf %e, %w : f64
      scf.yield %m : f64
    } else {
      %m = arith.mulf %a, %a : f64
      scf.yield %m : f64
    }
    %s = arith.addf %acc, %v : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
"""

NEWTON = """
func.func @newton(%a: f64) -> f64 {
  %half = arith.constant 0.5 : f64
  %tol = arith.constant 1.0e-12 : f64
  %r:2 = scf.while (%x = %a, %dx = %a) : (f64, f64) -> (f64, f64) {
    %ad = math.absf %dx : f64
    %c = arith.cmpf ogt, %ad, %tol : f64
    scf.condition(%c) %x, %dx : f64, f64
  } do {
  ^bb0(%x: f64, %d: f64):
    %q = arith.divf %a, %x : f64
    %s = arith.addf %x, %q : f64
    %xn = arith.mulf %half, %s : f64
    %dd = arith.subf %xn, %x : f64
    scf.yield %xn, %dd : f64, f64
  }
  func.return %r#0 : f64
}
"""

OUTPUT_ARRAY = """
func.func @act(%x: memref<?xf64>, %out: memref<?xf64>, %k: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %s = math.sin %a : f64
    %p = arith.mulf %s, %k : f64
    memref.store %p, %out[%i] : memref<?xf64>
  }
  func.return
}
"""

SUBVIEWS = """
func.func @views(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %h = arith.divsi %n, %c2 : index
  %m = arith.subi %n, %c1 : index
  %e = memref.subview %x[0] [%h] [2] : memref<?xf64> to memref<?xf64, strided<[2]>>
  %o = memref.subview %x[1] [%m] [1] : memref<?xf64> to memref<?xf64, strided<[1], offset: 1>>
  %r = scf.for %i = %c0 to %h step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %e[%i] : memref<?xf64, strided<[2]>>
    %b = memref.load %o[%i] : memref<?xf64, strided<[1], offset: 1>>
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %p : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
"""

SCRATCH = """
func.func @scratch(%x: memref<?xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  %t = memref.alloc() : memref<3xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    scf.for %j = %c0 to %c3 step %c1 {
      %jf0 = arith.index_cast %j : index to i64
      %jf = arith.sitofp %jf0 : i64 to f64
      %v = arith.mulf %a, %jf : f64
      %w = math.sin %v : f64
      memref.store %w, %t[%j] : memref<3xf64>
    }
    %s = scf.for %j = %c0 to %c3 step %c1 iter_args(%b = %acc) -> (f64) {
      %v = memref.load %t[%j] : memref<3xf64>
      %q = arith.mulf %v, %v : f64
      %s2 = arith.addf %b, %q : f64
      scf.yield %s2 : f64
    }
    scf.yield %s : f64
  }
  memref.dealloc %t : memref<3xf64>
  func.return %r : f64
}
"""

rng = np.random.default_rng(1234)


def vec(n: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return rng.uniform(lo, hi, n)


CASES = {
    "dot": (DOT, "dot", ["dup", "dup"], ["active"], lambda: [vec(7), vec(7)]),
    "dot_const_y": (DOT, "dot", ["dup", "const"], ["active"], lambda: [vec(7), vec(7)]),
    "strided_diff": (STRIDED_DIFF, "sdiff", ["dup"], ["active"], lambda: [vec(9)]),
    "energy": (ENERGY, "energy", ["dup"], ["active"], lambda: [vec(6, -0.5, 0.5)]),
    "inplace_square": (INPLACE_SQUARE, "sq", ["dup"], ["active"], lambda: [vec(6)]),
    "nested_2d": (NESTED_2D, "quad", ["dup", "dup"], ["active"],
                  lambda: [rng.uniform(-1, 1, (3, 4)), vec(4)]),
    "product": (PRODUCT, "prod", ["dup", "active"], ["active"], lambda: [vec(5, 0.5, 1.5), 1.3]),
    "branchy": (BRANCHY, "branchy", ["dup", "active"], ["active"], lambda: [vec(8), 0.7]),
    "newton": (NEWTON, "newton", ["active"], ["active"], lambda: [2.7]),
    "output_array": (OUTPUT_ARRAY, "act", ["dup", "dup", "active"], [],
                     lambda: [vec(5), np.zeros(5), 1.7]),
    "subviews": (SUBVIEWS, "views", ["dup"], ["active"], lambda: [vec(9)]),
    "scratch": (SCRATCH, "scratch", ["dup", "const"], ["active"], lambda: [vec(4), 4]),
}


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_matches_finite_differences(case, policy):
    text, name, acts, rets, make_args = CASES[case]
    check_gradient(text, name, acts, rets, make_args(), policy=policy)


def test_newton_primal_and_derivative_of_sqrt():
    """Hand derivation: the iteration converges to sqrt(a); d sqrt(a)/da = 1/(2 sqrt(a))."""
    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import differentiate

    m = parse_module(NEWTON)
    g = differentiate(m, "newton", ["active"], ["active"], with_primal=True)
    cm = compile_module(m)
    for a in (0.3, 2.0, 11.0):
        value, da = cm[g.name](a, 1.0)
        assert value == pytest.approx(np.sqrt(a), rel=1e-12)
        assert da == pytest.approx(0.5 / np.sqrt(a), rel=1e-9)
