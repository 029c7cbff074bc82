"""Kernels for the generated-code safety tests (allocation sizes, trip
counts, integer conversions): jitted functions must live in a file, and the
isolated-process tests import them from here."""

import math

import numpy as np

import adpasses


@adpasses.jit
def loop_n(x, n):
    """A loop that tapes one value per iteration (capacity n)."""
    s = 1.0
    for i in range(n):
        e = math.exp(x[i])
        s = s * e + e
    return s


@adpasses.jit
def nested_tape(x, n, m):
    """Two nested loops that tape: capacity n * m."""
    s = 1.0
    for i in range(n):
        for j in range(m):
            e = math.exp(x[i] * x[j])
            s = s * e + e
    return s


@adpasses.jit
def local_rw(n, j):
    z = np.zeros(n)
    z[0] = 1.0
    return z[j]


@adpasses.jit
def local2d_rw(n, m, k, j, v):
    z = np.empty((n, m))
    z[k, 0] = v
    return z[j, 0]


@adpasses.jit
def local_scaled(x, n):
    """A local array in a differentiated function (its shadow is allocated
    too): sum of x[i] * z[i] with z = ones(n)."""
    z = np.ones(n)
    s = 0.0
    for i in range(len(x)):
        s += x[i] * z[i]
    return s


@adpasses.jit(boundscheck=False)
def local_rw_unchecked(n, j):
    z = np.zeros(n)
    z[0] = 1.0
    return z[j]


@adpasses.jit
def count_range(a, b, s, k):
    """Iterations of range(a, b, s), stopping after k."""
    c = 0
    for i in range(a, b, s):
        if c >= k:
            break
        c += 1
    return c


@adpasses.jit
def count_big_step(a, b):
    """range with a constant step of 2**62: i + step overflows near the end."""
    c = 0
    for i in range(a, b, 4611686018427387904):
        c += 1
    return c


@adpasses.jit
def count_down(a, b):
    c = 0
    for i in range(a, b, -3):
        c += 1
    return c


@adpasses.jit
def to_int(v):
    return int(v)


@adpasses.jit
def to_int_unchecked_value(v):
    return float(int(v))


@adpasses.jit(boundscheck=False)
def to_int_unchecked(v):
    return int(v)


@adpasses.jit
def floor_int(v):
    return math.floor(v)


@adpasses.jit
def sum_ints(x):
    """An int()-heavy loop (the cost of the conversion check)."""
    s = 0
    for i in range(len(x)):
        s += int(x[i])
    return s


@adpasses.jit(boundscheck=False)
def sum_ints_unchecked(x):
    s = 0
    for i in range(len(x)):
        s += int(x[i])
    return s


@adpasses.jit
def big_pow(x, n):
    return x ** n


@adpasses.jit
def big_pow_literal(x):
    return x ** 4294967297


@adpasses.jit
def power_sum(x, n):
    s = 0.0
    for i in range(len(x)):
        s += x[i] ** n
    return s
