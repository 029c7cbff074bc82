"""Kernel: small-vector code, a scratch `np.zeros(3)` per pair of atoms
(issue 18, "No scratch allocations").

    pair:  E = sum_{i<j} 1 / |x_i - x_j|^2, d = np.zeros(3) per pair
    eam:   EAM-style: rho_i = sum_{j != i, r < 2.5} exp(-2 r),
           E = sum 0.5 exp(-3 r) - sum_i sqrt(rho_i); rho = np.zeros(n) per
           call, d = np.zeros(3) per pair

`ad-scalar-replace` makes d three SSA values in the gradient (nothing of it
taped; the row "arrays kept" is the gradient without that step), and
`ad-promote-scratch` makes the arrays left stack slots or workspaces kept
across calls: `allocs/call` is the number of heap allocations our generated
code makes per gradient after the first call. Beside them: the same pair
energy written with scalars (dx, dy, dz), a numba hand gradient, and JAX
vectorised over all pairs (n x n).
"""

from __future__ import annotations

import dataclasses

import numpy as np

import adpasses
from benchmarks import ours, peers
from benchmarks.harness import OPTIONS, Contender, Row, log, measure

KEY = "smallvec"
TITLE = "small-vector code: np.zeros(3) per pair (pair energy, EAM-style)"


def pair_energy(x):
    n = x.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d = np.zeros(3)
            for k in range(3):
                d[k] = x[i, k] - x[j, k]
            r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
            e += 1.0 / r2
    return e


def pair_energy_scalar(x):
    n = x.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = x[i, 0] - x[j, 0]
            dy = x[i, 1] - x[j, 1]
            dz = x[i, 2] - x[j, 2]
            e += 1.0 / (dx * dx + dy * dy + dz * dz)
    return e


def eam_energy(x):
    n = x.shape[0]
    rho = np.zeros(n)
    e = 0.0
    for i in range(n):
        for j in range(n):
            if i != j:
                d = np.zeros(3)
                for k in range(3):
                    d[k] = x[i, k] - x[j, k]
                r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
                if r2 < 6.25:
                    r = np.sqrt(r2)
                    rho[i] += np.exp(-2.0 * r)
                    e += 0.5 * np.exp(-3.0 * r)
    for i in range(n):
        e -= np.sqrt(rho[i])
    return e


def positions(n: int, rng) -> np.ndarray:  # type: ignore[no-untyped-def]
    """A jittered cubic lattice of spacing 1.1: no two atoms closer than 0.5."""
    side = int(np.ceil(n ** (1 / 3)))
    grid = np.array([(i, j, k) for i in range(side) for j in range(side) for k in range(side)], float)
    return 1.1 * grid[:n] + 0.2 * rng.random((n, 3))


def numba_pair_grad():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit
    def primal(x):  # type: ignore[no-untyped-def]
        n = x.shape[0]
        e = 0.0
        for i in range(n):
            for j in range(i + 1, n):
                dx, dy, dz = x[i, 0] - x[j, 0], x[i, 1] - x[j, 1], x[i, 2] - x[j, 2]
                e += 1.0 / (dx * dx + dy * dy + dz * dz)
        return e

    @numba.njit
    def grad(x):  # type: ignore[no-untyped-def]
        n = x.shape[0]
        g = np.zeros((n, 3))
        for i in range(n):
            for j in range(i + 1, n):
                dx, dy, dz = x[i, 0] - x[j, 0], x[i, 1] - x[j, 1], x[i, 2] - x[j, 2]
                r2 = dx * dx + dy * dy + dz * dz
                c = -2.0 / (r2 * r2)
                g[i, 0] += c * dx
                g[i, 1] += c * dy
                g[i, 2] += c * dz
                g[j, 0] -= c * dx
                g[j, 1] -= c * dy
                g[j, 2] -= c * dz
        return g

    return primal, grad


def jax_versions(jax):  # type: ignore[no-untyped-def]
    jnp = jax.numpy

    def pair(x):  # type: ignore[no-untyped-def]
        d = x[:, None, :] - x[None, :, :]
        r2 = jnp.sum(d * d, axis=-1)
        n = x.shape[0]
        upper = jnp.triu(jnp.ones((n, n), bool), 1)
        return jnp.sum(jnp.where(upper, 1.0 / jnp.where(upper, r2, 1.0), 0.0))

    def eam(x):  # type: ignore[no-untyped-def]
        d = x[:, None, :] - x[None, :, :]
        r2 = jnp.sum(d * d, axis=-1)
        n = x.shape[0]
        inside = (~jnp.eye(n, dtype=bool)) & (r2 < 6.25)
        r = jnp.sqrt(jnp.where(inside, r2, 1.0))
        rho = jnp.sum(jnp.where(inside, jnp.exp(-2.0 * r), 0.0), axis=1)
        return jnp.sum(jnp.where(inside, 0.5 * jnp.exp(-3.0 * r), 0.0)) - jnp.sum(jnp.sqrt(rho))

    return pair, eam


def _scalar_rewrite_row(x: np.ndarray) -> tuple[Contender, ours.Compiled]:
    comp = ours.compile_ours(pair_energy_scalar, [x])
    return Contender("adpasses, scalar rewrite (dx, dy, dz)", lambda: comp.grad(x), lambda: comp.jf(x),
                     memory=False), comp


def _arrays_kept_row(x: np.ndarray):  # type: ignore[no-untyped-def]
    """The np.zeros(3) pair energy's gradient without `ad-scalar-replace`
    (what `ad-opt --no-scalar-replace` builds): d stays in memory."""
    jf = adpasses.jit(ours.fresh_copy(pair_energy))
    options = jf.reverse_options()
    jf.reverse_options = lambda: dataclasses.replace(options, scalar_replace=False)
    g = adpasses.grad(jf)
    g(x)
    return Contender("adpasses, arrays kept (--no-scalar-replace)", lambda: g(x), lambda: jf(x),
                     memory=False), jf, g


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    rows: list[Row] = []
    rng = np.random.default_rng(18)
    jax = peers.get("jax")
    nb = numba_pair_grad()
    jx = jax_versions(jax) if jax is not None else None
    sizes = [200] if OPTIONS.quick else [200, 1100]
    for n in sizes:
        x = positions(n, rng)
        label = f"pair n={n} ({n * (n - 1) // 2} pairs)"
        comp = ours.compile_ours(pair_energy, [x])
        ref = ours.reference(comp, [x])
        cs = ours.contenders(comp, [x])
        scalar, scomp = _scalar_rewrite_row(x)
        cs.append(scalar)
        kept, kept_jf, kept_grad = _arrays_kept_row(x)
        cs.append(kept)
        if nb is not None:
            cs.append(Contender("numba hand gradient", lambda: nb[1](x), lambda: nb[0](x),
                                compiles=True, memory=False))
        if jx is not None:
            gj, pj = jax.jit(jax.grad(jx[0])), jax.jit(jx[0])
            xj = jax.numpy.asarray(x)
            cs.append(Contender("jax (vectorised, n x n)", lambda: jax.block_until_ready(gj(xj)),
                                lambda: jax.block_until_ready(pj(xj)), compiles=True, memory=False))
        log(f"  {KEY} {label}: {len(cs)} contenders")
        group = measure(TITLE, "pair", label, n, cs, ref)
        ours.annotate(group, comp, [x])
        for row in group:
            if row.tool.startswith("adpasses, scalar"):
                row.allocations, row.extra["allocated_bytes"] = ours.allocations(lambda: scomp.grad(x))
                row.taped_bytes = ours.taped_bytes(scomp.jf, [x])
            if row.tool.startswith("adpasses, arrays kept"):
                row.allocations, row.extra["allocated_bytes"] = ours.allocations(lambda: kept_grad(x))
                row.taped_bytes = ours.taped_bytes(kept_jf, [x])
        rows += group

        m = min(n, 400)  # the EAM loop visits all n^2 ordered pairs
        xe = positions(m, rng)
        label = f"eam n={m}"
        comp = ours.compile_ours(eam_energy, [xe])
        ref = ours.reference(comp, [xe])
        cs = ours.contenders(comp, [xe])
        if jx is not None:
            ge, pe = jax.jit(jax.grad(jx[1])), jax.jit(jx[1])
            xj = jax.numpy.asarray(xe)
            cs.append(Contender("jax (vectorised, n x n)", lambda: jax.block_until_ready(ge(xj)),
                                lambda: jax.block_until_ready(pe(xj)), compiles=True, memory=False))
        log(f"  {KEY} {label}: {len(cs)} contenders")
        group = measure(TITLE, "eam", label, m, cs, ref)
        ours.annotate(group, comp, [xe])
        rows += group
    return rows
