"""Kernel 6: explicit Euler integration with in-place state.

    du_i/dt = -u_i^3 + 0.1 u_{i-1}  (i >= 1; u_0 fixed),  n = 1000, 1000 steps, dt = 0.01
    every step: du[i] = -u[i]^3 + 0.1 u[i-1] for all i, then u[i] += dt du[i]
    f(u0) = sum_i u_i(T)^2,  gradient with respect to u0

The state is overwritten every step, so the reverse sweep needs one state
per step: n doubles per step taped (8 MB), as Enzyme does. The timed calls
keep integrating the array they are given (the dynamics decay, every call
does the same work); the first call, checked, runs on the initial state.
Peers: a numba @njit hand gradient (forward storing the states, backward
adjoint recurrence), JAX functionally (lax.fori_loop over steps,
vectorised update with .at[1:].add), PyTorch and autograd with a Python
loop over steps and a vectorised, out-of-place update (PyTorch's in-place
`u[1:] += ...` would overwrite a value autograd saved for u[1:]**3 and is
rejected). The scalar loop style (10^6 updates) is far beyond a minute on
the tape-based peers and is not run.
"""

from __future__ import annotations

import numpy as np

from benchmarks import ours, peers
from benchmarks.common import keep
from benchmarks.harness import OPTIONS, Contender, log, measure

KEY = "euler"
TITLE = "6. explicit Euler du/dt = -u^3 + 0.1 u_{i-1}, in-place state"


def euler(u, steps, dt):
    n = len(u)
    du = np.zeros(n)
    for t in range(steps):
        for i in range(1, n):
            du[i] = -u[i] ** 3 + 0.1 * u[i - 1]
        for i in range(1, n):
            u[i] = u[i] + dt * du[i]
    s = 0.0
    for i in range(n):
        s += u[i] * u[i]
    return s


def euler_cubed(u, steps, dt):
    """Diagnostic variant: u[i] ** 3 written as a product (what numba and
    C compilers emit for a constant integer power)."""
    n = len(u)
    du = np.zeros(n)
    for t in range(steps):
        for i in range(1, n):
            du[i] = -(u[i] * u[i] * u[i]) + 0.1 * u[i - 1]
        for i in range(1, n):
            u[i] = u[i] + dt * du[i]
    s = 0.0
    for i in range(n):
        s += u[i] * u[i]
    return s


def numba_versions():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit
    def primal(u, steps, dt):  # type: ignore[no-untyped-def]
        n = len(u)
        du = np.zeros(n)
        for t in range(steps):
            for i in range(1, n):
                du[i] = -u[i] ** 3 + 0.1 * u[i - 1]
            for i in range(1, n):
                u[i] = u[i] + dt * du[i]
        s = 0.0
        for i in range(n):
            s += u[i] * u[i]
        return s

    @numba.njit
    def grad(u, steps, dt):  # type: ignore[no-untyped-def]
        n = len(u)
        U = np.empty((steps, n))           # the state before each step (8 MB)
        for t in range(steps):
            for i in range(n):
                U[t, i] = u[i]
            for i in range(n - 1, 0, -1):  # backwards: u[i-1] still holds the old value
                u[i] = u[i] + dt * (-u[i] ** 3 + 0.1 * u[i - 1])
        lam = np.empty(n)
        for i in range(n):
            lam[i] = 2.0 * u[i]
        for t in range(steps - 1, -1, -1):
            # u_new[i] = u[i] + dt (-u[i]^3 + 0.1 u[i-1]) for i >= 1; going up,
            # lam[i + 1] still holds the later step's adjoint when lam[i] is updated
            for i in range(n):
                g = lam[i] * (1.0 - 3.0 * dt * U[t, i] * U[t, i]) if i >= 1 else lam[i]
                if i + 1 < n:
                    g += lam[i + 1] * 0.1 * dt
                lam[i] = g
        return lam

    return primal, grad


def jax_version():  # type: ignore[no-untyped-def]
    jax = peers.get("jax")
    if jax is None:
        return None

    def f(u, steps, dt):  # type: ignore[no-untyped-def]
        def step(t, u):  # type: ignore[no-untyped-def]
            return u.at[1:].add(dt * (-u[1:] ** 3 + 0.1 * u[:-1]))
        u = jax.lax.fori_loop(0, steps, step, u)
        return (u * u).sum()
    return f


def torch_version(u, steps, dt):  # type: ignore[no-untyped-def]
    import torch

    for _ in range(steps):
        u = torch.cat([u[:1], u[1:] + dt * (-u[1:] ** 3 + 0.1 * u[:-1])])
    return (u * u).sum()


def autograd_version(u, steps, dt):  # type: ignore[no-untyped-def]
    import autograd.numpy as anp

    for _ in range(steps):
        u = anp.concatenate([u[:1], u[1:] + dt * (-u[1:] ** 3 + 0.1 * u[:-1])])
    return (u * u).sum()


class Checkpointed:
    """Our gradient under a memory budget (`adpasses.grad(f, memory_limit=)`,
    docs/cache.md "Checkpointing"): a quarter of what the plain gradient
    tapes, so the time loop is split into checkpointed segments."""

    def __init__(self, u0: np.ndarray, steps: int, dt: float):
        import adpasses

        plain = ours.taped_bytes(adpasses.jit(ours.fresh_copy(euler)), [u0.copy(), steps, dt])
        self.limit = (plain or 0) // 4
        self.args = lambda: [u0.copy(), steps, dt]
        self.jf = adpasses.jit(ours.fresh_copy(euler), tape_limit=self.limit)
        self.grad = adpasses.grad(self.jf)
        self.report = adpasses.cache_report(self.jf, *self.args())
        uc = u0.copy()
        self.contender = Contender(
            "adpasses, memory_limit (checkpointed)", lambda: self.grad(uc, steps, dt),
            lambda: self.jf(uc, steps, dt), traced=True,
            note=f"memory_limit={self.limit} bytes: segments recomputed in the reverse sweep",
            extra={"path": "adpasses.grad(f, memory_limit=...)"})

    def annotate(self, rows: list) -> None:  # type: ignore[type-arg]
        for row in rows:
            if row.tool == self.contender.tool:
                row.taped_bytes = self.report.peak_taped_bytes
                row.allocations, row.extra["allocated_bytes"] = ours.allocations(
                    lambda: self.grad(*self.args()))
                row.extra.update({
                    "memory_limit": self.limit,
                    "snapshot_bytes": self.report.taped_bytes,
                    "segment_tape_bytes": max((r.taped_bytes or 0 for _, r in self.report.callees),
                                              default=0),
                    "recompute_factor": self.report.recompute_factor,
                })


REVOLVE_SNAPSHOTS = (4, 8, 16, 32)


class Revolved:
    """Our gradient with the binomial (revolve) schedule holding `snaps`
    states (`adpasses.grad(f, snapshots=S)`, docs/cache.md
    "Checkpointing"): the fewest recomputed steps for that memory."""

    def __init__(self, u0: np.ndarray, steps: int, dt: float, snaps: int):
        import adpasses

        self.snaps = snaps
        self.args = lambda: [u0.copy(), steps, dt]
        self.jf = adpasses.jit(ours.fresh_copy(euler), snapshots=snaps)
        self.grad = adpasses.grad(self.jf)
        self.report = adpasses.cache_report(self.jf, *self.args())
        uc = u0.copy()
        self.contender = Contender(
            f"adpasses, revolve s={snaps}", lambda: self.grad(uc, steps, dt),
            lambda: self.jf(uc, steps, dt), traced=True,
            note=f"snapshots={snaps}: binomial schedule, steps recomputed in the reverse sweep",
            extra={"path": f"adpasses.grad(f, snapshots={snaps})"})

    def annotate(self, rows: list) -> None:  # type: ignore[type-arg]
        for row in rows:
            if row.tool == self.contender.tool:
                [(_, stats)] = self.report.revolves
                row.taped_bytes = self.report.peak_taped_bytes
                row.allocations, row.extra["allocated_bytes"] = ours.allocations(
                    lambda: self.grad(*self.args()))
                row.extra.update({
                    "snapshots": stats.snapshots,
                    "snapshot_bytes": stats.snapshot_bytes,
                    "recomputed_steps": stats.recomputed_steps,
                    "recompute_factor": self.report.recompute_factor,
                })


def jax_checkpointed_version(snaps: int):  # type: ignore[no-untyped-def]
    """JAX's idiom for the same budget: an outer scan over `snaps` segments,
    each a `jax.checkpoint`ed inner scan of steps // snaps steps (it keeps
    the segments' inputs, snaps states, and one segment's residuals while
    it is reversed), then the remaining steps taped. JAX has no binomial
    schedule."""
    jax = peers.get("jax")
    if jax is None:
        return None

    def f(u, steps, dt):  # type: ignore[no-untyped-def]
        def step(u, _):  # type: ignore[no-untyped-def]
            return u.at[1:].add(dt * (-u[1:] ** 3 + 0.1 * u[:-1])), None

        seg = steps // snaps

        @jax.checkpoint
        def segment(u, _):  # type: ignore[no-untyped-def]
            return jax.lax.scan(step, u, None, length=seg)[0], None

        u = jax.lax.scan(segment, u, None, length=snaps)[0]
        u = jax.lax.scan(step, u, None, length=steps - seg * snaps)[0]
        return (u * u).sum()
    return f


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    n, steps = (100, 100) if OPTIONS.quick else (1000, 1000)
    dt = 0.01
    u0 = np.linspace(0.2, 1.0, n)
    comp = ours.compile_ours(euler, [u0.copy(), steps, dt], copy_args=lambda: [u0.copy(), steps, dt])
    ref = ours.reference(comp, [u0.copy(), steps, dt])[0]
    ua, ur = u0.copy(), u0.copy()
    cs = ours.contenders(comp, [ua, steps, dt])
    cs[1] = ours.contenders(comp, [ur, steps, dt])[1]
    comp3 = diag = None
    if not OPTIONS.quick:
        comp3 = ours.compile_ours(euler_cubed, [u0.copy(), steps, dt],
                                  copy_args=lambda: [u0.copy(), steps, dt])
        diag = ours.contenders(comp3, [u0.copy(), steps, dt])[0]
        diag.tool = "adpasses, u*u*u for u**3 (diagnostic)"
        diag.note = "same kernel with the cube written as a product"
        cs.append(diag)
    ck = Checkpointed(u0, steps, dt)
    cs.append(ck.contender)
    revolved = [Revolved(u0, steps, dt, snaps) for snaps in REVOLVE_SNAPSHOTS]
    cs += [r.contender for r in revolved]
    nb = numba_versions()
    if nb is not None:
        un = u0.copy()
        cs.append(Contender("numba hand gradient", lambda: nb[1](un, steps, dt),
                            lambda: nb[0](un, steps, dt), traced=True, compiles=True,
                            extra={"idiom": "@njit, states stored (8 MB), adjoint loop"}))
    jax = peers.get("jax")
    if jax is not None:
        f = jax_version()
        uj = jax.numpy.asarray(u0)
        g = jax.jit(jax.grad(f), static_argnums=(1,))
        p = jax.jit(f, static_argnums=(1,))
        cs.append(Contender("jax (fori_loop, functional)", lambda: jax.block_until_ready(g(uj, steps, dt)),
                            lambda: jax.block_until_ready(p(uj, steps, dt)), compiles=True))
        for snaps in REVOLVE_SNAPSHOTS:
            fc = jax_checkpointed_version(snaps)
            gc = jax.jit(jax.grad(fc), static_argnums=(1,))
            pc = jax.jit(fc, static_argnums=(1,))
            cs.append(Contender(
                f"jax (scan, jax.checkpoint, {snaps} segments)",
                lambda gc=gc: jax.block_until_ready(gc(uj, steps, dt)),
                lambda pc=pc: jax.block_until_ready(pc(uj, steps, dt)), compiles=True,
                note=f"{snaps} checkpointed segments of steps//{snaps} steps: {snaps} states kept "
                     f"+ one segment's residuals while it is reversed"))
    torch = peers.get("torch")
    if torch is not None:
        ut = torch.from_numpy(u0.copy()).requires_grad_(True)

        def tp() -> object:
            with torch.no_grad():
                return torch_version(ut, steps, dt)
        cs.append(Contender("torch (loop over steps, vectorised)",
                            lambda: torch.autograd.grad(torch_version(ut, steps, dt), ut)[0], tp))
    ag = peers.get("autograd")
    if ag is not None:
        ga = ag.grad(autograd_version)
        cs.append(Contender("autograd (loop over steps, vectorised)", lambda: ga(u0, steps, dt),
                            lambda: autograd_version(u0, steps, dt), traced=True))
    cs = keep(*cs)
    size = f"n={n}, {steps} steps"
    log(f"  {KEY} {size}: {len(cs)} contenders")
    rows = measure(TITLE, KEY, size, n, cs, ref)
    ours.annotate(rows, comp, [u0.copy(), steps, dt])
    ck.annotate(rows)
    for r in revolved:
        r.annotate(rows)
    for r in rows:
        if diag is not None and comp3 is not None and r.tool == diag.tool:
            r.taped_bytes = ours.taped_bytes(comp3.jf, [u0.copy(), steps, dt])
            r.compile_s = comp3.compile_primal_s + comp3.compile_grad_s
    return rows
