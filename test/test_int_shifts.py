"""`<<` and `>>` of ints by 64 or more, or by a negative count. LLVM's
shl/ashr there is poison and x86 masks the count: `1 << 64` gave 1,
`2**62 >> 100` gave 67108864, `-2**63 >> 64` gave -2**63, and a negative
count gave garbage instead of Python's ValueError (35 of the 80 cases below
differed). Now (frontend/arithmetic.py, `int_shift`): past the width `<<`
is 0 and `>>` the sign (0 or -1), as numpy's int64 and wrapping Python
ints; a negative count is `ValueError: negative shift count` with the
location for Python ints, numpy's 0 / sign for numpy ints (array
elements). Constant counts in 0..63 stay one instruction."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses

A = [1, -8, 5, 2**62, -2**63]
B = [0, 1, 3, 63, 64, 100]


def shl(a, b):
    return a << b


def shr(a, b):
    return a >> b


def elements(x, y):
    s = 0
    for i in range(len(x)):
        s += (x[i] << y[i]) - (x[i] >> y[i])
    return s


def whole(x, y):
    return np.sum((x << y) - (x >> y))


def by_constants(a):
    return (a << 3) + (a >> 2) + (a << 63)


def _wrapped(a: int) -> int:
    return (a + 2**63) % 2**64 - 2**63


@pytest.mark.parametrize("a", A)
@pytest.mark.parametrize("b", B)
def test_python_ints_wrap_past_the_width(a, b):
    assert adpasses.jit(shl)(a, b) == _wrapped(a << b)
    assert adpasses.jit(shr)(a, b) == a >> b


@pytest.mark.parametrize("f", [shl, shr])
def test_negative_count_is_pythons_value_error(f):
    with pytest.raises(ValueError, match=r"negative shift count \(at .*test_int_shifts.py:\d+:\d+\)"):
        adpasses.jit(f)(5, -1)


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("f", [elements, whole])
def test_numpy_ints_follow_numpy(f, dtype):
    x = np.array([1, -8, 5, 7, -1, 3], dtype=dtype)
    y = np.array([64, 100, -1, 2, 40, -70], dtype=dtype)
    with np.errstate(all="ignore"):
        want = f(x, y)
    assert adpasses.jit(f)(x, y) == want


def test_constant_counts():
    for a in (5, -7, 2**40):
        assert adpasses.jit(by_constants)(a) == _wrapped((a << 3) + (a >> 2) + _wrapped(a << 63))
