"""Kernel: per-example gradients of a logistic loss with shared parameters
(issue 17), batch B = 1000, d = 100 features:

    loss(x, w, y) = log(1 + exp(-y <x, w>)),   g_k = d loss(X[k], w, Y[k]) / dw

Rows (gradient and primal per example): ours, adpasses.vmap(adpasses.grad(
loss, 1), in_axes=(0, None, 0)) (one compiled loop over the batch around
the gradient); a Python loop of adpasses.grad calls (what vmap replaces);
jax.jit(jax.vmap(jax.grad(loss, 1), in_axes=(0, None, 0))); a numba loop
over the hand-written gradient g_k = -y s(-y z) x with s the logistic
function.
"""

from __future__ import annotations

import math

import numpy as np

import adpasses
from benchmarks import ours, peers
from benchmarks.harness import Contender, Row, first_call, log, measure

KEY = "per_example"
TITLE = "17. per-example gradients of a logistic loss (vmap of grad), B=1000, d=100"

B, D = 1000, 100


def loss(x, w, y):
    z = 0.0
    for i in range(len(x)):
        z += x[i] * w[i]
    return math.log(1.0 + math.exp(-y * z))


def loss_xp(np_):  # type: ignore[no-untyped-def]
    def f(x, w, y):  # type: ignore[no-untyped-def]
        return np_.log(1.0 + np_.exp(-y * np_.dot(x, w)))
    return f


def numba_versions():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit
    def batch_loss(X, w, Y, out):  # type: ignore[no-untyped-def]
        for k in range(X.shape[0]):
            z = 0.0
            for i in range(X.shape[1]):
                z += X[k, i] * w[i]
            out[k] = math.log(1.0 + math.exp(-Y[k] * z))

    @numba.njit
    def batch_grad(X, w, Y, G):  # type: ignore[no-untyped-def]
        for k in range(X.shape[0]):
            z = 0.0
            for i in range(X.shape[1]):
                z += X[k, i] * w[i]
            e = math.exp(-Y[k] * z)
            c = -Y[k] * e / (1.0 + e)
            for i in range(X.shape[1]):
                G[k, i] = c * X[k, i]

    return batch_loss, batch_grad


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    rows: list[Row] = []
    rng = np.random.default_rng(17)
    X = rng.normal(size=(B, D))
    w = 0.1 * rng.normal(size=D)
    Y = np.where(rng.uniform(size=B) < 0.5, -1.0, 1.0)
    z = X @ w
    ref = (-Y * np.exp(-Y * z) / (1.0 + np.exp(-Y * z)))[:, None] * X
    jf = adpasses.jit(ours.fresh_copy(loss))
    vg = adpasses.vmap(adpasses.grad(jf, 1), in_axes=(0, None, 0))
    vp = adpasses.vmap(jf, in_axes=(0, None, 0))
    t_first, _ = first_call(lambda: vg(X, w, Y))
    first_record = jf.compilations[-1]
    cs = [Contender("adpasses (vmap(grad))", lambda: vg(X, w, Y), lambda: vp(X, w, Y), per=B,
                    memory=False, extra={"idiom": "adpasses.vmap(adpasses.grad(loss, 1), "
                                                  "in_axes=(0, None, 0))(X, w, Y)"})]
    g1, p1 = adpasses.grad(jf, 1), jf
    cs.append(Contender("adpasses (Python loop of grad calls)",
                        lambda: np.stack([g1(X[k], w, Y[k]) for k in range(B)]),
                        lambda: [p1(X[k], w, Y[k]) for k in range(B)], per=B, memory=False,
                        extra={"idiom": "[adpasses.grad(loss, 1)(X[k], w, Y[k]) for k in range(B)]"}))
    nb = numba_versions()
    if nb is not None:
        G, L = np.empty_like(X), np.empty(B)

        def nb_grad() -> object:
            nb[1](X, w, Y, G)
            return G

        def nb_loss() -> object:
            nb[0](X, w, Y, L)
            return L
        cs.append(Contender("numba loop over hand gradient", nb_grad, nb_loss, per=B, compiles=True,
                            memory=False, extra={"idiom": "@njit loop, g_k = -y s(-y z) x"}))
    jax = peers.get("jax")
    if jax is not None:
        fj = loss_xp(jax.numpy)
        gj = jax.jit(jax.vmap(jax.grad(fj, 1), in_axes=(0, None, 0)))
        pj = jax.jit(jax.vmap(fj, in_axes=(0, None, 0)))
        Xj, wj, Yj = (jax.numpy.asarray(a) for a in (X, w, Y))
        cs.append(Contender("jax (jit(vmap(grad)))", lambda: jax.block_until_ready(gj(Xj, wj, Yj)),
                            lambda: jax.block_until_ready(pj(Xj, wj, Yj)), per=B, compiles=True,
                            memory=False, extra={"idiom": "jax.jit(jax.vmap(jax.grad(loss, 1), "
                                                          "in_axes=(0, None, 0)))"}))
    log(f"  {KEY}: {len(cs)} contenders")
    group = measure(TITLE, KEY, f"B={B}, d={D}", B, cs, ref)
    for row in group:
        if row.tool == "adpasses (vmap(grad))":
            row.compile_s = max(0.0, t_first - row.grad_s * B)
            row.extra["compile_stages_s"] = dict(first_record.stages)
    rows += group
    return rows
