"""Per-call overhead and first-call compile time of the Python API.

    python benchmarks/api_overhead.py            # all measurements
    python benchmarks/api_overhead.py --calls    # per-call overheads only

Per-call times are the best of 5 repetitions of N calls on small inputs
(8 doubles), measured with time.perf_counter, so they are the overhead of
getting into and out of the compiled code plus a few ns of work. The first
`grad` call is measured in a fresh Python process per kernel, split into
importing adpasses + numpy, and the first call (frontend, reverse pass,
LLVM, plus the one-time imports of xDSL and llvmlite it triggers) and a
second "first call" of another kernel in the same process (compile only).
"""

from __future__ import annotations

import math
import subprocess
import sys
import time

import numpy as np

import adpasses


@adpasses.jit
def energy(x):
    rho = 0.0
    for i in range(len(x)):
        rho += math.exp(-3.0 * (x[i] + 1.0))
    return rho**2 + rho**3 + rho**4 / 4


@adpasses.jit
def strided_diff(x):
    s = 0.0
    for i in range(0, len(x) - 1, 2):
        d = x[i + 1] - x[i]
        s += d * d
    return s


@adpasses.jit
def inplace_square(x):
    for i in range(len(x)):
        x[i] = x[i] * x[i]
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


@adpasses.jit
def dot(x, y):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]
    return s


@adpasses.jit
def scalar_poly(a, b):
    return a * a * b + math.sin(b)


KERNELS = {
    "energy": (energy, lambda: (np.linspace(-0.5, 0.5, 8),)),
    "strided_diff": (strided_diff, lambda: (np.linspace(0.0, 1.0, 8),)),
    "inplace_square": (inplace_square, lambda: (np.linspace(0.0, 1.0, 8),)),
    "dot": (dot, lambda: (np.linspace(0.0, 1.0, 8), np.linspace(1.0, 2.0, 8))),
    "scalar_poly": (scalar_poly, lambda: (0.3, 0.7)),
}


def best_us(f, args, n: int = 100_000) -> float:
    f(*args)
    best = math.inf
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            f(*args)
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def per_call() -> None:
    print(f"{'kernel':15} {'empty py call':>14} {'jit call':>9} {'grad':>7} {'value_and_grad':>15} {'autodiff':>9}   (us)")
    for name, (f, make) in KERNELS.items():
        args = make()
        g, vg = adpasses.grad(f), adpasses.value_and_grad(f)
        if isinstance(args[0], np.ndarray):
            shadow = np.zeros_like(args[0])
            marked = (adpasses.Duplicated(args[0], shadow), *args[1:])
        else:
            marked = (adpasses.Active(args[0]), *args[1:])
        row = [best_us(lambda *a: None, args), best_us(f, args), best_us(g, args), best_us(vg, args),
               best_us(lambda *a: adpasses.autodiff(f, *a), marked, n=20_000)]
        print(f"{name:15} " + " ".join(f"{v:>{w}.2f}" for v, w in zip(row, (14, 9, 7, 15, 9))))


FIRST_CALL = """
import time
t0 = time.perf_counter()
import numpy as np, adpasses, sys
sys.path.insert(0, {here!r})
import api_overhead as b
t1 = time.perf_counter()
f, make = b.KERNELS[{name!r}]
adpasses.grad(f)(*make())
t2 = time.perf_counter()
f2, make2 = b.KERNELS[{other!r}]
adpasses.grad(f2)(*make2())
t3 = time.perf_counter()
print(f"{{(t1 - t0) * 1e3:.0f}} {{(t2 - t1) * 1e3:.0f}} {{(t3 - t2) * 1e3:.0f}}")
"""


def first_calls() -> None:
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    print(f"{'kernel':15} {'import':>7} {'first grad':>11} {'next kernel':>12}   (ms, fresh process)")
    names = list(KERNELS)
    for k, name in enumerate(names):
        other = names[(k + 1) % len(names)]
        out = subprocess.run([sys.executable, "-c", FIRST_CALL.format(here=here, name=name, other=other)],
                             capture_output=True, text=True, check=True).stdout.split()
        print(f"{name:15} {out[0]:>7} {out[1]:>11} {out[2]:>12}")


if __name__ == "__main__":
    per_call()
    if "--calls" not in sys.argv:
        print()
        first_calls()
