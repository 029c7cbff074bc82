"""Functions returning arrays and tuples, differentiated in forward mode
(test_forward_array_results.py)."""

import numpy as np


def elementwise(x):
    return np.sin(x) * 2.0 + x * x


def column_sums(m):
    return np.sum(np.exp(m) * m, axis=0)


def row_sums(m):
    return np.sum(m * m, axis=1)


def matmul(a, b):
    return a @ b


def slices(x):
    return x[1:] * x[:-1]


def energy_forces(x, c):
    e = 0.0
    f = np.zeros_like(x)
    for i in range(len(x)):
        e += c * x[i] ** 4
        f[i] = -4.0 * c * x[i] ** 3
    return e, f


def tail(x):
    return x[1:]


def identity(x):
    return x


def with_count(x):
    out = np.zeros_like(x)
    n = 0
    for i in range(len(x)):
        out[i] = x[i] * x[i]
        if x[i] > 0:
            n += 1
    return out, n


def constant_array(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = 1.0
    return out


def doubled(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = 2.0 * x[i] * x[i]
    return out


def through_callee(x):
    y = doubled(x)
    return y, np.sum(y)


def scales_in_place(x):
    for i in range(len(x)):
        x[i] = x[i] * x[i]
    return x
