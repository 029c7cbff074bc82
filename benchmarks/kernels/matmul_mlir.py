"""The MLP (K7) and dense-layer losses written with `linalg.matmul` in MLIR,
compiled by adpasses (ad-lower-matmul: BLAS in the primal; with noalias
arguments the gradient's products are products too, BLAS both ways,
docs/lowering.md "Matrix products"),
as contenders beside the loop versions of benchmarks/kernels/mlp.py.
"""

from __future__ import annotations

import numpy as np

from benchmarks.harness import Contender

M = "memref<?x?xf64>"

MLP = f"""
func.func @mlp(%x: {M} {{ad.noalias}}, %y: {M} {{ad.noalias}}, %w1: {M} {{ad.noalias}},
               %w2: {M} {{ad.noalias}}) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %b = memref.dim %x, %c0 : {M}
  %h = memref.dim %w1, %c1 : {M}
  %hid = memref.alloc(%b, %h) : {M}
  scf.for %i = %c0 to %b step %c1 {{
    scf.for %j = %c0 to %h step %c1 {{
      memref.store %zero, %hid[%i, %j] : {M}
    }}
  }}
  linalg.matmul ins(%x, %w1 : {M}, {M}) outs(%hid : {M})
  scf.for %i = %c0 to %b step %c1 {{
    scf.for %j = %c0 to %h step %c1 {{
      %t = memref.load %hid[%i, %j] : {M}
      %th = math.tanh %t : f64
      memref.store %th, %hid[%i, %j] : {M}
    }}
  }}
  %o = memref.alloc(%b, %c1) : {M}
  scf.for %i = %c0 to %b step %c1 {{
    memref.store %zero, %o[%i, %c0] : {M}
  }}
  linalg.matmul ins(%hid, %w2 : {M}, {M}) outs(%o : {M})
  %s = scf.for %i = %c0 to %b step %c1 iter_args(%acc = %zero) -> f64 {{
    %oi = memref.load %o[%i, %c0] : {M}
    %yi = memref.load %y[%i, %c0] : {M}
    %d = arith.subf %oi, %yi : f64
    %sq = arith.mulf %d, %d : f64
    %a = arith.addf %acc, %sq : f64
    scf.yield %a : f64
  }}
  memref.dealloc %hid : {M}
  memref.dealloc %o : {M}
  %bf = arith.index_cast %b : index to i64
  %bd = arith.sitofp %bf : i64 to f64
  %l = arith.divf %s, %bd : f64
  return %l : f64
}}"""


def mlp_contender(X: np.ndarray, y: np.ndarray, W1: np.ndarray, W2: np.ndarray) -> Contender:
    """loss(X, y, W1, W2) and its gradient in (W1, W2), from MLIR."""
    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import differentiate

    module = parse_module(MLP, "mlp.mlir")
    grad = differentiate(module, "mlp", ["const", "const", "dup", "dup"], ["active"])
    compiled = compile_module(module)
    primal, gradient = compiled["mlp"], compiled[grad.name]
    y2, w2 = y.reshape(-1, 1), W2.reshape(-1, 1)
    g1, g2 = np.zeros_like(W1), np.zeros_like(w2)

    def run_grad():  # type: ignore[no-untyped-def]
        g1.fill(0.0)
        g2.fill(0.0)
        gradient(X, y2, W1, g1, w2, g2, 1.0)
        return g1, g2.reshape(-1)

    return Contender("adpasses linalg.matmul (MLIR)", run_grad, lambda: primal(X, y2, W1, w2),
                     note="MLIR input: linalg.matmul (BLAS in the primal and, as products, in the gradient)")


S = "memref<?x?xf64, strided<[?, ?], offset: ?>>"
X3 = "memref<?x?x?xf64>"

DENSE = f"""
func.func private @layer(%w: {M}, %b: {M}, %x: {X3}, %t: index, %y: {M}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %m = memref.dim %w, %c0 : {M}
  %k = memref.dim %w, %c1 : {M}
  %n = memref.dim %x, %c2 : {X3}
  scf.for %r = %c0 to %m step %c1 {{
    %br = memref.load %b[%r, %c0] : {M}
    scf.for %c = %c0 to %n step %c1 {{
      memref.store %br, %y[%r, %c] : {M}
    }}
  }}
  %xt = memref.subview %x[%t, 0, 0] [1, %k, %n] [1, 1, 1] : {X3} to {S}
  linalg.matmul ins(%w, %xt : {M}, {S}) outs(%y : {M})
  scf.for %r = %c0 to %m step %c1 {{
    scf.for %c = %c0 to %n step %c1 {{
      %v = memref.load %y[%r, %c] : {M}
      %th = math.tanh %v : f64
      memref.store %th, %y[%r, %c] : {M}
    }}
  }}
  return
}}

func.func @dense(%w: {M} {{ad.noalias}}, %b: {M} {{ad.noalias}}, %x: {X3} {{ad.noalias}}) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f64
  %m = memref.dim %w, %c0 : {M}
  %n = memref.dim %x, %c2 : {X3}
  %steps = memref.dim %x, %c0 : {X3}
  %y0 = memref.alloc(%m, %n) : {M}
  %y = memref.alloc(%m, %n) : {M}
  func.call @layer(%w, %b, %x, %c0, %y0) : ({M}, {M}, {X3}, index, {M}) -> ()
  %s = scf.for %t = %c0 to %steps step %c1 iter_args(%acc = %zero) -> f64 {{
    func.call @layer(%w, %b, %x, %t, %y) : ({M}, {M}, {X3}, index, {M}) -> ()
    %st = scf.for %r = %c0 to %m step %c1 iter_args(%a1 = %acc) -> f64 {{
      %sr = scf.for %c = %c0 to %n step %c1 iter_args(%a2 = %a1) -> f64 {{
        %v = memref.load %y[%r, %c] : {M}
        %v0 = memref.load %y0[%r, %c] : {M}
        %p = arith.mulf %v, %v0 : f64
        %q = arith.addf %a2, %p : f64
        scf.yield %q : f64
      }}
      scf.yield %sr : f64
    }}
    scf.yield %st : f64
  }}
  memref.dealloc %y0 : {M}
  memref.dealloc %y : {M}
  return %s : f64
}}"""


def dense_contender(W: np.ndarray, b: np.ndarray, X: np.ndarray) -> Contender:
    """dense(W, b, X) and its gradient in (W, b), from MLIR."""
    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import differentiate

    module = parse_module(DENSE, "dense.mlir")
    grad = differentiate(module, "dense", ["dup", "dup", "const"], ["active"])
    compiled = compile_module(module)
    primal, gradient = compiled["dense"], compiled[grad.name]
    b2 = b.reshape(-1, 1)
    gw, gb = np.zeros_like(W), np.zeros_like(b2)

    def run_grad():  # type: ignore[no-untyped-def]
        gw.fill(0.0)
        gb.fill(0.0)
        gradient(W, gw, b2, gb, X, 1.0)
        return gw, gb.reshape(-1)

    return Contender("adpasses linalg.matmul (MLIR)", run_grad, lambda: primal(W, b2, X),
                     note="MLIR input: linalg.matmul per step (BLAS in the primal and, as products, in the gradient)")
