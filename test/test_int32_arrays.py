"""Whole-array expressions of int32 arrays return arrays of numpy's result
dtype (issue 16): int32 where numpy's is int32 (int32 with int32, a Python
int or a bool), int64 where numpy promotes (with an int64 array or scalar,
np.sum/np.prod/np.cumsum), with numpy's wrapped values. int arrays are
inactive: gradients through a float expression that reads them are
unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses

rng = np.random.default_rng(1630)


def product_plus_one(a, b):
    return a * b + 1


def negated(a, b):
    return -a


def absolute(a, b):
    return np.abs(a)


def floor_halved(a, b):
    return a // 2 - b


def elementwise_max(a, b):
    return np.maximum(a, b)


def elementwise_min_with_int(a, b):
    return np.minimum(a, 3)


def where_or_zero(a, b):
    return np.where(a > b, a, 0)


def clipped(a, b):
    return np.clip(a, -5, 7)


def outer_product(a, b):
    return np.outer(a, b)


def column_max(a, b):
    return np.max(np.outer(a, b), axis=0)


def full_of_element(a, b):
    return np.full((3,), a[0])


def with_a_bool(a, b):
    return a + (a > b)


def sum_of_int32(a, b):
    return np.sum(np.outer(a, b), axis=1)


def cumulative(a, b):
    return np.cumsum(a)


def product_as_float(a, b):
    return a * 0.5 + b


def int32_with_int64(a, c):
    return a * c + 1


def where_int32_or_int64(a, c):
    return np.where(a > 0, a, c)


def max_int32_int64(a, c):
    return np.maximum(a, c)


def _pair():
    """Values spanning int32's range, so that products wrap."""
    a = rng.integers(-2**31, 2**31, size=6).astype(np.int32)
    b = rng.integers(-2**31, 2**31, size=6).astype(np.int32)
    a[0], b[0] = -2**31, -1  # abs(-2**31) and -2**31 * -1 wrap to -2**31
    return a, b


INT32_FUNCTIONS = [product_plus_one, negated, absolute, floor_halved, elementwise_max, elementwise_min_with_int,
                   where_or_zero, clipped, outer_product, column_max, full_of_element, with_a_bool, sum_of_int32,
                   cumulative, product_as_float]


@pytest.mark.parametrize("fn", INT32_FUNCTIONS, ids=lambda f: f.__name__)
def test_int32_expressions_have_numpys_dtype_and_values(fn):
    a, b = _pair()
    with np.errstate(over="ignore"):
        expected = fn(a, b)
    got = adpasses.jit(fn)(a, b)
    assert isinstance(got, np.ndarray)
    assert got.dtype == expected.dtype, (fn.__name__, got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected)


def test_the_int32_functions_cover_both_result_dtypes():
    """The table above is not all int32 or all int64: a test that would pass
    with every result int64 (the old behaviour) or every one int32 fails."""
    a, b = _pair()
    with np.errstate(over="ignore"):
        dtypes = {fn(a, b).dtype for fn in INT32_FUNCTIONS}
    assert {np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float64)} <= dtypes


@pytest.mark.parametrize("fn", [int32_with_int64, where_int32_or_int64, max_int32_int64], ids=lambda f: f.__name__)
def test_int32_with_int64_is_int64(fn):
    a, _ = _pair()
    c = rng.integers(-2**40, 2**40, size=6)
    expected = fn(a, c)
    got = adpasses.jit(fn)(a, c)
    assert got.dtype == expected.dtype == np.int64
    np.testing.assert_array_equal(got, expected)


def test_int64_maximum_stays_integer():
    """np.maximum of int arrays is an int array (it was computed in float64)."""
    a = rng.integers(-2**62, 2**62, size=6)
    b = a + 1  # consecutive ints above 2**53 that float64 cannot tell apart
    got = adpasses.jit(elementwise_max)(a, b)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.maximum(a, b))


def scaled_loss(x, a):
    w = a * 3 - 1
    return np.sum(x * w)


def test_gradient_through_an_int32_expression():
    """d/dx sum(x * (3a - 1)) = 3a - 1, a read as int32 (inactive)."""
    x = rng.standard_normal(6)
    a = rng.integers(-100, 100, size=6).astype(np.int32)
    g = adpasses.grad(scaled_loss)(x, a)
    np.testing.assert_allclose(g, (a * 3 - 1).astype(np.float64), rtol=0, atol=1e-12)
    assert scaled_loss(x, a) == pytest.approx(adpasses.jit(scaled_loss)(x, a))


def floor_of(a):
    return np.floor(a)


def ceil_of_twice(a):
    return np.ceil(a * 2)


def trunc_plus_one(a):
    return np.trunc(a) + 1


def floor_of_mask(a):
    return np.floor(a > 0)


def floor_then_write(a):
    b = np.floor(a)
    b[0] = 99
    return b


def floor_of_half(a):
    return np.floor(a * 0.5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("fn", [floor_of, ceil_of_twice, trunc_plus_one, floor_of_mask, floor_then_write,
                                floor_of_half], ids=lambda f: f.__name__)
def test_floor_ceil_trunc_of_ints_follow_the_installed_numpy(fn, dtype):
    """numpy 2.4's np.floor/ceil/trunc of an int (bool) array is that array's
    dtype (older numpy: float64); compiled code follows the numpy it runs with,
    and its result is a new array (writing it leaves the argument alone)."""
    a = (rng.integers(-2**20, 2**20, size=7) * 3).astype(dtype)
    a[1] = 2**31 - 1 if dtype == np.int32 else a[1]  # doubled, wraps in int32
    ref_arg, arg = a.copy(), a.copy()
    with np.errstate(over="ignore"):
        expected = fn(ref_arg)
    got = adpasses.jit(fn)(arg)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(arg, ref_arg)


def floored_product(a):
    return np.floor(a[0]) * np.floor(a[1])


def test_floor_of_an_int32_element_is_an_int32():
    """np.floor(np.int32) is an np.int32 (numpy 2.4): the product of two wraps
    to 32 bits, and is an int, not a float64."""
    a = np.array([2**30 + 3, 5], dtype=np.int32)
    with np.errstate(over="ignore"):
        expected = floored_product(a)
    got = adpasses.jit(floored_product)(a)
    assert np.floor(np.int32(3)).dtype == np.int32  # the installed numpy's rule this test is about
    assert type(got) is type(expected) is np.int32 and got == expected  # returned as Python returns it


def floored_loss(x, a):
    return np.sum(np.floor(a) * x * x) + np.sum(np.floor(x))


def test_gradient_with_floor_of_an_int_array():
    """d/dx [sum(floor(a) x^2) + sum(floor(x))] = 2 floor(a) x (floor of
    floats is piecewise constant: derivative 0)."""
    x = rng.standard_normal(5)
    a = rng.integers(-9, 9, size=5).astype(np.int32)
    g = adpasses.grad(floored_loss)(x, a)
    np.testing.assert_allclose(g, 2 * a * x, rtol=1e-12, atol=1e-12)


def times_np_int64(a, b):
    return a * np.int64(2) + 1


def element_times_np_int64(a, b):
    return a[1] * np.int64(3)


def element_times_int(a, b):
    return a[1] * int(3)


def test_an_np_int64_makes_int32_arithmetic_int64():
    """np.int64(k) is a numpy int64 (NEP 50: strong), so `a * np.int64(2)`
    of an int32 array is int64 and does not wrap; int(k) is a Python int
    (weak) and keeps int32."""
    a = np.array([2**31 - 1, -2**31, 7], dtype=np.int32)
    expected = times_np_int64(a, a)
    got = adpasses.jit(times_np_int64)(a, a)
    assert got.dtype == expected.dtype == np.int64
    np.testing.assert_array_equal(got, expected)
    assert adpasses.jit(element_times_np_int64)(a, a) == element_times_np_int64(a, a) == -2**31 * 3
    with np.errstate(over="ignore"):
        assert adpasses.jit(element_times_int)(a, a) == element_times_int(a, a) == -2**31 * 3 + 2**32
