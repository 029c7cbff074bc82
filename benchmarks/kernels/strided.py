"""Kernel 1: strided difference, squared so that the gradient is nontrivial.

    f(x) = sum_{i = 0, 2, 4, ...; i + 1 < n} (x[i+1] - x[i])^2
    df/dx[i+1] = 2 (x[i+1] - x[i]),  df/dx[i] = -2 (x[i+1] - x[i])

n = 10^4 .. 10^7: time and peak memory. The loop-style peers (the same
Python function run on JAX / PyTorch / autograd arrays) record every scalar
operation on a tape and turn every `x[i]` into a dense length-n gradient in
the backward pass: O(n^2) time, shown at small n. Also the issue-3 rows
(gradient/primal ratio growing linearly) and issue 6 (tape-all vs minimal).
"""

from __future__ import annotations

import numpy as np

from benchmarks import ours, peers
from benchmarks.common import autograd_contender, jax_contender, keep, torch_contender
from benchmarks.harness import OPTIONS, Contender, log, measure, size_label
from benchmarks.kernels import loopstyle

KEY = "strided"
TITLE = "1. strided difference sum((x[i+1]-x[i])^2, i = 0, 2, 4, ...)"


def strided_diff(x):
    s = 0.0
    for i in range(0, len(x) - 1, 2):
        d = x[i + 1] - x[i]
        s += d * d
    return s


# -- peers -----------------------------------------------------------------------------


def numba_versions():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit(cache=False)
    def primal(x):  # type: ignore[no-untyped-def]
        s = 0.0
        for i in range(0, len(x) - 1, 2):
            d = x[i + 1] - x[i]
            s += d * d
        return s

    @numba.njit(cache=False)
    def grad(x):  # type: ignore[no-untyped-def]
        g = np.zeros_like(x)
        for i in range(0, len(x) - 1, 2):
            d2 = 2.0 * (x[i + 1] - x[i])
            g[i + 1] += d2
            g[i] -= d2
        return g

    return primal, grad


def numpy_primal(x):  # type: ignore[no-untyped-def]
    m = len(x) // 2
    d = x[1:2 * m:2] - x[0:2 * m:2]
    return float(d @ d)


def numpy_grad(x):  # type: ignore[no-untyped-def]
    m = len(x) // 2
    d2 = 2.0 * (x[1:2 * m:2] - x[0:2 * m:2])
    g = np.zeros_like(x)
    g[1:2 * m:2] = d2
    g[0:2 * m:2] = -d2
    return g


def vectorised():  # type: ignore[no-untyped-def]
    """The peers' vectorised idiom (slices; works on jax, torch and autograd arrays)."""
    def f(x):  # type: ignore[no-untyped-def]
        m = x.shape[0] // 2
        d = x[1:2 * m:2] - x[0:2 * m:2]
        return (d * d).sum()
    return f


def jax_fori():  # type: ignore[no-untyped-def]
    """JAX's loop idiom: lax.fori_loop with dynamic indexing."""
    jax = peers.get("jax")
    if jax is None:
        return None

    def f(x):  # type: ignore[no-untyped-def]
        def body(k, s):  # type: ignore[no-untyped-def]
            d = x[2 * k + 1] - x[2 * k]
            return s + d * d
        return jax.lax.fori_loop(0, x.shape[0] // 2, body, 0.0)
    return f


# -- the benchmark ------------------------------------------------------------------------


def sizes() -> list[int]:
    return [10**4, 10**5] if OPTIONS.quick else [10**4, 10**5, 10**6, 10**7]


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    rows = []
    rng = np.random.default_rng(1)
    nb = numba_versions()
    comp = None
    for n in sizes():
        x = rng.uniform(-1.0, 1.0, n)
        if comp is None:
            comp = ours.compile_ours(strided_diff, [x])
        ref = ours.reference(comp, [x])[0]
        cs = ours.contenders(comp, [x])
        if nb is not None:
            cs.append(Contender("numba hand gradient", lambda: nb[1](x), lambda: nb[0](x),
                                traced=True, compiles=True, extra={"idiom": "@njit loops"}))
        cs.append(Contender("numpy hand gradient", lambda: numpy_grad(x), lambda: numpy_primal(x),
                            traced=True, extra={"idiom": "slices"}))
        cs += keep(
            jax_contender("jax (vectorised)", vectorised(), [x]),
            None if OPTIONS.quick else jax_contender("jax (fori_loop)", jax_fori(), [x],
                                                      note="lax.fori_loop, dynamic indices"),
            torch_contender("torch (vectorised)", vectorised(), [x]),
            autograd_contender("autograd (vectorised)", vectorised(), [x]),
        )
        log(f"  {KEY} {size_label(n)}: {len(cs)} contenders")
        group = measure(TITLE, KEY, size_label(n), n, cs, ref)
        ours.annotate(group, comp, [x])
        rows += group
    # loop style: the same Python function on the peers' arrays
    rows += loopstyle.run(TITLE, KEY, strided_diff, lambda n: [rng.uniform(-1.0, 1.0, n)],
                          [100, 1000, 3000, 10**4] if not OPTIONS.quick else [100], comp)
    return rows
