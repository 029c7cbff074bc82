"""round(x) (Python's half to even, an int), round(x, n) / np.round(x, n)
(numpy's `roundeven(x * 10**n) / 10**n`), np.rint, and
math/np isnan, isinf, isfinite on numbers (frontend/numbers.py): values
against Python and numpy, derivatives against central finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest

import adpasses
import numbers_kernels as nk
from finite_diff import assert_matches, finite_differences

rng = np.random.default_rng(1616)
TIES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 1e15 + 0.5, 0.0, -0.0, 0.49999999999999994]


@pytest.mark.parametrize("x", TIES + list(rng.uniform(-1e3, 1e3, 20)))
def test_round_is_pythons_half_to_even_and_an_int(x):
    got = adpasses.jit(nk.rounded)(x)
    assert type(got) is int and got == round(x)


def test_round_with_digits_is_numpys():
    f, g = adpasses.jit(nk.rounded_digits), adpasses.jit(nk.numpy_rounded)
    for x in [*TIES, 2.675, 1.005, -7.77, *rng.uniform(-1e4, 1e4, 200)]:
        expect = np.round(x, 2) + np.round(x, -1) + np.round(x, 0)
        assert f(x) == float(expect)
        assert g(x) == float(nk.numpy_rounded(x))
    # Python's round(x, n) rounds the exact decimal value of x: on this tie
    # (267.5 after scaling) it gives 2.67, numpy and compiled code 2.68.
    assert round(2.675, 2) == 2.67 and adpasses.jit(nk.two_digits)(2.675) == np.round(2.675, 2) == 2.68


def test_round_of_an_int_is_the_int():
    assert adpasses.jit(nk.rounded_int)(7) == nk.rounded_int(7) == 21


def test_round_of_nan_or_inf_raises_like_python():
    f = adpasses.jit(nk.rounded)
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        f(math.nan)
    with pytest.raises(OverflowError, match="cannot convert float infinity to integer"):
        f(-math.inf)


@pytest.mark.parametrize("x", [math.nan, math.inf, -math.inf, 0.0, -1e308, 5e-324, 1.5])
def test_float_tests_match_python_and_numpy(x):
    assert adpasses.jit(nk.float_tests)(x) == nk.float_tests(x)


def test_float_tests_on_float32_elements():
    f = adpasses.jit(nk.float32_tests)
    for a in ([np.nan, 1.0], [1.0, np.inf], [1.0, 2.0], [np.inf, np.nan]):
        x = np.array(a, dtype=np.float32)
        assert f(x) == nk.float32_tests(x)


def test_derivatives_through_isfinite_and_round():
    """Non-finite entries contribute nothing; rounding contributes zero
    derivative (finite differences away from the jumps agree)."""
    x = rng.uniform(-2.0, 2.0, 6)
    x[1], x[4] = np.nan, np.inf
    scale = 0.73  # round(7.3) = 7, far from a jump
    value = adpasses.jit(nk.masked_sum)(x, scale)
    assert value == pytest.approx(nk.masked_sum(x, scale), rel=1e-14)
    finite = np.isfinite(x)
    dx, ds = adpasses.grad(nk.masked_sum, argnums=(0, 1))(x, scale)
    fx, fs = finite_differences(nk.masked_sum, [x[finite].copy(), scale], (0, 1))
    assert_matches(dx[finite], fx, what="d/dx")
    assert np.all(dx[~finite] == 0.0)
    assert_matches(ds, fs, what="d/dscale")
    tx = rng.standard_normal(6)
    tx[~finite] = 0.0
    _, tangent = adpasses.jvp(nk.masked_sum, (x, scale), (tx, 0.5))
    assert_matches(tangent, float(fx @ tx[finite] + fs * 0.5), what="jvp")


@pytest.mark.parametrize("seed", range(3))
def test_int32_elements_wrap_as_numpy_does(seed):
    """Issue 16: elements of int32 arrays are np.int32, so a[i] * a[j] wraps
    to 32 bits (numpy warns and wraps), as do + - // % << >> ^ ** abs and
    negation of them with Python ints (int32's extremes included), while an
    int64 operand gives int64 and a float32 operand float64: the float
    result, the int32 array written and the gradient through the wrapped
    ints match numpy's run of the same function (the gradient also central
    finite differences)."""
    import warnings

    r = np.random.default_rng(seed)
    a = r.integers(-2**31, 2**31, 6).astype(np.int32)
    a[1], a[2] = -2**31, -2**31 + (seed == 1)
    b = np.array([2**20 + 5], dtype=np.int64)  # a[0] * b[0] leaves int32's range
    x32 = np.array([0.1], dtype=np.float32)
    x = r.uniform(-1, 1, 6)
    want_out, got_out = np.zeros(36, np.int32), np.zeros(36, np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's "overflow encountered"
        want = nk.int32_arithmetic(a, b, want_out, x32, x)
        fd = finite_differences(nk.int32_arithmetic, [a, b, want_out.copy(), x32, x], (4,))[0]
    got = adpasses.jit(nk.int32_arithmetic)(a, b, got_out, x32, x)
    assert got == want
    np.testing.assert_array_equal(got_out, want_out)
    grad = adpasses.grad(nk.int32_arithmetic, argnums=4)(a, b, got_out, x32, x)
    assert_matches(grad, fd)


def test_int32_whole_array_expressions_wrap_as_numpy_does():
    """Elementwise products of int32 arrays wrap as numpy's int32 arrays do
    (the values; the array comes back as int64), np.sum accumulates in
    int64 (numpy's default for int32), np.dot in int32."""
    import warnings

    a = np.array([2**30, 2**30 + 5, 70000, -3, -2**31], dtype=np.int32)
    b = np.array([80000, 3, 2**20, 7, -1], dtype=np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = nk.int32_whole_arrays(a, b)
    got = adpasses.jit(nk.int32_whole_arrays)(a, b)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
