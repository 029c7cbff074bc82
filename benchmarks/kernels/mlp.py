"""Kernel 7: the loss of a 2-layer MLP written as loops, batch 64, widths 128.

    X: 64 x 128 (batch x input), targets y: 64, W1: 128 x 128, W2: 128
    h_b = tanh(X_b W1)  (hidden width 128),  o_b = h_b . W2
    L = (1/64) sum_b (o_b - y_b)^2,   gradient with respect to W1 and W2

Ours is the loops below (the natural order: for each sample, each hidden
unit, a dot product over the inputs), and `mlp_array`, the same loss
written with `@`, `np.tanh` and `np.sum` ("adpasses @" rows). Peers: a numba @njit hand gradient
(same loops, backpropagation by hand), and JAX / PyTorch / autograd
vectorised (tanh(X @ W1) @ W2). A scalar Python loop (1M multiply-adds
per call) is far beyond a minute on the tape-based peers and is not run.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks import ours, peers
from benchmarks.common import autograd_contender, jax_contender, keep, torch_contender
from benchmarks.harness import Contender, log, measure
from benchmarks.kernels import matmul_mlir

KEY = "mlp"
TITLE = "7. 2-layer MLP loss as loops (batch 64, 128 -> 128 tanh -> 1, squared loss)"


def mlp_loss(X, y, W1, W2):
    h = np.zeros(W1.shape[1])
    loss = 0.0
    for b in range(X.shape[0]):
        for j in range(W1.shape[1]):
            t = 0.0
            for i in range(X.shape[1]):
                t += X[b, i] * W1[i, j]
            h[j] = math.tanh(t)
        o = 0.0
        for j in range(W1.shape[1]):
            o += h[j] * W2[j]
        d = o - y[b]
        loss += d * d
    return loss / X.shape[0]


def mlp_array(X, y, W1, W2):
    """The same loss in the array language (issue 16): two matrix products."""
    d = np.tanh(X @ W1) @ W2 - y
    return np.sum(d * d) / X.shape[0]


def numba_versions():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit
    def primal(X, y, W1, W2):  # type: ignore[no-untyped-def]
        h = np.zeros(W1.shape[1])
        loss = 0.0
        for b in range(X.shape[0]):
            for j in range(W1.shape[1]):
                t = 0.0
                for i in range(X.shape[1]):
                    t += X[b, i] * W1[i, j]
                h[j] = math.tanh(t)
            o = 0.0
            for j in range(W1.shape[1]):
                o += h[j] * W2[j]
            d = o - y[b]
            loss += d * d
        return loss / X.shape[0]

    @numba.njit
    def grad(X, y, W1, W2):  # type: ignore[no-untyped-def]
        B, nin = X.shape
        H = W1.shape[1]
        gW1 = np.zeros_like(W1)
        gW2 = np.zeros_like(W2)
        h = np.empty(H)
        for b in range(B):
            for j in range(H):
                t = 0.0
                for i in range(nin):
                    t += X[b, i] * W1[i, j]
                h[j] = math.tanh(t)
            o = 0.0
            for j in range(H):
                o += h[j] * W2[j]
            go = 2.0 * (o - y[b]) / B
            for j in range(H):
                gW2[j] += go * h[j]
                gt = go * W2[j] * (1.0 - h[j] * h[j])
                for i in range(nin):
                    gW1[i, j] += gt * X[b, i]
        return gW1, gW2

    return primal, grad


def vectorised(tanh):  # type: ignore[no-untyped-def]
    def f(X, y, W1, W2):  # type: ignore[no-untyped-def]
        d = tanh(X @ W1) @ W2 - y
        return (d * d).sum() / X.shape[0]
    return f


def array_contenders(f, args, argnums, idiom):  # type: ignore[no-untyped-def]
    """adpasses on the array-language version (`@`: matrix products
    differentiated as products, BLAS both ways), API and raw paths."""
    comp = ours.compile_ours(f, args, argnums)
    cs = ours.contenders(comp, args)
    for c in cs:
        c.tool = c.tool.replace("adpasses", "adpasses @", 1)
        c.extra = {**c.extra, "idiom": idiom}
    return cs


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(7)
    B, nin, H = 64, 128, 128
    X = rng.standard_normal((B, nin))
    y = rng.standard_normal(B)
    W1 = rng.standard_normal((nin, H)) / math.sqrt(nin)
    W2 = rng.standard_normal(H) / math.sqrt(H)
    args = [X, y, W1, W2]
    comp = ours.compile_ours(mlp_loss, args, (2, 3))
    ref = ours.reference(comp, args)
    cs = ours.contenders(comp, args)
    cs.append(matmul_mlir.mlp_contender(X, y, W1, W2))
    cs += array_contenders(mlp_array, args, (2, 3), "tanh(X @ W1) @ W2, np.sum")
    nb = numba_versions()
    if nb is not None:
        cs.append(Contender("numba hand gradient", lambda: nb[1](*args), lambda: nb[0](*args),
                            traced=True, compiles=True, extra={"idiom": "@njit loops, hand backprop"}))
    jax, torch, ag = peers.get("jax"), peers.get("torch"), peers.get("autograd")
    cs += keep(
        jax_contender("jax (vectorised)", vectorised(jax.numpy.tanh), args, (2, 3)) if jax else None,
        torch_contender("torch (vectorised)", vectorised(torch.tanh), args, (2, 3)) if torch else None,
    )
    if ag is not None:
        import autograd.numpy as anp

        cs += keep(autograd_contender("autograd (vectorised)", vectorised(anp.tanh), args, (2, 3)))
    size = "batch 64, 128-128-1"
    log(f"  {KEY} {size}: {len(cs)} contenders")
    rows = measure(TITLE, KEY, size, B, cs, ref)
    ours.annotate(rows, comp, args, (2, 3))
    return rows
