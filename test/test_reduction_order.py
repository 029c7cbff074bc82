"""Reductions over a leading axis walk their input row by row
(`ad-lower-linalg`: rows outside, columns inside, the outputs accumulating
in memory), chosen from the layout: the identity layout at compile time,
strided views (slices, `x.T`, broadcasts) when the call runs. Each case:
the values equal numpy's (bit for bit for sums: each output's terms are
added in the same order), and gradients match central finite differences
on random inputs, for C-contiguous arrays, transposes, sliced views and
3-D arrays (axis 0 and 1), sums, max/min (a select per step), mean and the
log-sum-exp of the issue's benchmark."""

from __future__ import annotations

import numpy as np
import pytest
from finite_diff import assert_matches, copy_args, finite_differences

import adpasses


def col_sum(X):
    return np.sum(np.sin(X) * np.sum(X, axis=0))


def col_max_min(X):
    return np.sum(np.max(X, axis=0) * np.min(X, axis=0) + np.mean(X, axis=0))


def lse(X):
    mx = np.max(X, axis=0)
    return np.sum(mx + np.log(np.sum(np.exp(X - mx), axis=0)))


def lse_of_transpose(X):
    Y = X.T
    mx = np.max(Y, axis=0)
    return np.sum(mx + np.log(np.sum(np.exp(Y - mx), axis=0)))


def lse_of_slice(X):
    Y = X[::2, 1:]
    mx = np.max(Y, axis=0)
    return np.sum(mx + np.log(np.sum(np.exp(Y - mx), axis=0)))


def axis0_3d(X):
    return np.sum(np.tanh(np.sum(X * X, axis=0)))


def axis1_3d(X):
    return np.sum(np.cos(np.sum(X, axis=1)) * np.max(X, axis=1))


CASES = [col_sum, col_max_min, lse, lse_of_transpose, lse_of_slice, axis0_3d, axis1_3d]


@pytest.mark.parametrize("f", CASES)
def test_values_and_gradients(f) -> None:
    rng = np.random.default_rng(7)
    X = rng.standard_normal((4, 5, 3) if "3d" in f.__name__ else (6, 5))
    jf = adpasses.jit(f)
    assert np.isclose(jf(X.copy()), f(X.copy()), rtol=1e-13, atol=1e-13)
    got = adpasses.grad(jf)(*copy_args([X]))
    assert_matches(got, finite_differences(f, [X], (0,))[0], what=f.__name__)


def test_column_sums_add_in_numpy_order() -> None:
    """Each column's terms are added top to bottom, as the column walk
    added them: the same bits, however the loops are ordered."""
    def sums(X, out):
        out[:] = np.sum(X, axis=0)

    rng = np.random.default_rng(3)
    X = rng.standard_normal((37, 11)) * 10.0 ** rng.integers(-8, 8, (37, 11))
    out = np.empty(11)
    adpasses.jit(sums)(X, out)
    expected = np.zeros(11)
    for i in range(37):
        expected += X[i]
    np.testing.assert_array_equal(out, expected)

