"""np.sum / np.mean / np.dot / np.linalg.norm of float32 arrays past 2**24
elements: a float32 running sum stops growing at 2**24 (1.0 added to
16777216.0 rounds back to it), so a plain float32 accumulation returned
16777216 for the sum of 2**24 + 2**22 ones and a mean of 0.8. numpy sums
pairwise; compiled code accumulates in float64 and rounds once to float32
(frontend/array_exprs.py, `reduce`): the exact sum here, float32 results
as numpy's."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses
from finite_diff import finite_differences

N = 2**24 + 2**22          # 20971520 = 1.25 * 2**24: exact in float32


def total(x):
    return np.sum(x)


def average(x):
    return np.mean(x)


def method_sum(x):
    return x.sum()


def dot(x):
    return np.dot(x, x)


def norm(x):
    return np.linalg.norm(x)


def row_sums(m):
    return np.sum(m, axis=1)


def column_means(m):
    return np.mean(m, axis=0)


@pytest.fixture(scope="module")
def ones():
    return np.ones(N, dtype=np.float32)


@pytest.mark.parametrize("f, expected", [(total, N), (average, 1.0), (method_sum, N), (dot, N),
                                         (norm, np.sqrt(np.float32(N)))])
def test_full_reductions_of_float32_past_2_24(ones, f, expected):
    got = adpasses.jit(f)(ones)
    assert got == pytest.approx(float(expected), rel=1e-7), f.__name__
    assert got == float(np.float32(got))   # rounded to float32, as numpy's result


def test_axis_reductions_of_float32_past_2_24(ones):
    rows = adpasses.jit(row_sums)(ones.reshape(1, N))
    assert rows.dtype == np.float32 and rows.tolist() == [float(N)]
    # numpy's axis=0 of a (N, 1) view: a column summed down N rows
    means = adpasses.jit(column_means)(ones.reshape(N, 1))
    assert means.dtype == np.float32 and means.tolist() == [1.0]


def test_float32_sum_of_inexact_values_rounds_once():
    n = 2**24 + 10           # a float32 running sum gave 1935090.25 here, 15% high
    x = np.full(n, 0.1, dtype=np.float32)
    exact = np.sum(x.astype(np.float64))
    assert adpasses.jit(total)(x) == float(np.float32(exact))
    assert adpasses.jit(average)(x) == float(np.float32(exact / n))


def scaled_mean(m, w):
    return np.sum(np.mean(m * w, axis=1) ** 2) + np.mean(m) * np.sum(w)


def test_float32_gradients_through_wide_sums():
    rng = np.random.default_rng(3)
    m = rng.uniform(0.5, 1.5, (3, 5)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, 5).astype(np.float32)
    g = adpasses.grad(adpasses.jit(scaled_mean), (0, 1))(m, w)
    for k, gk in enumerate(g):
        assert gk.dtype == np.float32
        (want,) = finite_differences(scaled_mean, [m, w], [k])
        np.testing.assert_allclose(gk, want, rtol=2e-4, atol=2e-4)
