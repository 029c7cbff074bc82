"""Kernel 4: a dense layer over 256 time steps (ENZYME_MEASURED.md's "dense
layer 32x64 over 256 steps, batch 128").

    W: 32 x 64, b: 32, inputs X_t: 64 x 128 (t = 0..255; X is 256 x 64 x 128,
    one column per batch element)
    Y_t = tanh(W X_t + b 1^T)                       (32 x 128)
    L = sum_t sum_c <Y_t[:, c], Y_0[:, c]>          (column-wise dot products
                                                     with the first step's output)

Gradient of L with respect to W and b. Our version is written as loops
(a `layer` helper computing one step into a reused 32 x 128 buffer `y`,
the first step's output kept in `y0`); the inner loops run over the batch
(contiguous) so that they can vectorise. `dense_array` is the same loss in
the array language (`W @ X[t]` per step; "adpasses @" rows). The peers: a numba @njit hand
gradient (forward storing the 256 outputs, 8 MB, then backward), JAX /
PyTorch / autograd vectorised over all steps (einsum / batched matmul),
and the per-step loop idiom (PyTorch: a Python loop over steps; JAX:
lax.scan). A scalar Python loop (67M multiply-adds) is far beyond a minute
on the tape-based peers and is not run.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks import ours, peers
from benchmarks.harness import OPTIONS, Contender, log, measure
from benchmarks.kernels import matmul_mlir

KEY = "dense"
TITLE = "4. dense layer tanh(W x_t + b), W 32x64, 256 steps, batch 128; L = sum_t <Y_t, Y_0>"


def layer(W, b, X, t, y):
    for r in range(W.shape[0]):
        for c in range(X.shape[2]):
            y[r, c] = b[r]
        for j in range(W.shape[1]):
            w = W[r, j]
            for c in range(X.shape[2]):
                y[r, c] += w * X[t, j, c]
        for c in range(X.shape[2]):
            y[r, c] = math.tanh(y[r, c])


def dense(W, b, X):
    m = W.shape[0]
    B = X.shape[2]
    y0 = np.zeros((m, B))
    y = np.zeros((m, B))
    layer(W, b, X, 0, y0)
    s = 0.0
    for t in range(X.shape[0]):
        layer(W, b, X, t, y)
        for r in range(m):
            for c in range(B):
                s += y[r, c] * y0[r, c]
    return s


def dense_array(W, b, X):
    """The same loss in the array language (issue 16): one matrix product
    per step, `W @ X[t]` (X[t] a view), broadcasting and np.sum."""
    y0 = np.tanh(W @ X[0] + b[:, None])
    s = 0.0
    for t in range(X.shape[0]):
        y = np.tanh(W @ X[t] + b[:, None])
        s += np.sum(y * y0)
    return s


def numba_versions():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit
    def step(W, b, X, t, y):  # type: ignore[no-untyped-def]
        m, k = W.shape
        B = X.shape[2]
        for r in range(m):
            for c in range(B):
                y[r, c] = b[r]
            for j in range(k):
                w = W[r, j]
                for c in range(B):
                    y[r, c] += w * X[t, j, c]
            for c in range(B):
                y[r, c] = math.tanh(y[r, c])

    @numba.njit
    def primal(W, b, X):  # type: ignore[no-untyped-def]
        m = W.shape[0]
        B = X.shape[2]
        y0 = np.zeros((m, B))
        y = np.zeros((m, B))
        step(W, b, X, 0, y0)
        s = 0.0
        for t in range(X.shape[0]):
            step(W, b, X, t, y)
            for r in range(m):
                for c in range(B):
                    s += y[r, c] * y0[r, c]
        return s

    @numba.njit
    def grad(W, b, X):  # type: ignore[no-untyped-def]
        T = X.shape[0]
        m, k = W.shape
        B = X.shape[2]
        Y = np.empty((T, m, B))            # every step's output (8 MB at T = 256)
        for t in range(T):
            step(W, b, X, t, Y[t])
        gy0 = Y[0].copy()                  # dL/dY_0 = Y_0 (t = 0 term) + sum_t Y_t
        for t in range(T):
            for r in range(m):
                for c in range(B):
                    gy0[r, c] += Y[t, r, c]
        gW = np.zeros((m, k))
        gb = np.zeros(m)
        dz = np.empty(B)
        for t in range(T):
            for r in range(m):
                acc = 0.0
                for c in range(B):
                    g = gy0[r, c] if t == 0 else Y[0, r, c]
                    dz[c] = g * (1.0 - Y[t, r, c] * Y[t, r, c])
                    acc += dz[c]
                gb[r] += acc
                for j in range(k):
                    a = 0.0
                    for c in range(B):
                        a += dz[c] * X[t, j, c]
                    gW[r, j] += a
        return gW, gb

    return primal, grad


def vectorised(tanh, einsum):  # type: ignore[no-untyped-def]
    def f(W, b, X):  # type: ignore[no-untyped-def]
        Y = tanh(einsum("rj,tjc->trc", W, X) + b[None, :, None])
        return (Y * Y[0][None, :, :]).sum()
    return f


def per_step(tanh):  # type: ignore[no-untyped-def]
    """A Python loop over steps, a matmul per step (PyTorch idiom)."""
    def f(W, b, X):  # type: ignore[no-untyped-def]
        y0 = tanh(W @ X[0] + b[:, None])
        s = 0.0
        for t in range(X.shape[0]):
            y = tanh(W @ X[t] + b[:, None])
            s = s + (y * y0).sum()
        return s
    return f


def jax_scan():  # type: ignore[no-untyped-def]
    jax = peers.get("jax")
    if jax is None:
        return None
    jnp = jax.numpy

    def f(W, b, X):  # type: ignore[no-untyped-def]
        y0 = jnp.tanh(W @ X[0] + b[:, None])

        def body(s, xt):  # type: ignore[no-untyped-def]
            y = jnp.tanh(W @ xt + b[:, None])
            return s + (y * y0).sum(), None
        s, _ = jax.lax.scan(body, 0.0, X)
        return s
    return f


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    from benchmarks.common import autograd_contender, jax_contender, keep, torch_contender

    rng = np.random.default_rng(4)
    T = 16 if OPTIONS.quick else 256
    W = rng.standard_normal((32, 64)) * 0.1
    b = rng.standard_normal(32) * 0.1
    X = rng.standard_normal((T, 64, 128))
    args = [W, b, X]
    comp = ours.compile_ours(dense, args, (0, 1))
    ref = ours.reference(comp, args)
    cs = ours.contenders(comp, args)
    cs.append(matmul_mlir.dense_contender(W, b, X))
    from benchmarks.kernels.mlp import array_contenders

    cs += array_contenders(dense_array, args, (0, 1), "tanh(W @ X[t] + b[:, None]) per step, np.sum")
    nb = None if OPTIONS.quick else numba_versions()  # --quick: numba's compile is 3 s here
    if nb is not None:
        cs.append(Contender("numba hand gradient", lambda: nb[1](W, b, X), lambda: nb[0](W, b, X),
                            traced=True, compiles=True, extra={"idiom": "@njit loops, 8 MB of outputs stored"}))
    jax, torch, ag = peers.get("jax"), peers.get("torch"), peers.get("autograd")
    cs += keep(
        jax_contender("jax (vectorised)", vectorised(jax.numpy.tanh, jax.numpy.einsum), args, (0, 1))
        if jax else None,
        jax_contender("jax (lax.scan over steps)", jax_scan(), args, (0, 1))
        if jax else None,
        torch_contender("torch (vectorised)", vectorised(torch.tanh, torch.einsum), args, (0, 1))
        if torch else None,
        torch_contender("torch (Python loop over steps)", per_step(torch.tanh), args, (0, 1))
        if torch and not OPTIONS.quick else None,
    )
    if ag is not None and not OPTIONS.quick:
        import autograd.numpy as anp

        cs += keep(autograd_contender("autograd (vectorised)", vectorised(anp.tanh, anp.einsum),
                                      args, (0, 1)))
    size = f"T={T}"
    log(f"  {KEY} {size}: {len(cs)} contenders")
    rows = measure(TITLE, KEY, size, T, cs, ref)
    ours.annotate(rows, comp, args, (0, 1))
    return rows
