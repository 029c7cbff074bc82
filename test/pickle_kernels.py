"""Kernels that test_pickling.py sends to other processes by reference
(a module of its own: spawned workers import it, not pytest)."""

import math

import numpy as np

import adpasses


@adpasses.jit(cache=True)
def loss(w, x, y):
    """Squared error of a linear model with a tanh link, summed over rows."""
    s = 0.0
    for i in range(x.shape[0]):
        p = 0.0
        for j in range(x.shape[1]):
            p += w[j] * x[i, j]
        r = math.tanh(p) - y[i]
        s += r * r
    return s


@adpasses.jit
def scaled(a, x):
    s = 0.0
    for i in range(len(x)):
        s += a * math.sin(x[i])
    return s


def plain(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i] * x[i]
    return s


def loss_reference(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    return float(np.sum((np.tanh(x @ w) - y) ** 2))


def call(fn, *args):  # type: ignore[no-untyped-def]
    """What a worker runs: the pickled callable applied to the arguments."""
    return fn(*args)


def call_with_stats(fn, *args):  # type: ignore[no-untyped-def]
    """fn(*args), and this worker's disk cache counters and whether it
    imported xDSL."""
    import sys

    from adpasses.native import object_cache

    return fn(*args), {**object_cache.stats, "xdsl": "xdsl" in sys.modules}


@adpasses.custom_vjp
def softplus(x):
    return math.log(1.0 + math.exp(x))


def softplus_fwd(x):
    return softplus(x), x


def softplus_bwd(x, g):
    return (g / (1.0 + math.exp(-x)),)


softplus.defvjp(softplus_fwd, softplus_bwd)


@adpasses.jit
def softplus_sum(x):
    s = 0.0
    for i in range(len(x)):
        s += softplus(x[i])
    return s
