"""Boolean arrays in the array language (frontend/array_exprs.py): masks
from comparisons combined with & | ^ ~ and np.logical_*, np.where over
them, np.any/np.all/np.count_nonzero (and .any()/.all(), axis=), and
np.isnan/isinf/isfinite of arrays; values against numpy, derivatives
through masks against finite differences, and the located errors for what
numpy itself rejects or what compiled code does not make (a chained
comparison of arrays, `not x`, ~ of a float array, x[mask])."""

from __future__ import annotations

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

import adpasses
from adpasses.core.diagnostics import CompileError


def where_and(x, y):
    return np.sum(np.where((x > 0) & (y < 1), x * y, np.sin(x)))


def where_or_not(x, y):
    return np.sum(np.where((x > 0) | ~(y < 1), x * x, y) + np.where(np.logical_not(x > 0.5), x, 0.0))


def where_logical(x, y):
    inside = np.logical_and(x > -0.5, np.logical_or(y > 0.2, np.logical_xor(x > 0, y > 0)))
    return np.sum(np.where(inside, np.exp(x), y * y))


def masked_mean(x, y):
    m = (x > 0) ^ (y > 0)
    return np.sum(np.where(m, x, 0.0)) / max(np.count_nonzero(m), 1) + np.sum(x * m)


def nan_safe(x, y):
    return np.sum(np.where(np.isnan(x), 0.0, x * y)) + np.sum(np.where(np.isfinite(y), y, 1.0))


def truth_tests(x, y):
    return (np.any(np.isnan(x)), np.all(np.isfinite(y)), np.count_nonzero(x > 0), (x > 0).any(),
            (y > 5).all(), np.any(np.isinf(x)), float(np.sum(~np.isfinite(x))))


def truth_tests_axis(m):
    return (np.any(m > 0.5, axis=0), np.all(m > 0.0, axis=1), np.count_nonzero(m > 0.5, axis=-1),
            np.sum(np.isnan(m), axis=0))


SMOOTH = [where_and, where_or_not, where_logical, masked_mean, nan_safe]


@pytest.mark.parametrize("f", SMOOTH, ids=lambda f: f.__name__)
@pytest.mark.parametrize("seed", range(3))
def test_values_and_gradients_through_masks(f, seed: int) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(300 + seed)
    x, y = rng.uniform(-1.5, 1.5, 9), rng.uniform(-1.5, 1.5, 9)
    # keep the points away from the masks' edges, where f jumps
    for v in (x, y):
        v[np.abs(v) < 0.05] += 0.2
        v[np.abs(v - 0.5) < 0.05] += 0.2
        v[np.abs(v - 0.2) < 0.05] += 0.2
        v[np.abs(v - 1.0) < 0.05] += 0.2
        v[np.abs(v + 0.5) < 0.05] += 0.2
    assert adpasses.jit(f)(x, y) == pytest.approx(f(x, y), rel=1e-13, abs=1e-14)
    gx, gy = adpasses.grad(f, (0, 1))(x, y)
    fx, fy = finite_differences(f, [x, y], [0, 1])
    assert_matches(gx, fx, what=f"{f.__name__} d/dx")
    assert_matches(gy, fy, what=f"{f.__name__} d/dy")


def test_nan_inputs_are_masked_like_numpy() -> None:
    x = np.array([0.5, np.nan, -2.0, np.inf])
    y = np.array([1.0, 2.0, np.inf, 3.0])
    with np.errstate(invalid="ignore"):
        assert adpasses.jit(nan_safe)(x[:3], y[:3]) == nan_safe(x[:3], y[:3])
    for xs, ys in ((x, y), (np.ones(3), np.ones(3)), (np.array([-1.0, np.nan]), np.array([6.0, np.nan]))):
        assert adpasses.jit(truth_tests)(xs, ys) == tuple(v.item() for v in np.broadcast_arrays(*truth_tests(xs, ys)))


def test_reductions_along_an_axis_match_numpy() -> None:
    m = np.random.default_rng(7).uniform(-0.5, 1.0, (3, 4))
    m[1, 2] = np.nan
    for got, want in zip(adpasses.jit(truth_tests_axis)(m), truth_tests_axis(m)):
        assert got.dtype == want.dtype or (got.dtype.kind, want.dtype.kind) == ("i", "i")
        np.testing.assert_array_equal(got, want)


def chained(x):
    return np.sum(np.where(0 < x < 1, x, 0.0))


def chained_left(x):
    return np.sum(np.where(x < 1 <= x, x, 0.0))


def not_array(x):
    return np.sum(np.where(not x, 1.0, 0.0))


def invert_float(x):
    return np.sum(~x)


def mask_read(x):
    return np.sum(x[x > 0])


def bool_subtract(x):
    return np.sum((x > 0) - (x > 1))


def mask_store(x):
    x[x > 0] = 0.0
    return np.sum(x)


def bool_negative(x):
    return np.sum(np.where(-(x > 0), 1.0, 0.0))


@pytest.mark.parametrize("f, words", [
    (chained, "write the elementwise (0 < x) & (x < 1)"),
    (chained_left, "write the elementwise (x < 1) & (1 <= x)"),
    (not_array, "`not x` of an array raises in numpy; write ~mask or np.logical_not(x)"),
    (invert_float, "~ of an array is supported on bool arrays"),
    (mask_read, "np.where(mask, x, 0.0)"),
    (mask_store, "np.where(mask, x, 0.0)"),
    (bool_subtract, "numpy boolean subtract, the `-` operator, is not supported"),
    (bool_negative, "numpy boolean negative, the `-` operator, is not supported on bool arrays"),
], ids=lambda v: getattr(v, "__name__", "words"))
def test_what_stays_outside_is_a_located_error(f, words: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CompileError) as err:
        adpasses.jit(f)(np.linspace(-1.0, 2.0, 5))
    text = str(err.value)
    assert words in text, text
    assert f"test_array_masks.py:{f.__code__.co_firstlineno + 1}:" in text, text


def extrema(x):
    return np.max(x), np.min(x), x.max(axis=0), np.min(x, axis=-1)


@pytest.mark.parametrize("where", [None, (0, 0), (1, 2), (2, 3)])
def test_max_and_min_reductions_propagate_nan_like_numpy(where) -> None:  # type: ignore[no-untyped-def]
    """A max/min reduction steps with a compare and a select (the reverse
    sweep tapes one bit per element); a NaN anywhere, first or last,
    makes the result NaN as numpy's does."""
    x = np.random.default_rng(5).normal(size=(3, 4))
    if where is not None:
        x[where] = np.nan
    for got, want in zip(adpasses.jit(extrema)(x), extrema(x)):
        np.testing.assert_array_equal(got, want)


def combined_masks(x, y):
    return (x > 0) & (y < 1), (x > 0) | (y < 1), (x > 0) ^ (y < 1), np.logical_and(x > 0, y < 1)


def combined_elements(x, y):
    return (x[0] > 0) & (y[0] < 1), (x[1] > 0) ^ (y[1] < 1)


def test_combined_masks_are_bool_arrays_like_numpy() -> None:
    """& | ^ of two bool arrays (and of two bools) give bools, as in numpy
    and Python: they used to give int64 arrays of 0 and 1 (ints)."""
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-1, 2, 8), rng.uniform(-1, 2, 8)
    for got, want in zip(adpasses.jit(combined_masks)(x, y), combined_masks(x, y)):
        assert got.dtype == np.bool_ and np.array_equal(got, want)
    got, want = adpasses.jit(combined_elements)(x, y), combined_elements(x, y)
    # Python gives numpy's bools here (x[0] > 0 is np.bool_), and so does jit
    assert got == want and [type(v) for v in got] == [type(v) for v in want] == [np.bool_, np.bool_]
