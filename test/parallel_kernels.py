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


# -- rows, inner-loop sums, conditional sums (issue 17) --------------------------------


@adpasses.jit
def row_sums(X, out):
    """A row reduction: np.sum's 0-d result is a stack buffer of each iteration."""
    for i in prange(X.shape[0]):
        out[i] = np.sum(X[i, :])


@adpasses.jit
def row_matvec(A, X, out):
    """A @ X[i, :]: a matrix-vector product per row (BLAS reads the row)."""
    s = 0.0
    for i in prange(X.shape[0]):
        v = A @ X[i, :]
        out[i] = v[0]
        s += v[0] * v[1]
    return s


@adpasses.jit
def row_store(X, Y):
    """Y[i, :] = ...: each iteration writes its own row."""
    for i in prange(X.shape[0]):
        Y[i, :] = np.sin(X[i, :]) * X[i, 0]


@adpasses.jit
def inner_loop_sum(X):
    """s accumulated inside a serial inner loop of the prange body."""
    s = 0.0
    for i in prange(X.shape[0]):
        for j in range(X.shape[1]):
            s += math.sin(X[i, j]) * X[i, j]
    return s


@adpasses.jit
def inner_loop_sum_squared(X):
    """The same, the sum used after the loop (a separate reverse loop)."""
    s = 0.0
    for i in prange(X.shape[0]):
        for j in range(X.shape[1]):
            s += math.sin(X[i, j]) * X[i, j]
    return s * s


@adpasses.jit
def conditional_sum(x):
    s = 0.0
    for i in prange(len(x)):
        if x[i] > 0.0:
            s += x[i] * x[i]
        elif x[i] < -1.0:
            s -= math.sin(x[i])
    return s * s


@adpasses.jit
def private_inner_sum(X):
    """An inner loop's sum private to the iteration, then summed."""
    s = 0.0
    for i in prange(X.shape[0]):
        t = 0.0
        for j in range(X.shape[1]):
            t += X[i, j] * X[i, j]
        s += math.sqrt(t)
    return s


def serial_inner_loop_sum(X):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            s += math.sin(X[i, j]) * X[i, j]
    return s


def next_row_read(X):
    for i in prange(X.shape[0] - 1):
        X[i, :] = X[i + 1, :] * 2.0


def conditional_reset(x):
    s = 0.0
    for i in prange(len(x)):
        if x[i] > 0.0:
            s = 0.0
        s += x[i]
    return s


def partial_sum_read(x, y):
    s = 0.0
    for i in prange(len(x)):
        s += x[i]
        y[i] = s
    return s


def inner_partial_sum_read(X, Y):
    s = 0.0
    for i in prange(X.shape[0]):
        for j in range(X.shape[1]):
            s += X[i, j]
            Y[i, j] = s
    return s


def conditional_on_sum(x):
    s = 0.0
    for i in prange(len(x)):
        if s < 10.0:
            s += x[i]
    return s


@adpasses.jit
def gather_sum(x, idx, w):
    """The sum returned as it is: the reverse is loop-local, inside the
    forward loop, and adds into dx[idx[i]] (private copies per chunk)."""
    s = 0.0
    for i in prange(len(idx)):
        s += w[i] * math.sin(x[idx[i]])
    return s


@adpasses.jit
def row_energy(X, out):
    """np.sum(X[i, :] * X[i, :]): a broadcast view of each row (its shadow
    made from dX's own layout) and a 0-d buffer per iteration."""
    s = 0.0
    for i in prange(X.shape[0]):
        r = np.sum(X[i, :] * X[i, :])
        out[i] = r
        s += math.sin(r)
    return s


@adpasses.jit
def copy_with_dead_sum(x, y):
    """The sum is never used (ad-parallelize drops it: test_dead_carried.py);
    x[i + 1], read only by the sum, is still bounds-checked."""
    s = 0.0
    for i in prange(len(y)):
        y[i] = x[i]
        s += x[i + 1]
