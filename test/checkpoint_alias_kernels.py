"""Kernels of test_checkpoint_alias.py (compiled functions live in a file):
time loops calling an `@adpasses.checkpoint` step that takes the state and
a second array. Whether the two may share memory is decided in the
function that allocates them; the outlined segments of `snapshots=` /
`memory_limit=` must know it too."""

from __future__ import annotations

import math

import numpy as np

import adpasses


@adpasses.checkpoint
def step(u, tmp):
    """tmp is written before it is read (a scratch array), u in place."""
    for i in range(len(u)):
        tmp[i] = math.sin(u[i]) * 0.9 + 0.05 * u[i] * u[i]
    for i in range(len(u)):
        u[i] = u[i] + 0.1 * tmp[i]


@adpasses.checkpoint
def mix(u, v):
    """Both arrays read and written (neither is scratch)."""
    for i in range(len(u)):
        a = u[i]
        u[i] = math.tanh(a + 0.3 * v[i])
        v[i] = 0.5 * v[i] + 0.2 * a


def local_state_and_scratch(x, steps):
    """Two fresh local arrays: the state and a scratch array."""
    u = np.zeros(len(x))
    tmp = np.zeros(len(x))
    for i in range(len(x)):
        u[i] = x[i]
    for t in range(steps):
        step(u, tmp)
    s = 0.0
    for i in range(len(u)):
        s += u[i] * u[i]
    return s


def argument_state_and_local_scratch(u, steps):
    """The state is the argument, the scratch a local array."""
    tmp = np.zeros(len(u))
    for t in range(steps):
        step(u, tmp)
    s = 0.0
    for i in range(len(u)):
        s += math.cos(u[i]) * u[i]
    return s


def views_of_distinct_allocations(x, steps):
    """Views (made inside the loop) of two distinct local arrays, both written."""
    n = len(x)
    a = np.zeros(n + 1)
    b = np.zeros(n + 2)
    for i in range(n):
        a[i + 1] = x[i]
        b[i] = 0.5 * x[i]
    for t in range(steps):
        mix(a[1:], b[:n])
    s = 0.0
    for i in range(n):
        s += a[i + 1] * b[i] + a[i + 1]
    return s


def two_arguments(u, v, steps):
    """Two arguments: separate when the caller's arrays do not overlap."""
    for t in range(steps):
        mix(u, v)
    s = 0.0
    for i in range(len(u)):
        s += u[i] * v[i] + u[i]
    return s


def overlapping_views(x, steps):
    """Real aliasing: h and h[1:] share memory."""
    h = np.zeros(len(x) + 1)
    for i in range(len(x)):
        h[i] = x[i]
    tail = h[1:]
    for t in range(steps):
        mix(h[:len(x)], tail)
    s = 0.0
    for i in range(len(h)):
        s += h[i] * h[i]
    return s
