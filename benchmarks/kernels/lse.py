"""Issue 16: column-wise log-sum-exp of an m x n matrix (m = n = 1000).

    f(X) = sum_j [ mx_j + log sum_i exp(X_ij - mx_j) ],  mx_j = max_i X_ij
    df/dX_ij = exp(X_ij - mx_j) / sum_i exp(X_ij - mx_j)   (a column softmax)

Written three ways for adpasses, as a user writes them: through column
views (`col = X[:, j]`, `np.max(col)`, `np.sum(np.exp(col - mx))`), as
scalar loops over `X[i, j]`, and as one array expression with `axis=0`
reductions, and as `scipy.special.logsumexp(X, axis=0)` (when scipy is
installed). Peers: JAX (`jit(grad)` of the array expression and of
`jax.scipy.special.logsumexp(X, axis=0)`), numba (a hand-written
gradient, row-major: the max, the sums and the softmax in passes over
contiguous rows).
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks import ours, peers
from benchmarks.common import jax_contender, keep
from benchmarks.harness import Contender, log, measure

try:
    import scipy.special as scipy_special
except ImportError:  # the scipy row is skipped
    scipy_special = None

KEY = "lse"
TITLE = "16. column-wise log-sum-exp sum_j log sum_i exp(X_ij) (max-shifted)"


def lse_columns(X):
    total = 0.0
    for j in range(X.shape[1]):
        col = X[:, j]
        mx = np.max(col)
        total += mx + math.log(np.sum(np.exp(col - mx)))
    return total


def lse_loops(X):
    m, n = X.shape
    total = 0.0
    for j in range(n):
        mx = X[0, j]
        for i in range(1, m):
            mx = max(mx, X[i, j])
        s = 0.0
        for i in range(m):
            s += math.exp(X[i, j] - mx)
        total += mx + math.log(s)
    return total


def lse_array(X):
    mx = np.max(X, axis=0)
    return np.sum(mx + np.log(np.sum(np.exp(X - mx), axis=0)))


def lse_scipy(X):
    """scipy.special.logsumexp compiled (frontend/special_calls.py)."""
    return np.sum(scipy_special.logsumexp(X, axis=0))


def numba_versions():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit
    def primal(X):  # type: ignore[no-untyped-def]
        m, n = X.shape
        mx = X[0].copy()
        for i in range(1, m):
            for j in range(n):
                mx[j] = max(mx[j], X[i, j])
        s = np.zeros(n)
        for i in range(m):
            for j in range(n):
                s[j] += math.exp(X[i, j] - mx[j])
        total = 0.0
        for j in range(n):
            total += mx[j] + math.log(s[j])
        return total

    @numba.njit
    def grad(X):  # type: ignore[no-untyped-def]
        m, n = X.shape
        mx = X[0].copy()
        for i in range(1, m):
            for j in range(n):
                mx[j] = max(mx[j], X[i, j])
        g = np.empty_like(X)
        s = np.zeros(n)
        for i in range(m):
            for j in range(n):
                e = math.exp(X[i, j] - mx[j])
                g[i, j] = e
                s[j] += e
        for i in range(m):
            for j in range(n):
                g[i, j] /= s[j]
        return g

    return primal, grad


def jax_versions():  # type: ignore[no-untyped-def]
    jax = peers.get("jax")
    if jax is None:
        return None
    jnp = jax.numpy

    def array(X):  # type: ignore[no-untyped-def]
        mx = jnp.max(X, axis=0)
        return jnp.sum(mx + jnp.log(jnp.sum(jnp.exp(X - mx), axis=0)))

    def library(X):  # type: ignore[no-untyped-def]
        return jnp.sum(jax.scipy.special.logsumexp(X, axis=0))

    return array, library


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    m = n = 1000  # the size of the issue, also with --quick (one size, ~1 s per row)
    rng = np.random.default_rng(16)
    X = rng.normal(size=(m, n))
    versions = {"columns X[:, j]": lse_columns, "scalar loops": lse_loops, "array, axis=0": lse_array}
    if scipy_special is not None:
        versions["scipy.special.logsumexp"] = lse_scipy
    compiled = {label: ours.compile_ours(f, [X]) for label, f in versions.items()}
    ref = ours.reference(compiled["scalar loops"], [X])[0]
    cs = []
    for label, comp in compiled.items():
        cs.append(Contender(f"adpasses ({label})", lambda c=comp: c.grad(X), lambda c=comp: c.jf(X),
                            traced=True, extra={"path": "adpasses.grad"}))
    nb = numba_versions()
    if nb is not None:
        cs.append(Contender("numba hand gradient (row-major)", lambda: nb[1](X), lambda: nb[0](X),
                            traced=True, compiles=True))
    jv = jax_versions()
    if jv is not None:
        cs += keep(jax_contender("jax (array, axis=0)", jv[0], [X]),
                   jax_contender("jax (logsumexp(X, axis=0))", jv[1], [X]))
    size = f"{m}x{n}"
    log(f"  {KEY} {size}: {len(cs)} contenders")
    rows = measure(TITLE, KEY, size, m * n, cs, ref)
    for row in rows:
        for label, comp in compiled.items():
            if row.tool == f"adpasses ({label})":
                row.compile_s = comp.compile_primal_s + comp.compile_grad_s
                row.taped_bytes = ours.taped_bytes(comp.jf, [X])
                row.allocations, row.extra["allocated_bytes"] = ours.allocations(lambda c=comp: c.grad(X))
    return rows
