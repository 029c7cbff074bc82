"""The MLP (K7) and dense-layer losses written with `linalg.matmul` in MLIR,
compiled by adpasses (ad-lower-matmul: BLAS in the primal; the gradient
differentiates the checked loop nest, docs/lowering.md "Matrix products"),
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
                     note="MLIR input: linalg.matmul (BLAS in the primal), gradient through its loops")
