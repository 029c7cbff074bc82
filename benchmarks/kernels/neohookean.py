"""Kernel: the Hessian of the 3x3 compressible neo-Hookean strain energy,
a small function whose gradient AND Hessian are needed millions of times
(issue 15).

    F = x.reshape(3, 3),  J = det F,  I1 = sum F_ij^2
    W(F) = mu/2 (I1 - 3) - mu ln J + lambda/2 (ln J)^2

written as scalar Python over a length-9 array. The hand-written Hessian
(below, plain Python that numba compiles) uses dJ/dF = cof F and
d cof_ij / dF_kl = eps_ikn eps_jlq F_nq:

    dW/dF = mu F + a cof F,                 a = (lambda ln J - mu) / J
    H_ij,kl = mu d_ik d_jl + b cof_ij cof_kl + a eps_ikn eps_jlq F_nq,
                                            b = (lambda + mu - lambda ln J) / J^2

(test/test_bench_neohookean.py checks it against finite differences of the
hand gradient and of W). Rows, (i) one Hessian per Python call: ours
(adpasses.hessian), jax.jit(jax.hessian(W)), the numba hand Hessian;
(ii) a batch of N = 10^6 Hessians in one call: ours (adpasses.vmap(
adpasses.hessian(W)), a jitted loop calling adpasses.hessian(W) inside
compiled code, and the hvp of the batch energy), jax.jit(jax.vmap(
jax.hessian(W))), a numba loop over the hand Hessian.
"""

from __future__ import annotations

import math

import numpy as np

import adpasses
from benchmarks import ours, peers
from benchmarks.harness import Contender, Row, first_call, log, measure

KEY = "neohookean"
TITLE = "15. Hessian of the 3x3 neo-Hookean strain energy (9 inputs)"

MU = 1.0
LAM = 10.0
BATCH = 10**6


def strain_energy(x):
    """W of the deformation gradient F = x.reshape(3, 3) (row-major)."""
    mu = 1.0
    lam = 10.0
    f00 = x[0]
    f01 = x[1]
    f02 = x[2]
    f10 = x[3]
    f11 = x[4]
    f12 = x[5]
    f20 = x[6]
    f21 = x[7]
    f22 = x[8]
    J = f00 * (f11 * f22 - f12 * f21) - f01 * (f10 * f22 - f12 * f20) + f02 * (f10 * f21 - f11 * f20)
    i1 = (f00 * f00 + f01 * f01 + f02 * f02 + f10 * f10 + f11 * f11 + f12 * f12
          + f20 * f20 + f21 * f21 + f22 * f22)
    lnj = math.log(J)
    return 0.5 * mu * (i1 - 3.0) - mu * lnj + 0.5 * lam * lnj * lnj


def strain_energy_xp(log):  # type: ignore[no-untyped-def]
    """The same W with the peer's log (JAX traces it)."""
    def W(x):  # type: ignore[no-untyped-def]
        f00, f01, f02, f10, f11, f12, f20, f21, f22 = (x[k] for k in range(9))
        J = f00 * (f11 * f22 - f12 * f21) - f01 * (f10 * f22 - f12 * f20) + f02 * (f10 * f21 - f11 * f20)
        i1 = (f00 * f00 + f01 * f01 + f02 * f02 + f10 * f10 + f11 * f11 + f12 * f12
              + f20 * f20 + f21 * f21 + f22 * f22)
        lnj = log(J)
        return 0.5 * MU * (i1 - 3.0) - MU * lnj + 0.5 * LAM * lnj * lnj
    return W


def batch_energy(X):
    """The sum of W over the rows of X (N x 9): its Hessian is block diagonal."""
    s = 0.0
    for k in range(X.shape[0]):
        s += strain_energy(X[k])
    return s


def cofactor_into(x, c):  # type: ignore[no-untyped-def]
    """c = cof F (c_ij = dJ/dF_ij), F = x.reshape(3, 3); returns J."""
    c[0] = x[4] * x[8] - x[5] * x[7]
    c[1] = x[5] * x[6] - x[3] * x[8]
    c[2] = x[3] * x[7] - x[4] * x[6]
    c[3] = x[2] * x[7] - x[1] * x[8]
    c[4] = x[0] * x[8] - x[2] * x[6]
    c[5] = x[1] * x[6] - x[0] * x[7]
    c[6] = x[1] * x[5] - x[2] * x[4]
    c[7] = x[2] * x[3] - x[0] * x[5]
    c[8] = x[0] * x[4] - x[1] * x[3]
    return x[0] * c[0] + x[1] * c[1] + x[2] * c[2]


def gradient_by_hand(x, g):  # type: ignore[no-untyped-def]
    """g = dW/dF = mu F + a cof F."""
    c = np.empty(9)
    J = cofactor_into(x, c)
    a = (LAM * math.log(J) - MU) / J
    for k in range(9):
        g[k] = MU * x[k] + a * c[k]


def hessian_by_hand(x, H):  # type: ignore[no-untyped-def]
    """H (9x9) = d^2 W / dF dF, from the formula in the module docstring.
    Plain Python that numba compiles (the benchmark's hand Hessian)."""
    c = np.empty(9)
    J = cofactor_into(x, c)
    lnj = math.log(J)
    a = (LAM * lnj - MU) / J
    b = (LAM + MU - LAM * lnj) / (J * J)
    for i in range(3):
        for j in range(3):
            for k in range(3):
                for m in range(3):
                    h = b * c[3 * i + j] * c[3 * k + m]
                    if i == k and j == m:
                        h += MU
                    if i != k and j != m:
                        # eps_ikn eps_jmq F_nq, n and q the indices left over
                        n = 3 - i - k
                        q = 3 - j - m
                        s1 = 1.0 if (k - i) % 3 == 1 else -1.0
                        s2 = 1.0 if (m - j) % 3 == 1 else -1.0
                        h += a * s1 * s2 * x[3 * n + q]
                    H[3 * i + j, 3 * k + m] = h


def hessians_in_a_loop(X, HS):
    """HS[k] = the Hessian of W at X[k]: adpasses.hessian called inside a
    jitted loop (frontend/derivative_calls.py), no Python per Hessian."""
    for k in range(X.shape[0]):
        H = adpasses.hessian(strain_energy)(X[k])
        for i in range(9):
            for j in range(9):
                HS[k, i, j] = H[i, j]


def deformation_gradients(rng: np.random.Generator, n: int) -> np.ndarray:
    """n deformation gradients near the identity (det F > 0), rows of 9."""
    return (np.eye(3).reshape(1, 9) + 0.2 * rng.uniform(-1.0, 1.0, (n, 9)))


def numba_versions():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None
    cof = numba.njit(cofactor_into)
    # The hand Hessian calls cofactor_into by its global name: give numba
    # the compiled one through a copy of the function with that global bound.
    import types

    hglobals = dict(hessian_by_hand.__globals__, cofactor_into=cof)
    hess_into = numba.njit(types.FunctionType(hessian_by_hand.__code__, hglobals, "hessian_into"))
    energy = numba.njit(strain_energy)

    @numba.njit
    def hessian(x):  # type: ignore[no-untyped-def]
        H = np.empty((9, 9))
        hess_into(x, H)
        return H

    @numba.njit
    def batch_hessian(X, HS):  # type: ignore[no-untyped-def]
        for k in range(X.shape[0]):
            hess_into(X[k], HS[k])

    @numba.njit
    def batch_energy(X):  # type: ignore[no-untyped-def]
        s = 0.0
        for k in range(X.shape[0]):
            s += energy(X[k])
        return s

    return energy, hessian, batch_hessian, batch_energy


def ends(hessians: object) -> np.ndarray:
    """The first and last Hessians of a batch (what is checked)."""
    h = hessians if isinstance(hessians, list) else np.asarray(hessians)
    return np.stack([np.asarray(h[0]), np.asarray(h[-1])])


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    rows: list[Row] = []
    rng = np.random.default_rng(15)
    X = deformation_gradients(rng, BATCH)
    x = X[0].copy()
    nb = numba_versions()
    jax = peers.get("jax")
    # (i) one Hessian per call
    ref = np.empty((9, 9))
    hessian_by_hand(x, ref)
    jf = adpasses.jit(ours.fresh_copy(strain_energy))
    hess = adpasses.hessian(jf)
    # compile time of the first hessian call: fresh function, cold compile
    t_first, _ = first_call(lambda: hess(x))
    t_steady, _ = first_call(lambda: hess(x))
    first_record = jf.compilations[-1]
    cs = [Contender("adpasses (hessian)", lambda: hess(x), lambda: jf(x), memory=False,
                    extra={"idiom": "adpasses.hessian(W)(x): forward over reverse, width 9, one sweep"})]
    if nb is not None:
        cs.append(Contender("numba hand Hessian", lambda: nb[1](x), lambda: nb[0](x), compiles=True,
                            memory=False, extra={"idiom": "@njit hand-written 9x9 Hessian"}))
    if jax is not None:
        W = strain_energy_xp(jax.numpy.log)
        hj, pj = jax.jit(jax.hessian(W)), jax.jit(W)
        xj = jax.numpy.asarray(x)
        cs.append(Contender("jax (jit(hessian), per call)", lambda: jax.block_until_ready(hj(xj)),
                            lambda: jax.block_until_ready(pj(xj)), compiles=True, memory=False,
                            extra={"idiom": "jax.jit(jax.hessian(W))(x)"}))
    log(f"  {KEY} per call: {len(cs)} contenders")
    group = measure(TITLE, KEY, "one Hessian per call", None, cs, ref)
    for row in group:
        if row.tool == "adpasses (hessian)":
            row.compile_s = max(0.0, t_first - t_steady)
            row.extra["first_hessian_call_s"] = t_first
            row.extra["compile_stages_s"] = dict(first_record.stages)
            row.allocations, row.extra["allocated_bytes"] = ours.allocations(lambda: hess(x))
    rows += group

    # (ii) BATCH Hessians in one call
    # Checked on the first and last rows (the whole batch by hand would take minutes).
    bref = np.empty((2, 9, 9))
    hessian_by_hand(X[0], bref[0])
    hessian_by_hand(X[-1], bref[1])
    # vmap: one compiled loop over the batch around the Hessian's driver.
    jv = adpasses.jit(ours.fresh_copy(strain_energy))
    hv_ours, pv_ours = adpasses.vmap(adpasses.hessian(jv)), adpasses.vmap(jv)
    t_first_v, _ = first_call(lambda: hv_ours(X))
    cs = [Contender("adpasses (vmap(hessian))", lambda: hv_ours(X), lambda: pv_ours(X), per=BATCH,
                    extract=ends, memory=False,
                    extra={"idiom": "adpasses.vmap(adpasses.hessian(W))(X): one compiled loop over "
                                    "the batch around the Hessian (width 9)"})]
    jl = adpasses.jit(ours.fresh_copy(hessians_in_a_loop))
    HL = np.empty((BATCH, 9, 9))
    t_first_l, _ = first_call(lambda: jl(X[:1], HL[:1]))

    def in_a_loop() -> object:
        jl(X, HL)
        return HL
    cs.append(Contender("adpasses (hessian in a jitted loop)", in_a_loop, lambda: pv_ours(X), per=BATCH,
                        extract=ends, memory=False,
                        extra={"idiom": "@adpasses.jit loop over k: adpasses.hessian(W)(X[k]) inside "
                                        "compiled code (9 width-1 sweeps per Hessian)"}))
    # The batch's Hessian is block diagonal: 9 Hessian-vector products of
    # the batch energy along V_j (row k = e_j for every k) give every
    # block's column j at once (hvp with 9 vectors: one sweep of width 9).
    jb = adpasses.jit(ours.fresh_copy(batch_energy))
    hvb = adpasses.hvp(jb)
    V = np.zeros((9,) + X.shape)
    for j in range(9):
        V[j, :, j] = 1.0
    t_first_b, _ = first_call(lambda: hvb(X, V))

    def compressed() -> object:
        return hvb(X, V).transpose(1, 2, 0)  # H_k[i, j] = (H V_j)[k, i]
    cs.append(Contender("adpasses (hvp of the batch energy, 9 lanes)", compressed, lambda: jb(X),
                        per=BATCH, extract=ends,
                        extra={"idiom": "adpasses.hvp(batch_energy)(X, V), V[j, k] = e_j: the "
                                        "block-diagonal Hessian in one compiled sweep of width 9"}))
    if nb is not None:
        HS = np.empty((BATCH, 9, 9))

        def nb_batch() -> object:
            nb[2](X, HS)
            return HS
        cs.append(Contender("numba loop over hand Hessian", nb_batch, lambda: nb[3](X), per=BATCH,
                            compiles=True, extract=ends,
                            extra={"idiom": "@njit loop calling the hand Hessian"}))
    if jax is not None:
        W = strain_energy_xp(jax.numpy.log)
        hv = jax.jit(jax.vmap(jax.hessian(W)))
        pv = jax.jit(jax.vmap(W))
        Xj = jax.numpy.asarray(X)
        cs.append(Contender("jax (jit(vmap(hessian)))", lambda: jax.block_until_ready(hv(Xj)),
                            lambda: jax.block_until_ready(pv(Xj)), per=BATCH, compiles=True, extract=ends,
                            extra={"idiom": "jax.jit(jax.vmap(jax.hessian(W)))(X)"}))
    size = f"batch N=10^{round(math.log10(BATCH))}"
    log(f"  {KEY} {size}: {len(cs)} contenders")
    group = measure(TITLE, KEY, size, BATCH, cs, bref)
    for row in group:
        if row.tool == "adpasses (vmap(hessian))":
            row.compile_s = max(0.0, t_first_v - row.grad_s * BATCH)
        if row.tool == "adpasses (hessian in a jitted loop)":
            row.compile_s = t_first_l
        if row.tool.startswith("adpasses (hvp"):
            row.compile_s = max(0.0, t_first_b - row.grad_s * BATCH)
            row.taped_bytes = ours.taped_bytes(jb, [X])
    rows += group
    return rows
