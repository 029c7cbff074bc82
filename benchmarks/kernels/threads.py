"""Issue 17, item 4: Python threads calling one compiled gradient.

The same work, G gradients of kernel 2 (energy, n = 10^5 per gradient,
each on data of its own, taped exponentials in the per-site workspace
pool) done by 1 Python thread and by 4 (G/4 each), timed by wall clock
(`time.perf_counter`: process CPU time would count every thread), median
of R rounds. Compiled calls release the GIL (docs/calling_convention.md),
so the 4-thread round runs on as many cores as the machine gives it.
Beside it: numba's hand-written gradient compiled with
`@njit(nogil=True)`. Each row's gradient time is the wall time per
gradient; `extra` holds the speed-up over 1 thread, the thread count, the
cores and the load average before the round (other processes share the
cores: read the speed-up against the load).
"""

from __future__ import annotations

import math
import os
import statistics
import threading
import time

import numpy as np

from benchmarks import peers
from benchmarks.harness import OPTIONS, Row, check, log

KEY = "threads"
TITLE = "Issue 17: 4 Python threads calling one compiled gradient vs 1 (wall clock)"
THREADS = 4


def energy(x):  # type: ignore[no-untyped-def]
    rho = 0.0
    for i in range(len(x)):
        rho += math.exp(-3.0 * (x[i] + 1.0))
    return rho**2 + rho**3 + rho**4 / 4


def numba_gradient():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit(nogil=True)
    def grad(x):  # type: ignore[no-untyped-def]
        n = len(x)
        e = np.empty(n)
        rho = 0.0
        for i in range(n):
            e[i] = math.exp(-3.0 * (x[i] + 1.0))
            rho += e[i]
        scale = -3.0 * (2 * rho + 3 * rho**2 + rho**3)
        g = np.empty(n)
        for i in range(n):
            g[i] = scale * e[i]
        return g

    return grad


def wall_clock(gradient, data: list[np.ndarray], threads: int) -> float:  # type: ignore[no-untyped-def]
    """Seconds for `threads` threads to compute the gradient of every array
    of `data` (thread t takes every threads-th array)."""
    barrier = threading.Barrier(threads + 1)
    errors: list[BaseException] = []

    def work(t: int) -> None:
        barrier.wait()
        try:
            for x in data[t::threads]:
                gradient(x)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
        barrier.wait()

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    barrier.wait()
    start = time.perf_counter()
    barrier.wait()
    seconds = time.perf_counter() - start
    for th in pool:
        th.join()
    if errors:
        raise errors[0]
    return seconds


def run(ctx) -> list[Row]:  # type: ignore[no-untyped-def]
    import adpasses

    n = 10**5
    count = 16 if OPTIONS.quick else 64
    rounds = 3 if OPTIONS.quick else 7
    rng = np.random.default_rng(17)
    data = [rng.uniform(-0.5, 0.5, n) for _ in range(count)]
    ours = adpasses.grad(adpasses.jit(energy))
    want = ours(data[0])
    tools = [("adpasses grad", ours)]
    numba_grad = numba_gradient()
    if numba_grad is not None:
        tools.append(("numba @njit(nogil=True) hand gradient", numba_grad))
    rows = []
    for tool, gradient in tools:
        row_of = {}
        for threads in (1, THREADS):
            row = Row(TITLE, "energy gradients", f"{count} x n=10^5", f"{tool}, {threads} thread"
                      + ("s" if threads > 1 else ""), n)
            check(row, gradient(data[0]), want)
            wall_clock(gradient, data[:THREADS], threads)  # warm: compile, workspace pools
            times, loads = [], []
            for _ in range(rounds):
                loads.append(os.getloadavg()[0])
                times.append(wall_clock(gradient, data, threads))
            row.grad_s = statistics.median(times) / count
            row.extra.update({"threads": threads, "cores": os.cpu_count(), "clock": "wall",
                              "load_average": round(statistics.median(loads), 2)})
            row_of[threads] = row
            log(f"  {KEY} {tool} {threads} threads: {row.grad_s * 1e3:.3f} ms per gradient, "
                f"load {row.extra['load_average']}")
        one, many = row_of[1], row_of[THREADS]
        many.extra["speedup_vs_1_thread"] = round(one.grad_s / many.grad_s, 2)  # type: ignore[operator]
        many.note = f"{many.extra['speedup_vs_1_thread']}x of 1 thread"
        rows += [one, many]
    return rows
