"""Kernels using round, isnan/isinf/isfinite (test_frontend_numbers.py);
plain Python and numpy are the oracle."""

import math

import numpy as np


def rounded(x):
    return round(x)


def rounded_digits(x):
    return round(x, 2) + round(x, -1) + round(x, 0)


def two_digits(x):
    return round(x, 2)


def numpy_rounded(x):
    return np.round(x) + np.round(x, 1) + np.around(x, 3) + np.rint(x)


def rounded_int(n):
    return round(n) + np.round(n) + round(n, 2)


def float_tests(x):
    n = 0
    if math.isnan(x):
        n += 1
    if np.isnan(x):
        n += 2
    if math.isinf(x):
        n += 4
    if np.isinf(x):
        n += 8
    if math.isfinite(x):
        n += 16
    if np.isfinite(x):
        n += 32
    if np.isnan(3) or math.isinf(3) or not math.isfinite(True):
        n += 64
    return n


def masked_sum(x, scale):
    """Skips NaN and infinite entries; the rounding is piecewise constant."""
    s = 0.0
    for i in range(len(x)):
        if math.isfinite(x[i]):
            s += scale * x[i] * x[i] + round(scale * 10.0) * x[i] + round(x[i], 1)
    return s


def float32_tests(x):
    return math.isnan(x[0]) or np.isinf(x[1])


def int32_arithmetic(a, b, out, x32, x):
    """numpy's int32 arithmetic (issue 16): products of int32 elements wrap,
    Python ints (the loop's, literals) keep int32, an int64 makes int64, a
    float makes float64 (float32 with a numpy int too); the float result
    depends on the wrapped ints through x."""
    n = len(a)
    s = 0
    total = 0.0
    for i in range(n):
        for j in range(n):
            p = a[i] * a[j]
            q = p + 7 * i - j
            out[i * n + j] = q // 3 + q % 5 - (q << 1) + (q >> 3) + (q ^ 12345)
            s += q
            total += x[i] * float(p % 1000) - x[j] * float(q // 1000000)
    t = a[0] * b[0]
    u = -a[1] + abs(a[2]) - a[1] ** 3 + a[3] * 65536
    f = a[0] * x32[0]
    g = 3 * x32[0]
    return total + 1e-9 * (float(s) + float(t) + float(u) + f) + g


def int32_whole_arrays(a, b):
    return a * b + 1, np.sum(a), np.dot(a, b), np.max(-a)
