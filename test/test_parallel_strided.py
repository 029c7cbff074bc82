"""Parallel loops writing strided arrays (issue 17; docs/parallel.md,
"Strided arrays"): compiled for any strides, such a loop is proven
independent only if distinct indices address distinct elements, so
`ad-parallelize` versions it: when the loop starts, the parallel loop if
each dimension of size > 1 has a positive stride beyond the span of the
dimensions nested in it (row- or column-major), else the serial loop.

Which version ran is read from `pool_stats()["pooled_loops"]` (3 threads,
minimum work 1: a parallel loop of 3 or more iterations is posted to the
pool; one loop at a time here), and the results are checked against numpy
(a stride-0 or overlapping array against the serial loop's result)."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses
from adpasses import prange
from adpasses.native import runtime


@adpasses.jit
def double_into(x, y):
    for i in prange(len(x)):
        y[i] = 2.0 * x[i]


@adpasses.jit
def scale_rows(X, Y):
    for i in prange(X.shape[0]):
        for j in range(X.shape[1]):
            Y[i, j] = 2.0 * X[i, j] + Y[i, j]


@pytest.fixture(autouse=True)
def settings():
    threads, work = adpasses.get_num_threads(), runtime.set_parallel_min_work(1)
    adpasses.set_num_threads(3)
    yield
    adpasses.set_num_threads(threads)
    runtime.set_parallel_min_work(work)


def pooled(call) -> int:
    before = runtime.pool_stats()["pooled_loops"]
    call()
    return runtime.pool_stats()["pooled_loops"] - before


@pytest.mark.parametrize("make_out, parallel", [
    (lambda n: np.zeros(2 * n)[::2], True),
    (lambda n: np.zeros((n, 3))[:, 1], True),
    (lambda n: np.zeros(3 * n)[::-3], False),  # a negative stride: serial
    (lambda n: np.zeros(1)[:1].repeat(1)[:0], None),
], ids=["step 2", "column", "step -3", "empty"])
def test_one_dimension(make_out, parallel):
    x = np.random.default_rng(0).random(999)
    y = make_out(len(x))
    if parallel is None:  # an empty y: the bounds check of y[0]
        with pytest.raises(IndexError):
            double_into(x, y)
        return
    assert pooled(lambda: double_into(x, y)) == int(parallel)
    assert np.array_equal(y, 2.0 * x)


def test_stride_0_and_overlapping_rows_run_the_serial_loop():
    x = np.arange(999.0)
    cell = np.zeros(1)
    w = np.lib.stride_tricks.as_strided(cell, (999,), (0,))
    assert pooled(lambda: double_into(x, w)) == 0
    assert cell[0] == 2.0 * 998  # the last iteration's value, as serially
    # rows overlapping by two elements: Y[i, j] is buf[i + j]
    X = np.ones((50, 3))
    buf = np.zeros(52)
    Y = np.lib.stride_tricks.as_strided(buf, (50, 3), (8, 8))
    assert pooled(lambda: scale_rows(X, Y)) == 0
    expected = np.zeros(52)
    for i in range(50):
        for j in range(3):
            expected[i + j] = 2.0 + expected[i + j]
    assert np.array_equal(buf, expected)


@pytest.mark.parametrize("layout", ["every other column", "fortran", "rows of a wider array", "transposed"])
def test_two_dimensions_with_positive_strides_run_in_parallel(layout):
    rng = np.random.default_rng(1)
    X = rng.random((60, 4))
    Y0 = rng.random((60, 4))
    if layout == "every other column":
        Y = np.zeros((60, 8))[:, ::2]
    elif layout == "fortran":
        Y = np.asfortranarray(np.zeros((60, 4)))
    elif layout == "rows of a wider array":
        Y = np.zeros((60, 7))[:, 2:6]
    else:
        Y = np.zeros((4, 60)).T
    Y[...] = Y0
    assert not Y.flags.c_contiguous
    assert pooled(lambda: scale_rows(X, Y)) == 1
    assert np.array_equal(Y, 2.0 * X + Y0)


def test_the_gradient_through_a_strided_input_is_right_on_every_path():
    """The reverse of a loop reading a strided x (its shadow strided too
    when the caller gives one) runs versioned like the forward."""
    @adpasses.jit
    def weighted(x, w):
        s = 0.0
        for i in prange(len(x)):
            s += w[i] * x[i] * x[i]
        return s

    rng = np.random.default_rng(2)
    base = rng.random(2000)
    x, w = base[::2], rng.random(1000)
    gx = adpasses.grad(weighted, 0)(x, w)
    assert np.allclose(gx, 2.0 * w * x, rtol=1e-13)
    dx_buf = np.zeros(3000)
    dx = dx_buf[::3]
    adpasses.autodiff(weighted, adpasses.Duplicated(x, dx), adpasses.Const(w))
    assert np.allclose(dx, 2.0 * w * x, rtol=1e-13)
    assert np.count_nonzero(dx_buf) == np.count_nonzero(dx)  # only every third element written
