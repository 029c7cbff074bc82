"""Forward mode and second derivatives (issue 15), beside the peers:

- hvp on the energy kernel (n = 10^3, 10^6) and on the Euler kernel
  (kernel 6, n = 1000, 1000 steps, in-place state): adpasses.hvp (forward over
  reverse), jax.jit of jvp(grad) (JAX's hvp idiom), a numba hand-written
  hvp. In these rows the "primal" column is ONE GRADIENT of the same tool
  (adpasses.grad, jax.jit(jax.grad), numba hand gradient), so grad/primal
  reads "hvp / gradient". Taped bytes: the inner gradient's tape.
- jvp on the strided and energy kernels: adpasses.jvp, jax.jit(jax.jvp),
  numba hand jvp; the primal column is the primal (ratio: jvp / primal).
  And on an in-place recurrence (`x[i] = sin(x[i]) x[i-1] + c x[i]`, then
  the sum of squares; n = 10^6): the primal column runs f on a copy of x
  (it writes x; jvp copies it too), JAX as lax.scan.
- Jacobian of a 200 -> 200 function (out[i] = sin(x_i) x_{i+1} +
  exp(-x_{i-1}^2), cyclic): adpasses.jacfwd and jacrev (an output array
  marked Output), jax.jit(jax.jacfwd(f)), jax.jit(jax.jacrev(f)), a numba
  hand Jacobian; primal column: the primal.
"""

from __future__ import annotations

import math

import numpy as np

import adpasses
from benchmarks import ours, peers
from benchmarks.harness import Contender, Row, first_call, log, measure, size_label
from benchmarks.kernels.energy import energy
from benchmarks.kernels.strided import strided_diff

KEY = "forward"
TITLE = "15. forward mode: hvp, jvp, Jacobian 200 -> 200"


def cyclic(x, out):
    n = len(x)
    for i in range(n):
        xm = x[(i + n - 1) % n]
        out[i] = math.sin(x[i]) * x[(i + 1) % n] + math.exp(-xm * xm)


def numba_versions():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit
    def energy_grad(x):  # type: ignore[no-untyped-def]
        g = np.empty_like(x)
        rho = 0.0
        for i in range(len(x)):
            e = math.exp(-3.0 * (x[i] + 1.0))
            g[i] = e
            rho += e
        de = -3.0 * (2.0 * rho + 3.0 * rho * rho + rho * rho * rho)
        for i in range(len(x)):
            g[i] *= de
        return g

    @numba.njit
    def energy_hvp(x, v):  # type: ignore[no-untyped-def]
        # E = P(rho), e_i = exp(-3(x_i+1)), g_i = -3 P'(rho) e_i
        # (H v)_i = 9 P''(rho) (e . v) e_i + 9 P'(rho) e_i v_i
        hv = np.empty_like(x)
        rho = 0.0
        ev = 0.0
        for i in range(len(x)):
            e = math.exp(-3.0 * (x[i] + 1.0))
            hv[i] = e
            rho += e
            ev += e * v[i]
        p1 = 2.0 * rho + 3.0 * rho * rho + rho * rho * rho
        p2 = 2.0 + 6.0 * rho + 3.0 * rho * rho
        for i in range(len(x)):
            hv[i] = 9.0 * (p2 * ev + p1 * v[i]) * hv[i]
        return hv

    @numba.njit
    def energy_primal(x):  # type: ignore[no-untyped-def]
        rho = 0.0
        for i in range(len(x)):
            rho += math.exp(-3.0 * (x[i] + 1.0))
        return rho**2 + rho**3 + rho**4 / 4

    @numba.njit
    def energy_jvp(x, u):  # type: ignore[no-untyped-def]
        rho = 0.0
        drho = 0.0
        for i in range(len(x)):
            e = math.exp(-3.0 * (x[i] + 1.0))
            rho += e
            drho += -3.0 * e * u[i]
        return (2.0 * rho + 3.0 * rho * rho + rho * rho * rho) * drho

    @numba.njit
    def strided_primal(x):  # type: ignore[no-untyped-def]
        s = 0.0
        for i in range(0, len(x) - 1, 2):
            d = x[i + 1] - x[i]
            s += d * d
        return s

    @numba.njit
    def strided_jvp(x, u):  # type: ignore[no-untyped-def]
        t = 0.0
        for i in range(0, len(x) - 1, 2):
            t += 2.0 * (x[i + 1] - x[i]) * (u[i + 1] - u[i])
        return t

    @numba.njit
    def cyclic_primal(x, out):  # type: ignore[no-untyped-def]
        n = len(x)
        for i in range(n):
            xm = x[(i + n - 1) % n]
            out[i] = math.sin(x[i]) * x[(i + 1) % n] + math.exp(-xm * xm)

    @numba.njit
    def cyclic_jacobian(x):  # type: ignore[no-untyped-def]
        n = len(x)
        J = np.zeros((n, n))
        for i in range(n):
            m, p = (i + n - 1) % n, (i + 1) % n
            J[i, i] += math.cos(x[i]) * x[p]
            J[i, p] += math.sin(x[i])
            J[i, m] += -2.0 * x[m] * math.exp(-x[m] * x[m])
        return J

    return {"energy_grad": energy_grad, "energy_hvp": energy_hvp, "energy_primal": energy_primal,
            "energy_jvp": energy_jvp, "strided_primal": strided_primal, "strided_jvp": strided_jvp,
            "cyclic_primal": cyclic_primal, "cyclic_jacobian": cyclic_jacobian}


def jax_energy(jnp):  # type: ignore[no-untyped-def]
    def f(x):  # type: ignore[no-untyped-def]
        rho = jnp.exp(-3.0 * (x + 1.0)).sum()
        return rho**2 + rho**3 + rho**4 / 4
    return f


def jax_strided(x):  # type: ignore[no-untyped-def]
    m = x.shape[0] // 2
    d = x[1:2 * m:2] - x[0:2 * m:2]
    return (d * d).sum()


def jax_cyclic(jnp):  # type: ignore[no-untyped-def]
    def f(x):  # type: ignore[no-untyped-def]
        xm = jnp.roll(x, 1)
        return jnp.sin(x) * jnp.roll(x, -1) + jnp.exp(-xm * xm)
    return f


def hvp_rows(nb, jax) -> list[Row]:  # type: ignore[no-untyped-def]
    rows: list[Row] = []
    rng = np.random.default_rng(151)
    jf = adpasses.jit(ours.fresh_copy(energy))
    hv, g = adpasses.hvp(jf), adpasses.grad(jf)
    for n in [10**3, 10**6]:
        x, v = rng.uniform(-0.5, 0.5, n), rng.normal(size=n)
        t_first, ref = first_call(lambda: hv(x, v))
        cs = [Contender("adpasses (hvp)", lambda: hv(x, v), lambda: g(x), traced=True,
                        extra={"idiom": "adpasses.hvp(energy)(x, v); primal column: adpasses.grad"})]
        if nb is not None:
            cs.append(Contender("numba hand hvp", lambda: nb["energy_hvp"](x, v), lambda: nb["energy_grad"](x),
                                compiles=True, traced=True,
                                extra={"idiom": "@njit hand hvp; primal column: numba hand gradient"}))
        if jax is not None:
            fj = jax_energy(jax.numpy)
            gj = jax.grad(fj)
            hvj = jax.jit(lambda x, v: jax.jvp(gj, (x,), (v,))[1])
            gjj = jax.jit(gj)
            xj, vj = jax.numpy.asarray(x), jax.numpy.asarray(v)
            cs.append(Contender("jax (jit(jvp(grad)))", lambda: jax.block_until_ready(hvj(xj, vj)),
                                lambda: jax.block_until_ready(gjj(xj)), compiles=True,
                                extra={"idiom": "jax.jit(lambda x, v: jax.jvp(jax.grad(f), (x,), (v,))[1]); "
                                                "primal column: jax.jit(jax.grad(f))"}))
        log(f"  {KEY} hvp {size_label(n)}: {len(cs)} contenders")
        group = measure(TITLE, KEY, f"hvp energy {size_label(n)}", n, cs, ref)
        for row in group:
            if row.tool == "adpasses (hvp)":
                row.compile_s = t_first - row.grad_s if n == 10**3 else None
                row.taped_bytes = ours.taped_bytes(jf, [x])
                row.allocations, row.extra["allocated_bytes"] = ours.allocations(lambda: hv(x, v))
                row.extra["taped_bytes_of"] = "the inner gradient (cache_report of grad)"
        rows += group
    return rows


def euler_hvp_rows(jax) -> list[Row]:  # type: ignore[no-untyped-def]
    """hvp of the Euler kernel (kernel 6: in-place state, 1000 steps,
    n = 1000): forward over reverse through its tape of states."""
    from benchmarks.kernels.euler import euler, jax_version

    n, steps, dt = 1000, 1000, 0.01
    u = np.linspace(0.2, 1.0, n)
    v = np.random.default_rng(154).normal(size=n)
    jf = adpasses.jit(ours.fresh_copy(euler))
    hv, g = adpasses.hvp(jf), adpasses.grad(jf)
    t_first, ref = first_call(lambda: hv(u, steps, dt, v))
    cs = [Contender("adpasses (hvp)", lambda: hv(u, steps, dt, v), lambda: g(u, steps, dt), traced=True,
                    extra={"idiom": "adpasses.hvp(euler)(u, steps, dt, v); primal column: adpasses.grad"})]
    fj = jax_version()
    if fj is not None:
        gj = jax.grad(fj)
        hvj = jax.jit(lambda u, v: jax.jvp(lambda w: gj(w, steps, dt), (u,), (v,))[1])
        gjj = jax.jit(lambda u: gj(u, steps, dt))
        uj, vj = jax.numpy.asarray(u), jax.numpy.asarray(v)
        cs.append(Contender("jax (jit(jvp(grad)), fori_loop)", lambda: jax.block_until_ready(hvj(uj, vj)),
                            lambda: jax.block_until_ready(gjj(uj)), compiles=True,
                            extra={"idiom": "jax.jit(jvp(grad(f))) of the fori_loop version; primal "
                                            "column: jax.jit(jax.grad(f))"}))
    log(f"  {KEY} hvp euler: {len(cs)} contenders")
    group = measure(TITLE, KEY, "hvp euler n=1000, 1000 steps", n, cs, ref)
    for row in group:
        if row.tool == "adpasses (hvp)":
            row.compile_s = max(0.0, t_first - row.grad_s)
            row.taped_bytes = ours.taped_bytes(jf, [u, steps, dt])
            row.allocations, row.extra["allocated_bytes"] = ours.allocations(lambda: hv(u, steps, dt, v))
            row.extra["taped_bytes_of"] = "the inner gradient (cache_report of grad)"
    return group


def recurrence(x, c):
    for i in range(1, len(x)):
        x[i] = math.sin(x[i]) * x[i - 1] + c * x[i]
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


def numba_recurrence():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit
    def primal(x, c):  # type: ignore[no-untyped-def]
        y = x.copy()
        for i in range(1, len(y)):
            y[i] = math.sin(y[i]) * y[i - 1] + c * y[i]
        s = 0.0
        for i in range(len(y)):
            s += y[i] * y[i]
        return s

    @numba.njit
    def jvp(x, u, c):  # type: ignore[no-untyped-def]
        y, dy = x.copy(), u.copy()
        for i in range(1, len(y)):
            a, da = y[i], dy[i]
            sa, ca = math.sin(a), math.cos(a)
            dy[i] = ca * da * y[i - 1] + sa * dy[i - 1] + c * da
            y[i] = sa * y[i - 1] + c * a
        t = 0.0
        for i in range(len(y)):
            t += 2.0 * y[i] * dy[i]
        return t

    return primal, jvp


def jax_recurrence(jax, c: float):  # type: ignore[no-untyped-def]
    jnp = jax.numpy

    def f(x):  # type: ignore[no-untyped-def]
        def step(prev, a):  # type: ignore[no-untyped-def]
            v = jnp.sin(a) * prev + c * a
            return v, v
        _, rest = jax.lax.scan(step, x[0], x[1:])
        return x[0] * x[0] + jnp.sum(rest * rest)
    return f


def recurrence_rows(jax) -> list[Row]:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(153)
    n, c = 10**6, 0.3
    jf = adpasses.jit(ours.fresh_copy(recurrence))
    x, u = rng.uniform(0.2, 0.6, n), rng.normal(size=n)
    work = x.copy()

    def primal() -> float:
        np.copyto(work, x)
        return jf(work, c)

    t_first, out = first_call(lambda: adpasses.jvp(jf, (x, c), (u, 0.0)))
    ref = out[1]
    cs = [Contender("adpasses (jvp)", lambda: adpasses.jvp(jf, (x, c), (u, 0.0))[1], primal,
                    memory=False, extra={"idiom": "adpasses.jvp(f, (x, c), (u, 0.0)); primal: f on a copy"})]
    nb = numba_recurrence()
    if nb is not None:
        nb_primal, nb_jvp = nb
        cs.append(Contender("numba hand jvp", lambda: nb_jvp(x, u, c), lambda: nb_primal(x, c),
                            compiles=True, memory=False))
    if jax is not None:
        fj = jax_recurrence(jax, c)
        jv = jax.jit(lambda x, u: jax.jvp(fj, (x,), (u,))[1])
        pj = jax.jit(fj)
        xj, uj = jax.numpy.asarray(x), jax.numpy.asarray(u)
        cs.append(Contender("jax (jit(jvp), lax.scan)", lambda: jax.block_until_ready(jv(xj, uj)),
                            lambda: jax.block_until_ready(pj(xj)), compiles=True, memory=False))
    log(f"  {KEY} jvp recurrence {size_label(n)}: {len(cs)} contenders")
    group = measure(TITLE, KEY, f"jvp recurrence {size_label(n)}", n, cs, ref)
    for row in group:
        if row.tool == "adpasses (jvp)":
            row.compile_s = max(0.0, t_first - row.grad_s)
    return group


def jvp_rows(nb, jax) -> list[Row]:  # type: ignore[no-untyped-def]
    rows: list[Row] = []
    rng = np.random.default_rng(152)
    cases = [("strided", strided_diff, "strided", 10**6), ("energy", energy, "energy", 10**6)]
    for label, f, peer, n in cases:
        jf = adpasses.jit(ours.fresh_copy(f))
        x, u = rng.uniform(-0.5, 0.5, n), rng.normal(size=n)
        t_first, out = first_call(lambda: adpasses.jvp(jf, (x,), (u,)))
        ref = out[1]
        cs = [Contender("adpasses (jvp)", lambda: adpasses.jvp(jf, (x,), (u,))[1], lambda: jf(x),
                        memory=False, extra={"idiom": "adpasses.jvp(f, (x,), (u,))"})]
        if nb is not None:
            cs.append(Contender("numba hand jvp", lambda: nb[f"{peer}_jvp"](x, u),
                                lambda: nb[f"{peer}_primal"](x), compiles=True, memory=False))
        if jax is not None:
            fj = jax_strided if peer == "strided" else jax_energy(jax.numpy)
            jv = jax.jit(lambda x, u: jax.jvp(fj, (x,), (u,))[1])
            pj = jax.jit(fj)
            xj, uj = jax.numpy.asarray(x), jax.numpy.asarray(u)
            cs.append(Contender("jax (jit(jvp))", lambda: jax.block_until_ready(jv(xj, uj)),
                                lambda: jax.block_until_ready(pj(xj)), compiles=True, memory=False))
        log(f"  {KEY} jvp {label} {size_label(n)}: {len(cs)} contenders")
        group = measure(TITLE, KEY, f"jvp {label} {size_label(n)}", n, cs, ref)
        for row in group:
            if row.tool == "adpasses (jvp)":
                row.compile_s = max(0.0, t_first - row.grad_s)
        rows += group
    return rows


def jacobian_rows(nb, jax) -> list[Row]:  # type: ignore[no-untyped-def]
    n = 200
    x = np.random.default_rng(153).uniform(-1.0, 1.0, n)
    out = np.zeros(n)
    jf = adpasses.jit(ours.fresh_copy(cyclic))
    jfwd, jrev = adpasses.jacfwd(jf), adpasses.jacrev(jf)
    Output = adpasses.Output
    t_fwd, ref = first_call(lambda: jfwd(x, Output(out)))
    t_rev, _ = first_call(lambda: jrev(x, Output(out)))
    cs = [Contender("adpasses (jacfwd, width 16)", lambda: jfwd(x, Output(out)), lambda: jf(x, out),
                    memory=False, extra={"idiom": "adpasses.jacfwd(f)(x, Output(out))"}),
          Contender("adpasses (jacrev)", lambda: jrev(x, Output(out)), lambda: jf(x, out), memory=False,
                    extra={"idiom": "adpasses.jacrev(f)(x, Output(out))"})]
    if nb is not None:
        cs.append(Contender("numba hand Jacobian", lambda: nb["cyclic_jacobian"](x),
                            lambda: nb["cyclic_primal"](x, out), compiles=True, memory=False))
    if jax is not None:
        fj = jax_cyclic(jax.numpy)
        xj = jax.numpy.asarray(x)
        pj = jax.jit(fj)
        for name, make in (("jacfwd", jax.jacfwd), ("jacrev", jax.jacrev)):
            jj = jax.jit(make(fj))
            cs.append(Contender(f"jax (jit({name}))", lambda jj=jj: jax.block_until_ready(jj(xj)),
                                lambda: jax.block_until_ready(pj(xj)), compiles=True, memory=False,
                                extra={"idiom": f"jax.jit(jax.{name}(f))(x)"}))
    log(f"  {KEY} Jacobian 200 -> 200: {len(cs)} contenders")
    group = measure(TITLE, KEY, "Jacobian 200 -> 200", n, cs, ref)
    for row in group:
        if row.tool.startswith("adpasses (jacfwd"):
            row.compile_s = max(0.0, t_fwd - row.grad_s)
        elif row.tool == "adpasses (jacrev)":
            row.compile_s = max(0.0, t_rev - row.grad_s)
    return group


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    nb = numba_versions()
    jax = peers.get("jax")
    return (hvp_rows(nb, jax) + euler_hvp_rows(jax) + jvp_rows(nb, jax) + recurrence_rows(jax)
            + jacobian_rows(nb, jax))
