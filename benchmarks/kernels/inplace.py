"""Kernel 5: mutation: square an array in place, then sum it (n = 10^5).

    for i: x[i] = x[i] * x[i];   f = sum_i x[i]      df/dx0 = 2 x0

The reverse sweep needs the values x had before they were overwritten:
exactly n doubles are taped (the cache report says so). The timed calls
overwrite their input; they run on arrays of +-1, which squaring leaves at
1, so every call does the same work (the first call, checked for
correctness, runs on fresh values). Peers: a numba @njit hand gradient
(2 x computed before squaring, one loop), JAX written functionally
(sum(x * x): JAX arrays are immutable), PyTorch with in-place ops
(y = x.clone(); y.pow_(2); y.sum()), autograd functionally. Loop style at
small n: PyTorch `y[i] = v * v` on a clone (each element read must be
cloned, or autograd rejects the in-place write), JAX `x = x.at[i].set(...)`.
"""

from __future__ import annotations

import numpy as np

from benchmarks import ours, peers
from benchmarks.common import autograd_contender, jax_contender, keep
from benchmarks.harness import OPTIONS, Contender, log, measure, size_label
from benchmarks.kernels import loopstyle

KEY = "inplace"
TITLE = "5. in-place square then sum (mutation)"


def square_then_sum(x):
    for i in range(len(x)):
        x[i] = x[i] * x[i]
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


def numba_versions():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit
    def primal(x):  # type: ignore[no-untyped-def]
        for i in range(len(x)):
            x[i] = x[i] * x[i]
        s = 0.0
        for i in range(len(x)):
            s += x[i]
        return s

    @numba.njit
    def grad(x):  # type: ignore[no-untyped-def]
        g = np.empty_like(x)
        for i in range(len(x)):
            g[i] = 2.0 * x[i]
            x[i] = x[i] * x[i]
        return g

    return primal, grad


def functional(x):  # type: ignore[no-untyped-def]
    return (x * x).sum()


def jax_loop(x):  # type: ignore[no-untyped-def]
    for i in range(len(x)):
        x = x.at[i].set(x[i] * x[i])
    s = 0.0
    for i in range(len(x)):
        s = s + x[i]
    return s


def torch_loop(x):  # type: ignore[no-untyped-def]
    y = x.clone()
    for i in range(len(y)):
        v = y[i].clone()
        y[i] = v * v
    s = 0.0
    for i in range(len(y)):
        s = s + y[i]
    return s


def torch_inplace(x):  # type: ignore[no-untyped-def]
    y = x.clone()
    y.pow_(2)
    return y.sum()


def signs(rng, n: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.where(rng.random(n) < 0.5, -1.0, 1.0)


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(5)
    n = 10**4 if OPTIONS.quick else 10**5
    x0 = rng.uniform(-1.0, 1.0, n)
    comp = ours.compile_ours(square_then_sum, [x0.copy()], copy_args=lambda: [x0.copy()])
    ref = ours.reference(comp, [x0.copy()])[0]
    # each contender its own array: the first (checked) call sees x0, later
    # calls see ones
    xa, xr = x0.copy(), x0.copy()
    cs = ours.contenders(comp, [xa])
    raw = ours.contenders(comp, [xr])[1]
    cs[1] = raw
    # diagnostic: the same gradient compiled without bounds checks (the
    # checks on shadow accesses keep the reverse loops scalar)
    xb = x0.copy()
    unchecked = ours.build_variant(square_then_sum, [xb], (0,), boundscheck=False)
    ub_call, ub_shadows = unchecked.closure([xb])
    cs.append(Contender("adpasses raw, boundscheck=False (diagnostic)", ub_call,
                        lambda: unchecked.primal(xb),
                        extract=lambda out: ours.gradient_of(out, (0,), unchecked.acts, ub_shadows),
                        note="compile_module(..., boundscheck=False)", memory=False))
    nb = numba_versions()
    if nb is not None:
        xn = x0.copy()
        cs.append(Contender("numba hand gradient", lambda: nb[1](xn), lambda: nb[0](xn), traced=True,
                            compiles=True, extra={"idiom": "@njit, 2x before squaring in place"}))
    torch = peers.get("torch")
    cs += keep(jax_contender("jax (functional)", functional, [x0]))
    if torch is not None:
        xt = torch.from_numpy(x0.copy()).requires_grad_(True)

        def torch_primal() -> object:
            with torch.no_grad():
                return torch_inplace(xt)
        cs.append(Contender("torch (in-place ops)", lambda: torch.autograd.grad(torch_inplace(xt), xt)[0],
                            torch_primal, extra={"idiom": "y = x.clone(); y.pow_(2); y.sum()"}))
    cs += keep(autograd_contender("autograd (functional)", functional, [x0]))
    # after the checked first calls, the mutating contenders run on +-1
    log(f"  {KEY} {size_label(n)}: {len(cs)} contenders")
    rows = measure(TITLE, KEY, size_label(n), n, cs, ref, reset=lambda: _to_signs(rng, xa, xr, xb, *(
        [xn] if nb is not None else [])))
    ours.annotate(rows, comp, [x0.copy()])
    for r in rows:
        if r.tool.startswith(("adpasses", "numba")):
            r.note = (r.note + "; " if r.note else "") + "timed on +-1 (squaring leaves them at 1)"
    rows += loopstyle.run(TITLE, KEY, square_then_sum, lambda m: [signs(rng, m)],
                          [100, 1000] if not OPTIONS.quick else [100], comp,
                          fns={"jax": jax_loop, "torch": torch_loop},
                          skip={"autograd": "autograd arrays do not support item assignment"})
    return rows


def _to_signs(rng, *arrays: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    for a in arrays:
        a[...] = signs(rng, len(a))
