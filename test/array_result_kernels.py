"""Compiled functions that return arrays and tuples (test_array_results.py)."""

import numpy as np


def doubled(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = 2.0 * x[i]
    return out


def energy_forces(x):
    e = 0.0
    f = np.zeros_like(x)
    for i in range(len(x)):
        e += x[i] ** 4
        f[i] = -4.0 * x[i] ** 3
    return e, f


def identity(x):
    return x


def tail(x):
    return x[1:]


def transposed(m):
    return m.T


def column(m, j):
    return m[:, j]


def local_view(x):
    out = np.ones_like(x)
    for i in range(len(x)):
        out[i] = x[i] + 1.0
    return out[::2]


def early(x, c):
    big = np.zeros_like(x)
    if c > 0:
        return x, 1.0
    elif c < -1.0:
        return big, 2.0
    small = np.empty(3)
    for i in range(3):
        small[i] = 7.0
    return small, 3.0


def twice(x):
    out = np.zeros_like(x)
    return out, out


def stats(x):
    lo = x[0]
    hi = x[0]
    s = 0.0
    for i in range(len(x)):
        lo = min(lo, x[i])
        hi = max(hi, x[i])
        s += x[i]
    return lo, hi, s, len(x)


def uses_stats(x):
    lo, hi, s, n = stats(x)
    return (hi - lo) * s / n


def uses_doubled(x):
    total = 0.0
    for k in range(3):
        y = doubled(x)  # the callee's buffer, freed here each iteration
        total += y[k]
    return total


def writes_through_tail(x):
    t = tail(x)  # a view of x: writing it writes x
    t[0] = 100.0
    return x[1]


def passes_result_on(x):
    y = doubled(x)
    return y


def energy_forces_caller(x):
    e, f = energy_forces(x)
    g = doubled(f)
    return e, g


def first_positive(x):
    for i in range(len(x)):
        if x[i] > 0:
            return x[i], i
    return 0.0, -1


def typed(x, n):
    a = np.zeros((n, 2), dtype=np.float32)
    b = np.ones(n, dtype=np.int64)
    c = np.zeros(n, dtype=np.int32)
    for i in range(n):
        a[i, 1] = x[i]
        b[i] = i
    return a, b, c


def big_buffer(n):
    out = np.empty(n)
    out[0] = 1.0
    return out


def uses_big_buffer(n):
    b = big_buffer(n)
    return b[0]


def out_of_bounds(x, i):
    out = np.zeros_like(x)
    out[i] = 1.0
    return out


def outer(x, y):
    m = np.empty((len(x), len(y)))
    for i in range(len(x)):
        for j in range(len(y)):
            m[i, j] = x[i] * y[j] + x[i] ** 2
    return m


def scaled(x, a):
    out = np.zeros_like(x)
    total = 0.0
    for i in range(len(x)):
        out[i] = a * x[i] * x[i]
        total += out[i]
    return out, total * a


def single_precision(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = x[i] * x[i] * 0.5
    return out


def through_callee(x, y):
    a = outer(x, y)
    b, t = scaled(x, 1.5)
    s = 0.0
    for i in range(len(x)):
        s += a[i, 0] * b[i]
    return s + t, b


def checked(x, c):
    if c < 0:
        raise ValueError("c must not be negative")
    else:
        out = np.ones_like(x)
        return out, c
