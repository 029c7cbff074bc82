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


class SingularError(Exception):
    pass


def raises_non_builtin(x):
    raise SingularError("singular")  # ERROR: non_builtin


def formatted_message(x):
    raise ValueError(f"bad value {x}")  # ERROR: formatted


def bare_raise(x):
    raise  # ERROR: bare_raise
