"""Kernel 2: an energy through a sum of exponentials.

    rho = sum_i exp(-3 (x_i + 1)),   E = rho^2 + rho^3 + rho^4 / 4
    dE/dx_i = (2 rho + 3 rho^2 + rho^3) * (-3 exp(-3 (x_i + 1)))

n = 100, 10^3, 10^6, x uniform in [-0.5, 0.5]. The hand-written gradients
(numba @njit) come in Enzyme's two variants: recomputing exp in the second
loop, or storing the n exponentials of the first loop in an array. Our
cost model tapes the exponentials (8 bytes each) rather than recompute them.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks import ours, peers
from benchmarks.common import autograd_contender, jax_contender, keep, torch_contender
from benchmarks.harness import OPTIONS, Contender, log, measure, size_label
from benchmarks.kernels import loopstyle

KEY = "energy"
TITLE = "2. energy rho = sum(exp(-3(x+1))), E = rho^2 + rho^3 + rho^4/4"


def energy(x):
    rho = 0.0
    for i in range(len(x)):
        rho += math.exp(-3.0 * (x[i] + 1.0))
    return rho**2 + rho**3 + rho**4 / 4


def energy_array(x):
    """The same energy in the array language: one fused generic, a sum
    with a reduction iterator (no temporary array)."""
    rho = np.sum(np.exp(-3.0 * (x + 1.0)))
    return rho**2 + rho**3 + rho**4 / 4


def loop_style(exp):  # type: ignore[no-untyped-def]
    """The same loop with the peer's exp (math.exp would leave its graph)."""
    def energy_loop(x):  # type: ignore[no-untyped-def]
        rho = 0.0
        for i in range(len(x)):
            rho = rho + exp(-3.0 * (x[i] + 1.0))
        return rho**2 + rho**3 + rho**4 / 4
    return energy_loop


def numba_versions():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit
    def primal(x):  # type: ignore[no-untyped-def]
        rho = 0.0
        for i in range(len(x)):
            rho += math.exp(-3.0 * (x[i] + 1.0))
        return rho**2 + rho**3 + rho**4 / 4

    @numba.njit
    def grad_recompute(x):  # type: ignore[no-untyped-def]
        rho = 0.0
        for i in range(len(x)):
            rho += math.exp(-3.0 * (x[i] + 1.0))
        de = -3.0 * (2.0 * rho + 3.0 * rho * rho + rho * rho * rho)
        g = np.empty_like(x)
        for i in range(len(x)):
            g[i] = de * math.exp(-3.0 * (x[i] + 1.0))
        return g

    @numba.njit
    def grad_store(x):  # type: ignore[no-untyped-def]
        g = np.empty_like(x)  # the exponentials, then the gradient in place
        rho = 0.0
        for i in range(len(x)):
            e = math.exp(-3.0 * (x[i] + 1.0))
            g[i] = e
            rho += e
        de = -3.0 * (2.0 * rho + 3.0 * rho * rho + rho * rho * rho)
        for i in range(len(x)):
            g[i] *= de
        return g

    return primal, grad_recompute, grad_store


def numpy_primal(x):  # type: ignore[no-untyped-def]
    rho = np.exp(-3.0 * (x + 1.0)).sum()
    return rho**2 + rho**3 + rho**4 / 4


def numpy_grad(x):  # type: ignore[no-untyped-def]
    e = np.exp(-3.0 * (x + 1.0))
    rho = e.sum()
    e *= -3.0 * (2.0 * rho + 3.0 * rho**2 + rho**3)
    return e


def vectorised(exp):  # type: ignore[no-untyped-def]
    def f(x):  # type: ignore[no-untyped-def]
        rho = exp(-3.0 * (x + 1.0)).sum()
        return rho**2 + rho**3 + rho**4 / 4
    return f


def jax_fori():  # type: ignore[no-untyped-def]
    jax = peers.get("jax")
    if jax is None:
        return None
    jnp = jax.numpy

    def f(x):  # type: ignore[no-untyped-def]
        rho = jax.lax.fori_loop(0, x.shape[0], lambda i, r: r + jnp.exp(-3.0 * (x[i] + 1.0)), 0.0)
        return rho**2 + rho**3 + rho**4 / 4
    return f


def sizes() -> list[int]:
    return [100, 1000] if OPTIONS.quick else [100, 1000, 10**6]


def peer_exps() -> dict[str, object]:
    out = {}
    if (jax := peers.get("jax")) is not None:
        out["jax"] = jax.numpy.exp
    if (torch := peers.get("torch")) is not None:
        out["torch"] = torch.exp
    if peers.get("autograd") is not None:
        import autograd.numpy as anp

        out["autograd"] = anp.exp
    return out


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    rows = []
    rng = np.random.default_rng(2)
    nb = numba_versions()
    exps = peer_exps()
    comp = None
    for n in sizes():
        x = rng.uniform(-0.5, 0.5, n)
        if comp is None:
            comp = ours.compile_ours(energy, [x])
        ref = ours.reference(comp, [x])[0]
        cs = ours.contenders(comp, [x])
        if nb is not None:
            cs.append(Contender("numba hand gradient (recompute exp)", lambda: nb[1](x),
                                lambda: nb[0](x), traced=True, compiles=True))
            cs.append(Contender("numba hand gradient (store exp)", lambda: nb[2](x),
                                lambda: nb[0](x), traced=True, compiles=True))
        cs.append(Contender("numpy hand gradient", lambda: numpy_grad(x), lambda: numpy_primal(x),
                            traced=True))
        cs += keep(
            jax_contender("jax (vectorised)", vectorised(exps["jax"]), [x]) if "jax" in exps else None,
            jax_contender("jax (fori_loop)", jax_fori(), [x]) if "jax" in exps and not OPTIONS.quick
            else None,
            torch_contender("torch (vectorised)", vectorised(exps["torch"]), [x]) if "torch" in exps else None,
            autograd_contender("autograd (vectorised)", vectorised(exps["autograd"]), [x])
            if "autograd" in exps else None,
        )
        log(f"  {KEY} {size_label(n)}: {len(cs)} contenders")
        group = measure(TITLE, KEY, size_label(n), n, cs, ref)
        ours.annotate(group, comp, [x])
        rows += group
    rows += array_language(rng, exps)
    rows += loopstyle.run(TITLE, KEY, energy, lambda n: [rng.uniform(-0.5, 0.5, n)],
                          [100, 1000] if not OPTIONS.quick else [100], comp,
                          fns={k: loop_style(e) for k, e in exps.items()})
    return rows


def array_language(rng, exps) -> list:  # type: ignore[no-untyped-def]
    """n = 10^6 (also with --quick): the loop version, the array version
    (`np.sum(np.exp(...))`, frontend/array_exprs.py) and JAX, side by
    side, with our heap allocations per gradient call."""
    n = 10**6
    x = rng.uniform(-0.5, 0.5, n)
    loop = ours.compile_ours(energy, [x])
    array = ours.compile_ours(energy_array, [x])
    ref = ours.reference(loop, [x])[0]
    cs = [Contender("adpasses (loop)", lambda: loop.grad(x), lambda: loop.jf(x), traced=True),
          Contender("adpasses (array expression)", lambda: array.grad(x), lambda: array.jf(x), traced=True)]
    cs += keep(jax_contender("jax (vectorised)", vectorised(exps["jax"]), [x]) if "jax" in exps else None)
    log(f"  {KEY} array language {size_label(n)}: {len(cs)} contenders")
    group = measure(TITLE + " (array language)", KEY + "-array", size_label(n), n, cs, ref)
    for row in group:
        comp = {"adpasses (loop)": loop, "adpasses (array expression)": array}.get(row.tool)
        if comp is not None:
            row.compile_s = comp.compile_primal_s + comp.compile_grad_s
            row.allocations, row.extra["allocated_bytes"] = ours.allocations(lambda c=comp: c.grad(x))
            row.extra["primal_allocations"] = ours.allocations(lambda c=comp: c.jf(x))[0]
    return group
