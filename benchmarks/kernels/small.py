"""Kernel 3: a small function of a 3-vector and a 2-vector with constant
coefficients, whose gradient is needed a million times.

    a = 0.5 v0 v1 - 1.25 v2 w0
    b = sin(v0 + 2 w1) + 3 v1^2
    f(v, w) = a b + exp(0.1 v2) w1

Per-gradient cost, (i) one gradient per Python call: adpasses.grad, the
raw compiled gradient, jax.jit(jax.grad(f)), PyTorch, autograd, a numba
@njit hand gradient; (ii) N = 10^6 gradients in one call: our compiled
batch loop (a jitted Python loop calling the jitted f on the rows of
(N,3) and (N,2) arrays, differentiated with adpasses.autodiff and
Duplicated arrays, so row k of the shadows receives the gradient of
f(V[k], W[k])), jax.jit(jax.vmap(jax.grad(f))), PyTorch on columns
(vectorised), a numba loop over the hand-written gradient.
"""

from __future__ import annotations

import math

import numpy as np

import adpasses
from benchmarks import ours, peers
from benchmarks.harness import OPTIONS, Contender, Row, first_call, log, measure

KEY = "small"
TITLE = "3. small function of a 3-vector and a 2-vector, a million gradients"


def small3(v, w):
    a = 0.5 * v[0] * v[1] - 1.25 * v[2] * w[0]
    b = math.sin(v[0] + 2.0 * w[1]) + 3.0 * v[1] * v[1]
    return a * b + math.exp(0.1 * v[2]) * w[1]


def batch(V, W):
    s = 0.0
    for k in range(V.shape[0]):
        s += small3(V[k], W[k])
    return s


def small3_xp(sin, exp):  # type: ignore[no-untyped-def]
    def f(v, w):  # type: ignore[no-untyped-def]
        a = 0.5 * v[0] * v[1] - 1.25 * v[2] * w[0]
        b = sin(v[0] + 2.0 * w[1]) + 3.0 * v[1] * v[1]
        return a * b + exp(0.1 * v[2]) * w[1]
    return f


def columns_xp(sin, exp):  # type: ignore[no-untyped-def]
    """Vectorised over rows (PyTorch idiom): the sum over rows of f."""
    def f(V, W):  # type: ignore[no-untyped-def]
        a = 0.5 * V[:, 0] * V[:, 1] - 1.25 * V[:, 2] * W[:, 0]
        b = sin(V[:, 0] + 2.0 * W[:, 1]) + 3.0 * V[:, 1] * V[:, 1]
        return (a * b + exp(0.1 * V[:, 2]) * W[:, 1]).sum()
    return f


def numba_versions():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit
    def f(v, w):  # type: ignore[no-untyped-def]
        a = 0.5 * v[0] * v[1] - 1.25 * v[2] * w[0]
        b = math.sin(v[0] + 2.0 * w[1]) + 3.0 * v[1] * v[1]
        return a * b + math.exp(0.1 * v[2]) * w[1]

    @numba.njit
    def grad_into(v, w, gv, gw):  # type: ignore[no-untyped-def]
        a = 0.5 * v[0] * v[1] - 1.25 * v[2] * w[0]
        s = v[0] + 2.0 * w[1]
        c = math.cos(s)
        b = math.sin(s) + 3.0 * v[1] * v[1]
        e = math.exp(0.1 * v[2])
        gv[0] = 0.5 * v[1] * b + a * c
        gv[1] = 0.5 * v[0] * b + 6.0 * a * v[1]
        gv[2] = -1.25 * w[0] * b + 0.1 * e * w[1]
        gw[0] = -1.25 * v[2] * b
        gw[1] = 2.0 * a * c + e

    @numba.njit
    def grad(v, w):  # type: ignore[no-untyped-def]
        gv = np.empty(3)
        gw = np.empty(2)
        grad_into(v, w, gv, gw)
        return gv, gw

    @numba.njit
    def batch_primal(V, W):  # type: ignore[no-untyped-def]
        s = 0.0
        for k in range(V.shape[0]):
            s += f(V[k], W[k])
        return s

    @numba.njit
    def batch_grad(V, W, GV, GW):  # type: ignore[no-untyped-def]
        for k in range(V.shape[0]):
            grad_into(V[k], W[k], GV[k], GW[k])

    return f, grad, batch_primal, batch_grad


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    rows: list[Row] = []
    rng = np.random.default_rng(3)
    N = 10**5 if OPTIONS.quick else 10**6
    V = rng.uniform(-1.0, 1.0, (N, 3))
    W = rng.uniform(-1.0, 1.0, (N, 2))
    v, w = V[0].copy(), W[0].copy()
    nb = numba_versions()
    jax, torch, ag = peers.get("jax"), peers.get("torch"), peers.get("autograd")

    # (i) one gradient per call
    comp = ours.compile_ours(small3, [v, w], (0, 1))
    ref = ours.reference(comp, [v, w])
    cs = ours.contenders(comp, [v, w])
    if nb is not None and not OPTIONS.quick:
        cs.append(Contender("numba hand gradient", lambda: nb[1](v, w), lambda: nb[0](v, w),
                            compiles=True, memory=False))
    if jax is not None:
        fj = small3_xp(jax.numpy.sin, jax.numpy.exp)
        gj, pj = jax.jit(jax.grad(fj, (0, 1))), jax.jit(fj)
        vj, wj = jax.numpy.asarray(v), jax.numpy.asarray(w)
        cs.append(Contender("jax (jit(grad), per call)", lambda: jax.block_until_ready(gj(vj, wj)),
                            lambda: jax.block_until_ready(pj(vj, wj)), compiles=True, memory=False))
    if torch is not None:
        ft = small3_xp(torch.sin, torch.exp)
        vt = torch.from_numpy(v.copy()).requires_grad_(True)
        wt = torch.from_numpy(w.copy()).requires_grad_(True)

        def torch_primal() -> object:
            with torch.no_grad():
                return ft(vt, wt)
        cs.append(Contender("torch (per call)", lambda: torch.autograd.grad(ft(vt, wt), (vt, wt)),
                            torch_primal, memory=False))
    if ag is not None:
        import autograd.numpy as anp

        fa = small3_xp(anp.sin, anp.exp)
        ga = ag.grad(fa, (0, 1))
        cs.append(Contender("autograd (per call)", lambda: ga(v, w), lambda: fa(v, w), memory=False))
    for c in cs:
        c.memory = False
    log(f"  {KEY} per call: {len(cs)} contenders")
    group = measure(TITLE, KEY, "one per call", None, cs, ref)
    ours.annotate(group, comp, [v, w], (0, 1))
    rows += group

    # (ii) N gradients in one call
    jb = adpasses.jit(ours.fresh_copy(batch))
    t_first_primal, _ = first_call(lambda: jb(V, W))
    dV, dW = np.zeros_like(V), np.zeros_like(W)
    Dup = adpasses.Duplicated
    adpasses.native.runtime.reset_stats()
    t_first_grad, _ = first_call(
        lambda: adpasses.autodiff(jb, Dup(V, dV), Dup(W, dW)))
    first_alloc = adpasses.native.runtime.stats()
    bref = [dV.copy(), dW.copy()]
    sv, sw = np.zeros_like(V), np.zeros_like(W)

    def ours_batch() -> object:
        adpasses.autodiff(jb, Dup(V, sv), Dup(W, sw))
        return sv, sw
    cs = [Contender("adpasses (compiled batch loop)", ours_batch, lambda: jb(V, W), per=N,
                    traced=True, extra={"idiom": "jit loop over rows calling jit f; autodiff with "
                                        "Duplicated (N,3), (N,2)"})]
    if nb is not None:
        GV, GW = np.empty_like(V), np.empty_like(W)

        def nb_batch() -> object:
            nb[3](V, W, GV, GW)
            return GV, GW
        cs.append(Contender("numba loop over hand gradient", nb_batch, lambda: nb[2](V, W), per=N,
                            compiles=True, traced=True))
    if jax is not None:
        fj = small3_xp(jax.numpy.sin, jax.numpy.exp)
        gvm = jax.jit(jax.vmap(jax.grad(fj, (0, 1))))
        pvm = jax.jit(jax.vmap(fj))
        Vj, Wj = jax.numpy.asarray(V), jax.numpy.asarray(W)
        cs.append(Contender("jax (jit(vmap(grad)))", lambda: jax.block_until_ready(gvm(Vj, Wj)),
                            lambda: jax.block_until_ready(pvm(Vj, Wj)), per=N, compiles=True))
    if torch is not None:
        fc = columns_xp(torch.sin, torch.exp)
        Vt = torch.from_numpy(V.copy()).requires_grad_(True)
        Wt = torch.from_numpy(W.copy()).requires_grad_(True)

        def torch_cols_primal() -> object:
            with torch.no_grad():
                return fc(Vt, Wt)
        cs.append(Contender("torch (vectorised over rows)",
                            lambda: torch.autograd.grad(fc(Vt, Wt), (Vt, Wt)), torch_cols_primal,
                            per=N))
    if ag is not None and not OPTIONS.quick:
        import autograd.numpy as anp

        fa = columns_xp(anp.sin, anp.exp)
        ga = ag.grad(fa, (0, 1))
        cs.append(Contender("autograd (vectorised over rows)", lambda: ga(V, W), lambda: fa(V, W),
                            per=N, traced=True))
    size = f"batch N=10^{round(math.log10(N))}"
    log(f"  {KEY} {size}: {len(cs)} contenders")
    group = measure(TITLE, KEY, size, N, cs, bref)
    for row in group:
        if row.tool == "adpasses (compiled batch loop)":
            row.compile_s = t_first_primal + t_first_grad - (row.primal_s + row.grad_s) * N
            row.taped_bytes = ours.taped_bytes(jb, [V, W], (0, 1))
            row.allocations, row.extra["allocated_bytes"] = ours.allocations(ours_batch)
            row.extra["first_call_allocations"] = first_alloc["allocations"]
            row.extra["first_call_alloc_bytes"] = first_alloc["bytes"]
            # the batch's row 0 is the per-call gradient
            row.extra["row0_matches_per_call"] = bool(np.allclose(bref[0][0], ref[0], rtol=1e-12)
                                                      and np.allclose(bref[1][0], ref[1], rtol=1e-12))
    rows += group
    return rows
