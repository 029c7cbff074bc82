"""Kernels of test_revolve.py (compiled functions live in a file).

`tick` is a C-callable counter (ctypes): each step of `counted` calls it
once, so COUNT[0] is the number of times a step ran forward, untaped
(advances) or taped (its rerun inside the step's gradient) alike."""

from __future__ import annotations

import ctypes
import math

import numpy as np

import adpasses

COUNT = [0]


def _tick(t):  # type: ignore[no-untyped-def]
    COUNT[0] += 1
    return 0.0


_tick_c = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_int64)(_tick)
tick = adpasses.extern(_tick_c, "double(int64)")


def counted(u, w, steps):
    """In-place array state u, a carried scalar s, a read-only array w."""
    s = 0.25
    for t in range(steps):
        c = tick(t)
        for i in range(len(u)):
            u[i] = math.sin(u[i] + s * w[i]) * 0.9 + 0.01 * c
        s = math.tanh(s + u[t % len(u)])
    return s * s + u[0] * u[1]


def counted_plain(u, w, steps):
    """`counted` without the counter (finite differences run it in Python)."""
    s = 0.25
    for t in range(steps):
        for i in range(len(u)):
            u[i] = math.sin(u[i] + s * w[i]) * 0.9
        s = math.tanh(s + u[t % len(u)])
    return s * s + u[0] * u[1]


def euler(u, steps, dt):
    """The Euler benchmark's time loop (benchmarks/kernels/euler.py: u overwritten in place, du
    scratch of each step), ending in sum sin(u) u instead of sum u^2 so the final adjoint is not linear."""
    n = len(u)
    du = np.zeros(n)
    for t in range(steps):
        for i in range(1, n):
            du[i] = -u[i] ** 3 + 0.1 * u[i - 1]
        for i in range(1, n):
            u[i] = u[i] + dt * du[i]
    s = 0.0
    for i in range(n):
        s += math.sin(u[i]) * u[i]
    return s


def scalar_state(w, steps, a):
    """Carried scalars only (two of them, one an int), an active scalar a used by every step."""
    s = 0.3
    k = 0
    for t in range(steps):
        s = math.tanh(s * w[t % len(w)] + a) + 0.1 * s
        k = k + 1
    return s * s + 0.01 * k


def strided(u, steps):
    s = 1.0
    for t in range(1, steps, 3):
        for i in range(len(u)):
            u[i] = u[i] * 0.9 + 0.01 * t * math.cos(u[i])
        s = s * 0.99 + u[t % len(u)]
    return s


@adpasses.checkpoint
def smooth(a, b):
    for i in range(len(b)):
        b[i] = 0.5 * (a[i] + b[i]) + math.sin(a[i])


def checkpoint_with_a_view(x):
    h = np.zeros(len(x) + 1)
    for i in range(len(x)):
        h[i] = x[i]
    tail = h[1:]
    smooth(h, tail)
    s = 0.0
    for i in range(len(h)):
        s += h[i] * h[i]
    return s


def nested_time_loops(u, outer, inner):
    """A time loop inside a time loop (the outer one is reversed by revolve,
    the inner one is part of its step), an accumulated scalar."""
    acc = 0.0
    for k in range(outer):
        for t in range(inner):
            for i in range(len(u)):
                u[i] = math.sin(u[i] + 0.1 * k) * 0.9 + 0.05 * t
        for i in range(len(u)):
            acc = acc * 0.5 + u[i] * u[i]
    return acc


def slice_copy_state(x, w, steps):
    """The state h and its view h[:] both used in the loop (`h[:] = h2`)."""
    h = np.zeros(len(x))
    h2 = np.zeros(len(x))
    h[:] = x
    for t in range(steps):
        for i in range(len(h2)):
            h2[i] = math.sin(h[i] * w[i]) + 0.5 * h[i]
        h[:] = h2
    s = 0.0
    for i in range(len(h)):
        s += h[i] * h[i]
    return s
