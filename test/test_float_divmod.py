"""Float `//` and `%` in compiled code equal numpy's np.floor_divide and
np.remainder (Python's float `//` and `%` where Python does not raise),
bit for bit, signs of zeros included, on numbers and in array
expressions. They were computed from the rounded quotient, floor(a / b):
`1.0 // 0.1` gave 10.0 (Python and numpy: 9.0, 0.1 being a little more
than a tenth), `1.0 % 0.1` gave 0.0 (0.09999999999999995) and
`1e300 % 1e-300` gave -inf; 162 of the 722 results of the table below
differed. Now from the exact remainder fmod (arith.remf), as CPython's
float_divmod and numpy's npy_divmod (frontend/arithmetic.py,
`float_divmod`). Gradients of `x % L` (1 in x, -floor(x / L) in L) and
`x // L` (0) are checked against central differences."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import adpasses
from finite_diff import assert_matches, finite_differences

VALUES = [1.0, 0.1, -0.1, 1e300, 1e-300, -1e-20, 5.5, -2.0, -0.0, 0.0, 7.0, 3.0, -7.5,
          float("inf"), float("-inf"), float("nan"), 2.0**53, 0.3, 1e-320]
PAIRS = list(itertools.product(VALUES, VALUES))


def floordiv(a, b):
    return a // b


def mod(a, b):
    return a % b


def arrays(x, y):
    out = np.zeros((2, len(x)))
    out[0] = x // y
    out[1] = x % y
    return out


def _numpy(a, b):
    with np.errstate(all="ignore"):
        return np.floor_divide(a, b), np.remainder(a, b)


def test_numbers_match_numpy_bit_for_bit():
    jd, jm = adpasses.jit(floordiv), adpasses.jit(mod)
    wrong = []
    for a, b in PAIRS:
        wd, wm = _numpy(a, b)
        for got, want, op in ((jd(a, b), wd, "//"), (jm(a, b), wm, "%")):
            if repr(float(got)) != repr(float(want)):
                wrong.append(f"{a!r} {op} {b!r} = {got!r}, numpy {want!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_array_expressions_match_numpy(dtype):
    with np.errstate(over="ignore"):         # 1e300 is inf in float32
        x = np.array([a for a, _ in PAIRS], dtype=dtype)
        y = np.array([b for _, b in PAIRS], dtype=dtype)
    got = adpasses.jit(arrays)(x, y)
    wd, wm = _numpy(x, y)
    for row, want in zip(got, (wd, wm)):
        want64 = want.astype(np.float64)
        same = (row == want64) | (np.isnan(row) & np.isnan(want64))
        same &= np.signbit(row) == np.signbit(want64)
        assert same.all(), [(x[k], y[k], row[k], want64[k]) for k in np.flatnonzero(~same)]


def periodic(x, L):
    s = 0.0
    for i in range(len(x)):
        w = x[i] % L
        s += w * w + x[i] // L * x[i]
    return s


def periodic_array(x, L):
    return np.sum((x % L) ** 2 + (x // L) * x)


@pytest.mark.parametrize("f", [periodic, periodic_array])
def test_gradients_of_mod_and_floordiv(f):
    rng = np.random.default_rng(11)
    x = rng.uniform(-5.0, 5.0, 16)
    L = 1.3
    jf = adpasses.jit(f)
    assert jf(x, L) == pytest.approx(f(x, L), rel=1e-14)
    gx, gL = adpasses.grad(jf, (0, 1))(x, L)
    fx, fL = finite_differences(f, [x, L], [0, 1])
    assert_matches(gx, fx, what="d/dx")
    assert_matches(gL, fL, what="d/dL")
    _, tangent = adpasses.jvp(jf, (x, L), (np.zeros_like(x), 1.0))
    assert_matches(tangent, fL, what="jvp d/dL")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_random_and_near_integer_quotients_match_numpy(dtype):
    """x / y near an integer (where the rounded quotient crosses it) and
    magnitudes across the exponent range, around the 2**52 (float32:
    2**23) quotient where the fma path hands over to fmod."""
    rng = np.random.default_rng(5)
    n = 20000
    y = (rng.uniform(0.5, 1.0, n) * 2.0 ** rng.integers(-30, 30, n) * rng.choice([-1, 1], n)).astype(dtype)
    k = rng.integers(-2**20, 2**20, n).astype(np.float64)
    k[: n // 4] = rng.uniform(0.5, 1.0, n // 4) * 2.0 ** rng.integers(20, 60, n // 4)  # huge quotients
    x = (k * y.astype(np.float64)).astype(dtype)
    ulp = np.spacing(x).astype(dtype)
    x = np.where(rng.random(n) < 0.5, x + ulp, np.where(rng.random(n) < 0.5, x - ulp, x)).astype(dtype)
    got = adpasses.jit(arrays)(x, y)
    wd, wm = _numpy(x, y)
    for row, want in zip(got, (wd, wm)):
        want64 = want.astype(np.float64)
        same = ((row == want64) & (np.signbit(row) == np.signbit(want64))) | (np.isnan(row) & np.isnan(want64))
        assert same.all(), [(x[j], y[j], row[j], want64[j]) for j in np.flatnonzero(~same)[:5]]
