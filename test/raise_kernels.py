"""Kernels that raise and assert (test_frontend_raise.py); plain Python
is the oracle: the compiled call raises the same exception class with the
message and the Python location."""

import math

import numpy as np


def checked_norm(x, r):
    assert r > 0, "radius must be positive"  # RAISE: radius
    if len(x) == 0:
        raise ValueError("empty input")  # RAISE: empty
    s = 0.0
    for i in range(len(x)):
        if x[i] < -10.0:
            raise RuntimeError(f"value too small")  # RAISE: small
        s += x[i] * x[i] / r
    if s > 1e6:
        raise ArithmeticError  # RAISE: overflow
    else:
        y = math.sqrt(s)
    return y


def sign_or_raise(x):
    if x > 0:
        return 1.0 * x
    elif x < 0:
        return -1.0 * x
    raise ValueError("zero has no sign")  # RAISE: zero


def braces_message(x):
    """Braces and a newline in messages: the text as written, never a
    placeholder of ad.raise_if."""
    assert x < 10.0, "x < {10} }{ {{0}}"  # RAISE: braces_assert
    if x > 0.0:
        raise ValueError("bad {0} {1:shape2} {x}\nsecond line")  # RAISE: braces
    return x * x


def bare_assert(x):
    assert x == x  # RAISE: bare
    return x


def helper(t):
    if t > 5.0:
        raise OverflowError("helper got a large value")  # RAISE: helper
    return t * t


def writes_then_raises(x, out):
    """Elements written before the raise stay written, as in Python."""
    for i in range(len(x)):
        out[i] = helper(x[i])
    return out[0]


def local_arrays_then_raise(x, k):
    t = np.zeros(1000)
    s = 0.0
    for i in range(len(x)):
        u = np.ones(500)
        s += x[i] * u[i % 500] + t[i]
        if s > k:
            raise ValueError("too big")
    return s


def returned_array_then_raise(x, k):
    """`y` is handed to the caller at the return, which a stop never reaches."""
    y = np.zeros(200000)
    y[:len(x)] = x
    if np.sum(x) > k:
        raise ValueError("too big")
    return y


def returned_pair_then_index(x, k):
    y = np.exp(x) * 2.0
    z = np.zeros(200000)
    z[k] = 1.0                      # out of bounds for k >= 200000
    return y, z


def made_by_callee(n):
    return np.ones(n)


def callee_arrays_then_raise(x, k):
    """`a` is a buffer the callee handed over (freed at the end of this
    function); the second call stops inside the callee's callee."""
    a = made_by_callee(200000)
    b = returned_array_then_raise(x, k)
    return a[0] + b[0]


class SingularError(Exception):
    pass


def raises_non_builtin(x):
    raise SingularError("singular")  # ERROR: non_builtin


def formatted_message(x):
    raise ValueError(f"bad value {x}")  # ERROR: formatted


def bare_raise(x):
    raise  # ERROR: bare_raise
