"""Kernels of the parallel-loop tests (test_parallel.py, safety tests):
a module of their own, so the frontend reads their source."""

import math

import numpy as np

import adpasses
from adpasses import prange


@adpasses.jit
def scale_sum(x, y):
    s = 0.0
    for i in prange(len(x)):
        y[i] = 2.0 * x[i]
        s += x[i]
    return s


def serial_sum(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


@adpasses.jit
def loss(x, w):
    s = 0.0
    for i in prange(len(x)):
        s += w[i] * math.sin(x[i]) * x[i]
    return s


@adpasses.jit
def loss_squared(x, w):
    """The sum is used after the loop: the reverse is a loop of its own
    (not loop-local), marked parallel too."""
    s = 0.0
    for i in prange(len(x)):
        s += w[i] * x[i] * x[i]
    return s * s


@adpasses.jit
def gather(x, idx, w):
    """Iterations read x[idx[i]]: their shadow accumulations dx[idx[i]] may
    collide, so the reverse must not run in parallel."""
    s = 0.0
    for i in prange(len(idx)):
        s += w[i] * x[idx[i]] * x[idx[i]]
    return s * s


@adpasses.jit
def shared_weight(x, w):
    """Every iteration reads w[0]: every iteration of the reverse adds
    into dw[0] (carried as a sum, so the reverse may run in parallel)."""
    s = 0.0
    for i in prange(len(x)):
        s += w[0] * x[i] * x[i]
    return s * s


@adpasses.jit
def scaled(x, a):
    """A float read by every iteration: in the loop-local reverse its
    adjoint is summed in a slot every iteration writes."""
    s = 0.0
    for i in prange(len(x)):
        s += a * x[i] * x[i]
    return s


@adpasses.jit
def rows(X, out):
    """Rows independent, a dependence inside each row."""
    for i in prange(X.shape[0]):
        acc = 0.0
        for j in range(X.shape[1]):
            acc = acc * 0.5 + X[i, j]
            out[i, j] = acc


@adpasses.jit
def rows_energy(X):
    s = 0.0
    for i in prange(X.shape[0]):
        acc = 0.0
        for j in range(X.shape[1]):
            acc = acc * 0.5 + math.exp(X[i, j])
        s += acc * acc
    return s


@adpasses.jit
def count_positive(x):
    n = 0
    for i in prange(len(x)):
        n += 1 if x[i] > 0.0 else 0
    return n


@adpasses.jit
def write_out_of_bounds(x, y):
    for i in prange(len(x)):
        y[i] = x[i] + 1.0


# -- loops that must not run in parallel -------------------------------------------


def dependent_memory(x):
    for i in prange(1, len(x)):
        x[i] = x[i] * x[i - 1]


def dependent_view(x):
    y = x[1:]
    for i in prange(len(y)):
        x[i] = y[i] * 2.0


@adpasses.jit
def write_next(x, i):
    x[i + 1] = x[i + 1] + x[i]


def dependent_call(x):
    for i in prange(len(x) - 1):
        write_next(x, i)


def shared_accumulator(x, acc):
    for i in prange(len(x)):
        acc[0] = acc[0] * 0.5 + x[i]


def product_reduction(x):
    p = 1.0
    for i in prange(len(x)):
        p *= x[i]
    return p


def prints(x):
    for i in prange(len(x)):
        print(x[i])


def auto_dependent(x):
    for i in range(1, len(x)):
        x[i] = x[i] + x[i - 1]
    return x[len(x) - 1]


def auto_independent(x, y):
    s = 0.0
    for i in range(len(x)):
        y[i] = x[i] * x[i]
        s += y[i]
    return s


def prange_as_value(x):
    r = prange(3)  # not a loop's iterable
    return x[0]


def prange_in_enumerate(x):
    s = 0.0
    for i, v in enumerate(prange(3)):
        s += x[i]
    return s


def prange_continue(x):
    s = 0.0
    for i in prange(len(x)):
        if x[i] > 0.5:
            continue
        s += x[i]
    return s


def prange_return(x):
    s = 0.0
    for i in prange(len(x)):
        if x[i] > 0.5:
            return s
        s += x[i]
    return s
