"""Checkpointing (issue 18): a Sinkhorn-style iteration, an array read in
an inner loop and overwritten later in the same step.

    K_ij = exp(-C_ij / eps);  repeat `iters` times:
        u_i = a_i / sum_j K_ij v_j    (reads all of v for every i)
        v_j = b_j / sum_i K_ij u_i    (then overwrites v, and u before it)
    f(C) = sum_ij u_i K_ij v_j C_ij,   gradient with respect to C

Every v_j read in the u update is overwritten by the v update that
follows, so the reverse sweep needs each one as it was: without
checkpointing we tape v_j (and u_i) per (step, i, j), iters * n^2 values,
where JAX's `lax.scan` keeps O(n) per step (its residuals are the carried
vectors and the row sums; K is one n x n array). With
`grad(f, memory_limit=...)` the step loop is split into checkpointed
segments: per segment a snapshot of u and v (2n values), plus one
segment's tape (k steps of n^2), k = ceil(sqrt(iters * S / T)) (here 1:
one step's tape dwarfs the state). Peers: JAX (K precomputed, lax.scan
over steps, vectorised) with the temporary bytes XLA's compiled gradient
reserves (`memory_analysis()`), and a numba hand-written primal for scale.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks import ours, peers
from benchmarks.common import keep
from benchmarks.harness import OPTIONS, Contender, log, measure

KEY = "sinkhorn"
TITLE = "checkpointing: Sinkhorn-style iteration (array read in an inner loop, overwritten later)"


def sinkhorn(C, a, b, eps, iters):
    n = len(a)
    u = np.ones(n)
    v = np.ones(n)
    for k in range(iters):
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += math.exp(-C[i, j] / eps) * v[j]
            u[i] = a[i] / s
        for j in range(n):
            s = 0.0
            for i in range(n):
                s += math.exp(-C[i, j] / eps) * u[i]
            v[j] = b[j] / s
    total = 0.0
    for i in range(n):
        for j in range(n):
            total += u[i] * math.exp(-C[i, j] / eps) * v[j] * C[i, j]
    return total


def jax_version():  # type: ignore[no-untyped-def]
    jax = peers.get("jax")
    if jax is None:
        return None
    jnp = jax.numpy

    def f(C, a, b, eps, iters):  # type: ignore[no-untyped-def]
        K = jnp.exp(-C / eps)

        def step(carry, _):  # type: ignore[no-untyped-def]
            u, v = carry
            u = a / (K @ v)
            v = b / (K.T @ u)
            return (u, v), None

        (u, v), _ = jax.lax.scan(step, (jnp.ones_like(a), jnp.ones_like(b)), None, length=iters)
        return jnp.sum(u[:, None] * K * v[None, :] * C)
    return f


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    import adpasses

    n, iters = (24, 20) if OPTIONS.quick else (100, 100)
    eps = 0.5
    rng = np.random.default_rng(0)
    C = rng.uniform(0.0, 1.0, (n, n))
    a = np.full(n, 1.0 / n)
    b = np.full(n, 1.0 / n)
    args = [C, a, b, eps, iters]
    comp = ours.compile_ours(sinkhorn, args)
    ref = ours.reference(comp, args)[0]
    cs = ours.contenders(comp, args)
    plain = ours.taped_bytes(comp.jf, args)
    limit = (plain or 0) // 16
    # schedule="sqrt": segments of one step, whatever they hold (a step tapes
    # 1/20 of the whole, so no schedule fits 1/16 with two steps' tapes; the
    # automatic choice would stop with a MemoryError naming the least)
    jf_ck = adpasses.jit(ours.fresh_copy(sinkhorn), tape_limit=limit, schedule="sqrt")
    g_ck = adpasses.grad(jf_ck)
    report = adpasses.cache_report(jf_ck, *args)
    ck_tool = "adpasses, memory_limit (checkpointed)"
    cs.append(Contender(ck_tool, lambda: g_ck(*args), lambda: jf_ck(*args), traced=True,
                        note=f"memory_limit={limit} bytes (1/16 of the plain tape)",
                        extra={"path": "adpasses.grad(f, memory_limit=...)"}))
    jax = peers.get("jax")
    jax_temp = None
    if jax is not None:
        f = jax_version()
        Cj, aj, bj = (jax.numpy.asarray(x) for x in (C, a, b))
        g = jax.jit(jax.grad(f), static_argnums=(4,))
        p = jax.jit(f, static_argnums=(4,))
        try:
            analysis = g.lower(Cj, aj, bj, eps, iters).compile().memory_analysis()
            jax_temp = getattr(analysis, "temp_size_in_bytes", None)
        except Exception:  # noqa: BLE001  (not every backend reports it)
            jax_temp = None
        cs.append(Contender("jax (lax.scan, K precomputed)",
                            lambda: jax.block_until_ready(g(Cj, aj, bj, eps, iters)),
                            lambda: jax.block_until_ready(p(Cj, aj, bj, eps, iters)), compiles=True,
                            note="taped: XLA temp bytes of the compiled gradient"))
    cs = keep(*cs)
    size = f"n={n}, {iters} steps"
    log(f"  {KEY} {size}: {len(cs)} contenders")
    rows = measure(TITLE, KEY, size, n, cs, ref)
    ours.annotate(rows, comp, args)
    for r in rows:
        if r.tool == ck_tool:
            r.taped_bytes = report.peak_taped_bytes
            r.allocations, r.extra["allocated_bytes"] = ours.allocations(lambda: g_ck(*args))
            r.extra.update({"memory_limit": limit, "snapshot_bytes": report.taped_bytes,
                            "recompute_factor": report.recompute_factor})
        elif r.tool.startswith("jax") and jax_temp is not None:
            r.taped_bytes = jax_temp
    return rows
