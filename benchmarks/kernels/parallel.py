"""Issue 17, item 2: parallel loops (`adpasses.prange`) on 1 and 2 threads.

Two kernels, each written with a prange loop and timed with 1 and with 2
threads (`adpasses.set_num_threads`), beside numba's `@njit(parallel=True)`
with `prange` (`numba.set_num_threads`):

- kernel 1, strided difference at n = 10^7: the primal, and the gradient
  into a preallocated shadow (`adpasses.autodiff` with `Duplicated`: the
  compiled gradient, whose forward loop and loop-local reverse are one
  parallel loop; the shadow zeroed by numpy before, like numba's), and
  `adpasses grad (allocating)`: `grad(f)(x)`, which allocates the shadow
  uninitialised and lets the gradient zero it on the pool
  (docs/parallel.md, "Result shadows zeroed on the pool"); numba: the
  primal and the hand gradient, each a prange loop;
- kernel 3's batch of small gradients (N = 10^6 rows of a 3-vector and a
  2-vector; the batch loop a prange loop calling the jitted f): primal and
  gradient (`autodiff`, one loop-local parallel loop; and `grad(f, (0, 1))`
  allocating, as for kernel 1); numba: a prange loop over the hand gradient;
- `vmap(..., parallel=True)`: per-example gradients of a logistic loss
  (B = 1000, d = 100; numba: a prange loop over the hand gradient; ours
  also with the pool's threads sleeping at once, `set_parallel_spin(0)`,
  to show what waiting actively saves) and a
  batch of 10^5 Hessians of the 3x3 neo-Hookean energy, per element;
- a prange loop whose gradient tapes a value per iteration (x[i]
  overwritten by softplus, `exp(x[i])` taped: the tape's fixed layout,
  transforms/tape_layout.py, so the forward and the reverse loop both run
  on the pool), n = 10^6, gradient by `autodiff` into preallocated
  shadows; numba: a prange loop for the sum, then a prange loop over the
  hand gradient (both restore x from a copy first: the loop writes it);
- the cost of starting a parallel loop: a small prange sum
  (`s += w[i] x[i]^2`) at n = 50 and n = 1000 per call, and under `vmap`
  (B = 1000 elements, a 50-iteration prange each) per element: loops this
  small run as one chunk on the caller (the minimum work per chunk), so the
  2-thread time is the 1-thread time; numba's prange beside it.

`ADPASSES_BENCH_PARALLEL=small,vmap,strided,batch,taped` (a comma list)
runs only those groups of rows (default: all).

Timed by wall clock (`time.perf_counter`: process CPU time would add the
threads' times), the median of R rounds, each a few calls; `extra` holds the
thread count, the cores, the load average before the rounds and the
speed-up over 1 thread. The machine's other work inflates the 2-thread
times most: read the speed-up against the load average.
"""

from __future__ import annotations

import math
import os
import statistics
import time

import numpy as np

import adpasses
from adpasses import prange
from benchmarks import ours, peers
from benchmarks.harness import OPTIONS, Row, check, fmt_time, log

KEY = "parallel"
TITLE = "Issue 17: prange loops on 1 and 2 threads (wall clock)"
THREAD_COUNTS = (1, 2)


def strided_diff(x):
    s = 0.0
    for i in prange(0, len(x) - 1, 2):
        d = x[i + 1] - x[i]
        s += d * d
    return s


def small3(v, w):
    a = 0.5 * v[0] * v[1] - 1.25 * v[2] * w[0]
    b = math.sin(v[0] + 2.0 * w[1]) + 3.0 * v[1] * v[1]
    return a * b + math.exp(0.1 * v[2]) * w[1]


def numba_versions():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None
    nprange = numba.prange

    @numba.njit(parallel=True)
    def strided(x):  # type: ignore[no-untyped-def]
        s = 0.0
        for k in nprange((len(x) - 1 + 1) // 2):
            i = 2 * k
            d = x[i + 1] - x[i]
            s += d * d
        return s

    @numba.njit(parallel=True)
    def strided_grad(x, g):  # type: ignore[no-untyped-def]
        for k in nprange((len(x) - 1 + 1) // 2):
            i = 2 * k
            d2 = 2.0 * (x[i + 1] - x[i])
            g[i + 1] += d2
            g[i] -= d2
        return g

    @numba.njit
    def f(v, w):  # type: ignore[no-untyped-def]
        a = 0.5 * v[0] * v[1] - 1.25 * v[2] * w[0]
        b = math.sin(v[0] + 2.0 * w[1]) + 3.0 * v[1] * v[1]
        return a * b + math.exp(0.1 * v[2]) * w[1]

    @numba.njit(parallel=True)
    def batch(V, W):  # type: ignore[no-untyped-def]
        s = 0.0
        for k in nprange(V.shape[0]):
            s += f(V[k], W[k])
        return s

    @numba.njit(parallel=True)
    def batch_grad(V, W, GV, GW):  # type: ignore[no-untyped-def]
        for k in nprange(V.shape[0]):
            v, w = V[k], W[k]
            a = 0.5 * v[0] * v[1] - 1.25 * v[2] * w[0]
            s = v[0] + 2.0 * w[1]
            c = math.cos(s)
            b = math.sin(s) + 3.0 * v[1] * v[1]
            e = math.exp(0.1 * v[2])
            GV[k, 0] += 0.5 * v[1] * b + a * c
            GV[k, 1] += 0.5 * v[0] * b + 6.0 * a * v[1]
            GV[k, 2] += -1.25 * w[0] * b + 0.1 * e * w[1]
            GW[k, 0] += -1.25 * v[2] * b
            GW[k, 1] += 2.0 * a * c + e
        return GV, GW

    return numba, strided, strided_grad, batch, batch_grad


def small_dot(x, w):
    s = 0.0
    for i in prange(len(x)):
        s += w[i] * x[i] * x[i]
    return s


def numba_small():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None
    nprange = numba.prange

    @numba.njit(parallel=True)
    def dot(x, w):  # type: ignore[no-untyped-def]
        s = 0.0
        for i in nprange(len(x)):
            s += w[i] * x[i] * x[i]
        return s

    @numba.njit(parallel=True)
    def dot_grad(x, w, g):  # type: ignore[no-untyped-def]
        for i in nprange(len(x)):
            g[i] += 2.0 * w[i] * x[i]
        return g

    return numba, dot, dot_grad


def small_loop_rows(rng) -> list[Row]:  # type: ignore[no-untyped-def]
    """Per-call cost of small prange loops (the pool's start cost)."""
    rows: list[Row] = []
    f = adpasses.jit(ours.fresh_copy(small_dot))
    nbs = numba_small()
    for n in (50, 1000):
        x, w = rng.uniform(-1.0, 1.0, n), rng.uniform(-1.0, 1.0, n)
        dx = np.zeros_like(x)

        def ours_grad() -> object:
            dx[:] = 0.0
            adpasses.autodiff(f, adpasses.Duplicated(x, dx), adpasses.Const(w))
            return dx
        want = 2.0 * w * x
        rows += timed_rows("small prange loop", f"n={n}", n, 1, "adpasses prange", adpasses.set_num_threads,
                           lambda: f(x, w), ours_grad, want, calls=2000)
        if nbs is not None:
            numba, dot, dot_grad = nbs
            g = np.zeros_like(x)

            def nb_grad() -> object:
                g[:] = 0.0
                return dot_grad(x, w, g)
            rows += timed_rows("small prange loop", f"n={n}", n, 1, "numba parallel=True prange",
                               numba.set_num_threads, lambda: dot(x, w), nb_grad, want, calls=2000)
    B = 1000
    X, w = rng.uniform(-1.0, 1.0, (B, 50)), rng.uniform(-1.0, 1.0, 50)
    mapped = adpasses.vmap(f, in_axes=(0, None))
    per_example = adpasses.vmap(adpasses.grad(f), in_axes=(0, None))
    rows += timed_rows("small prange loop under vmap", f"B={B}, n=50", B, B, "adpasses vmap of a prange function",
                       adpasses.set_num_threads, lambda: mapped(X, w), lambda: per_example(X, w),
                       2.0 * w * X, calls=20)
    return rows


def taped_softplus(x, w):
    s = 0.0
    for i in prange(len(x)):
        t = math.exp(x[i])
        x[i] = math.log(1.0 + t)
        s += w[i] * x[i] * t
    return s * s


def numba_taped():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None
    nprange = numba.prange

    @numba.njit(parallel=True)
    def primal(x, w):  # type: ignore[no-untyped-def]
        s = 0.0
        for i in nprange(len(x)):
            t = math.exp(x[i])
            x[i] = math.log(1.0 + t)
            s += w[i] * x[i] * t
        return s * s

    @numba.njit(parallel=True)
    def grad(x, w, gx, gw):  # type: ignore[no-untyped-def]
        s = 0.0
        for i in nprange(len(x)):
            t = math.exp(x[i])
            s += w[i] * math.log(1.0 + t) * t
        c = 2.0 * s
        for i in nprange(len(x)):
            t = math.exp(x[i])
            y = math.log(1.0 + t)
            gx[i] += c * w[i] * t * (t / (1.0 + t) + y)
            gw[i] += c * y * t
            x[i] = y
        return gx, gw

    return numba, primal, grad


def taped_rows(rng) -> list[Row]:  # type: ignore[no-untyped-def]
    """A prange loop whose gradient tapes exp(x[i]) (x[i] is overwritten),
    n = 10^6: the tape in a fixed layout, forward and reverse on the pool."""
    rows: list[Row] = []
    n = 10**6
    x0, w = rng.uniform(-1.0, 1.0, n), rng.uniform(-1.0, 1.0, n)
    x, dx, dw = x0.copy(), np.zeros(n), np.zeros(n)
    f = adpasses.jit(ours.fresh_copy(taped_softplus))

    def primal() -> object:
        x[:] = x0
        return f(x, w)

    def ours_grad() -> object:
        x[:] = x0
        dx[:] = 0.0
        dw[:] = 0.0
        adpasses.autodiff(f, adpasses.Duplicated(x, dx), adpasses.Duplicated(w, dw))
        return dx, dw
    t = np.exp(x0)
    y = np.log1p(t)
    c = 2.0 * float(np.sum(w * y * t))
    want = (c * w * t * (t / (1.0 + t) + y), c * y * t)
    rows += timed_rows("taped prange loop", "n=10^6", n, 1, "adpasses prange (tape in a fixed layout)",
                       adpasses.set_num_threads, primal, ours_grad, want)
    nb = numba_taped()
    if nb is not None:
        numba, nb_primal, nb_grad = nb
        gx, gw = np.zeros(n), np.zeros(n)

        def nb_p() -> object:
            x[:] = x0
            return nb_primal(x, w)

        def nb_g() -> object:
            x[:] = x0
            gx[:] = 0.0
            gw[:] = 0.0
            return nb_grad(x, w, gx, gw)
        rows += timed_rows("taped prange loop", "n=10^6", n, 1, "numba parallel=True prange (hand gradient)",
                           numba.set_num_threads, nb_p, nb_g, want)
    return rows


def numba_per_example():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None
    nprange = numba.prange

    @numba.njit(parallel=True)
    def losses(X, w, Y, out):  # type: ignore[no-untyped-def]
        for k in nprange(X.shape[0]):
            z = 0.0
            for i in range(X.shape[1]):
                z += X[k, i] * w[i]
            out[k] = math.log(1.0 + math.exp(-Y[k] * z))
        return out

    @numba.njit(parallel=True)
    def grads(X, w, Y, G):  # type: ignore[no-untyped-def]
        for k in nprange(X.shape[0]):
            z = 0.0
            for i in range(X.shape[1]):
                z += X[k, i] * w[i]
            e = math.exp(-Y[k] * z)
            c = -Y[k] * e / (1.0 + e)
            for i in range(X.shape[1]):
                G[k, i] = c * X[k, i]
        return G

    return numba, losses, grads


def vmap_rows(rng) -> list[Row]:  # type: ignore[no-untyped-def]
    """`vmap(..., parallel=True)`: per-example gradients (the per_example
    kernel's logistic loss, B = 1000, d = 100) and a batch of 10^5 Hessians
    of the 3x3 neo-Hookean energy, on 1 and 2 threads."""
    from benchmarks.kernels import neohookean, per_example

    rows: list[Row] = []
    B, D = per_example.B, per_example.D
    X, w = rng.normal(size=(B, D)), 0.1 * rng.normal(size=D)
    Y = np.where(rng.uniform(size=B) < 0.5, -1.0, 1.0)
    z = X @ w
    want = (-Y * np.exp(-Y * z) / (1.0 + np.exp(-Y * z)))[:, None] * X
    jf = adpasses.jit(ours.fresh_copy(per_example.loss))
    vg = adpasses.vmap(adpasses.grad(jf, 1), in_axes=(0, None, 0), parallel=True)
    vp = adpasses.vmap(jf, in_axes=(0, None, 0), parallel=True)
    rows += timed_rows("per-example gradients (vmap)", f"B={B}, d={D}", B, B,
                       "adpasses vmap(grad, parallel=True)", adpasses.set_num_threads,
                       lambda: vp(X, w, Y), lambda: vg(X, w, Y), want, calls=50)
    # The same with the pool's threads sleeping as soon as they have no
    # chunk (set_parallel_spin(0), the runtime before it waited actively):
    # the wake-ups' cost beside the row above (docs/parallel.md, "The runtime").
    from adpasses.native import runtime

    spin = runtime.get_parallel_spin()
    runtime.set_parallel_spin(0)
    try:
        rows += timed_rows("per-example gradients (vmap)", f"B={B}, d={D}", B, B,
                           "adpasses vmap(grad, parallel=True), pool threads sleeping at once (spin 0)",
                           adpasses.set_num_threads, lambda: vp(X, w, Y), lambda: vg(X, w, Y), want, calls=50)
    finally:
        runtime.set_parallel_spin(spin)
    vg1 = adpasses.vmap(adpasses.grad(jf, 1), in_axes=(0, None, 0))
    vp1 = adpasses.vmap(jf, in_axes=(0, None, 0))
    rows += timed_rows("per-example gradients (vmap)", f"B={B}, d={D}", B, B,
                       "adpasses vmap(grad), serial (parallel=False: the thread count changes nothing)",
                       adpasses.set_num_threads, lambda: vp1(X, w, Y), lambda: vg1(X, w, Y), want, calls=50)
    nb = numba_per_example()
    if nb is not None:
        numba, losses, grads = nb
        G, L = np.empty_like(X), np.empty(B)
        rows += timed_rows("per-example gradients (vmap)", f"B={B}, d={D}", B, B,
                           "numba parallel=True prange (hand gradient)", numba.set_num_threads,
                           lambda: losses(X, w, Y, L), lambda: grads(X, w, Y, G), want, calls=50)
    N = 10**5
    F = neohookean.deformation_gradients(rng, N)
    W = adpasses.jit(ours.fresh_copy(neohookean.strain_energy))
    vh = adpasses.vmap(adpasses.hessian(W), parallel=True)
    ve = adpasses.vmap(W, parallel=True)
    want_h = adpasses.vmap(adpasses.hessian(W))(F)
    rows += timed_rows("3x3 Hessian batch (vmap)", "N=10^5", N, N, "adpasses vmap(hessian, parallel=True)",
                       adpasses.set_num_threads, lambda: ve(F), lambda: vh(F), want_h, calls=2)
    return rows


def wall(fn, calls: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def timed_rows(case: str, size: str, n: int, per: int, tool: str, set_threads, primal, grad,  # type: ignore[no-untyped-def]
               want: object, calls: int = 0) -> list[Row]:
    """`calls`: calls per round (default 2, or 5 without --quick)."""
    rounds = 3 if OPTIONS.quick else 7
    calls = calls or (2 if OPTIONS.quick else 5)
    rows = {}
    for threads in THREAD_COUNTS:
        set_threads(threads)
        row = Row(TITLE, case, size, f"{tool}, {threads} thread" + ("s" if threads > 1 else ""), n)
        check(row, grad(), want)
        primal()
        loads, primals, grads = [], [], []
        for _ in range(rounds):
            loads.append(os.getloadavg()[0])
            primals.append(wall(primal, calls))
            grads.append(wall(grad, calls))
        row.primal_s = statistics.median(primals) / per
        row.grad_s = statistics.median(grads) / per
        row.extra.update({"threads": threads, "cores": os.cpu_count(), "clock": "wall",
                          "load_average": round(statistics.median(loads), 2)})
        rows[threads] = row
        log(f"  {KEY} {case} {tool} {threads} threads: primal {fmt_time(row.primal_s)}, gradient "
            f"{fmt_time(row.grad_s)} per {'call' if per == 1 else 'element'}, load {row.extra['load_average']}")
    one, two = rows[1], rows[2]
    two.extra["primal_speedup_vs_1_thread"] = round(one.primal_s / two.primal_s, 2)  # type: ignore[operator]
    two.extra["grad_speedup_vs_1_thread"] = round(one.grad_s / two.grad_s, 2)  # type: ignore[operator]
    two.note = (f"2 threads: primal {two.extra['primal_speedup_vs_1_thread']}x, gradient "
                f"{two.extra['grad_speedup_vs_1_thread']}x of 1 thread (load {two.extra['load_average']})")
    return [one, two]


def run(ctx) -> list[Row]:  # type: ignore[no-untyped-def]
    before = adpasses.get_num_threads()
    rows: list[Row] = []
    rng = np.random.default_rng(17)
    nb = numba_versions()
    groups = set(filter(None, os.environ.get("ADPASSES_BENCH_PARALLEL", "small,vmap,strided,batch,taped").split(",")))
    try:
        if "small" in groups:
            rows += small_loop_rows(rng)
        if "vmap" in groups:
            rows += vmap_rows(rng)
        if "taped" in groups:
            rows += taped_rows(rng)
        rows += _kernel_rows(rng, nb, groups)
    finally:
        adpasses.set_num_threads(before)
    return rows


def _kernel_rows(rng, nb, groups: set[str]) -> list[Row]:  # type: ignore[no-untyped-def]
    """Kernel 1 strided (n = 10^7) and kernel 3's batch (N = 10^6)."""
    rows: list[Row] = []
    if "strided" in groups:
        # kernel 1 at n = 10^7
        n = 10**7
        x = rng.uniform(-1.0, 1.0, n)
        f = adpasses.jit(ours.fresh_copy(strided_diff))
        dx = np.zeros_like(x)

        def ours_grad() -> object:
            dx[:] = 0.0
            adpasses.autodiff(f, adpasses.Duplicated(x, dx))
            return dx
        g = adpasses.grad(f)
        want = g(x)
        rows += timed_rows("strided", "n=10^7", n, 1, "adpasses prange", adpasses.set_num_threads,
                           lambda: f(x), ours_grad, want)
        # grad allocates the shadow (np.empty) and the gradient zeroes it on the pool
        rows += timed_rows("strided", "n=10^7", n, 1, "adpasses grad (allocating)", adpasses.set_num_threads,
                           lambda: f(x), lambda: g(x), want)
        if nb is not None:
            numba, strided, strided_grad, batch, batch_grad = nb
            g = np.zeros_like(x)

            def nb_grad() -> object:
                g[:] = 0.0
                return strided_grad(x, g)
            rows += timed_rows("strided", "n=10^7", n, 1, "numba parallel=True prange", numba.set_num_threads,
                               lambda: strided(x), nb_grad, want)
    if nb is not None:
        numba, strided, strided_grad, batch, batch_grad = nb
    if "batch" in groups:
        # kernel 3's batch, N = 10^6
        N = 10**6
        V, W = rng.uniform(-1.0, 1.0, (N, 3)), rng.uniform(-1.0, 1.0, (N, 2))
        jb = adpasses.jit(ours.fresh_copy(_batch))
        dV, dW = np.zeros_like(V), np.zeros_like(W)

        def ours_batch() -> object:
            dV[:] = 0.0
            dW[:] = 0.0
            adpasses.autodiff(jb, adpasses.Duplicated(V, dV), adpasses.Duplicated(W, dW))
            return dV, dW
        want3 = [a.copy() for a in ours_batch()]
        rows += timed_rows("small batch", "N=10^6", N, N, "adpasses prange", adpasses.set_num_threads,
                           lambda: jb(V, W), ours_batch, want3)
        gb = adpasses.grad(jb, (0, 1))
        rows += timed_rows("small batch", "N=10^6", N, N, "adpasses grad (allocating)", adpasses.set_num_threads,
                           lambda: jb(V, W), lambda: gb(V, W), want3)
        if nb is not None:
            GV, GW = np.zeros_like(V), np.zeros_like(W)

            def nb_batch() -> object:
                GV[:] = 0.0
                GW[:] = 0.0
                return batch_grad(V, W, GV, GW)
            rows += timed_rows("small batch", "N=10^6", N, N, "numba parallel=True prange",
                               numba.set_num_threads, lambda: batch(V, W), nb_batch, want3)
    return rows


small3_jit = adpasses.jit(small3)


def _batch(V, W):
    s = 0.0
    for k in prange(V.shape[0]):
        s += small3_jit(V[k], W[k])
    return s
