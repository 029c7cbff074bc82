"""`ad-interchange-columns` (adpasses/transforms/interchange_columns.py):
loops over columns whose inner loops walk down each column are
differentiated as passes over rows. Gradients against central finite
differences on random matrices (rectangular, one row, one column, empty,
transposed views), the value bit for bit that of the nest as written, the
pass applied where it should (the per-column arrays in the gradient's IR,
the primal's nest as the LLVM lowering compiles it: `with_rows_outside`)
and not where it must not (the nest writes memory, a parallel loop), and
out-of-bounds reads still raising (one whose value nothing reads
included)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import adpasses
from adpasses.transforms import interchange_columns
from adpasses.transforms.expand_upstream_ops import without_upstream_only_ops
from finite_diff import assert_matches, finite_differences


def lse_loops(X):
    m, n = X.shape
    total = 0.0
    for j in range(n):
        mx = X[0, j]
        for i in range(1, m):
            mx = max(mx, X[i, j])
        s = 0.0
        for i in range(m):
            s += math.exp(X[i, j] - mx)
        total += mx + math.log(s)
    return total


def lse_columns(X):
    total = 0.0
    for j in range(X.shape[1]):
        col = X[:, j]
        mx = np.max(col)
        total += mx + math.log(np.sum(np.exp(col - mx)))
    return total


def column_norms(X):
    total = 0.0
    for j in range(X.shape[1]):
        s = 0.0
        for i in range(X.shape[0]):
            s += X[i, j] * X[i, j]
        total += math.sqrt(s + 1.0)
    return total


def weighted_columns(X, Y):
    """Two arrays (maybe the same one), a weight computed from j in a stage
    and read in later ones, a product of two column sums."""
    m, n = X.shape
    total = 0.0
    for j in range(n):
        w = 1.0 + 0.5 * j
        a = 0.0
        for i in range(m):
            a += w * X[i, j] * Y[i, j]
        b = 0.0
        for i in range(m):
            b += math.sin(X[i, j] + a / w)
        total += a * b + w
    return total


def stores_each_sum(X, out):
    """Writes out[j]: stays as written (and out may be X's memory)."""
    m, n = X.shape
    total = 0.0
    for j in range(n):
        s = 0.0
        for i in range(m):
            s += math.exp(X[i, j])
        out[j] = s
        total += math.log(s) * out[j]
    return total


def reads_past_the_end(X):
    m, n = X.shape
    total = 0.0
    for j in range(n):
        s = 0.0
        for i in range(m):
            s += X[i + 1, j]
        total += s
    return total


def unused_read_past_the_end(X):
    """`X[m, j]` is read before the inner loop and never used: it raises."""
    m, n = X.shape
    total = 0.0
    for j in range(n):
        t = X[m, j]  # noqa: F841
        s = 0.0
        for i in range(m):
            s += X[i, j]
        total += s
    return total


def _primal_interchanged(f, *args) -> bool:
    """The LLVM lowering compiles `f`'s primal with its nest over rows."""
    module, _ = adpasses.jit(f).build(args, True)
    lowered = without_upstream_only_ops(module)
    return interchange_columns.with_rows_outside(lowered) is not lowered


def _interchanged(f, *args, argnums=0) -> bool:
    """The gradient's IR holds the per-column arrays of an interchanged nest."""
    ir = adpasses.inspect(adpasses.jit(f), *args, argnums=argnums).gradient_mlir
    return re.search(r"%\w+_per_column = memref.alloc", ir) is not None


def _check(f, args, argnums=(0,)):
    jf = adpasses.jit(f)
    grads = adpasses.grad(jf, argnums=argnums)(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for got, want in zip(grads, finite_differences(f, list(args), argnums)):
        assert_matches(got, want, what=f.__name__)


@pytest.mark.parametrize("f", [lse_loops, lse_columns, column_norms], ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(6, 5), (1, 4), (5, 1), (9, 3)])
def test_gradient_matches_finite_differences(f, shape) -> None:
    X = np.random.default_rng(sum(shape)).normal(size=shape)
    _check(f, (X,))


@pytest.mark.parametrize("f", [lse_loops, lse_columns, column_norms], ids=lambda f: f.__name__)
def test_the_nest_runs_over_rows_in_the_gradient(f) -> None:
    X = np.random.default_rng(3).normal(size=(6, 5))
    assert _interchanged(f, X)


@pytest.mark.parametrize("f", [lse_loops, lse_columns, column_norms], ids=lambda f: f.__name__)
def test_value_is_the_nest_as_written_bit_for_bit(f, monkeypatch) -> None:
    X = np.random.default_rng(4).normal(scale=2.0, size=(40, 30))
    value, _ = adpasses.value_and_grad(adpasses.jit(f))(X)
    primal = adpasses.jit(f)(X)
    assert value == primal
    assert _primal_interchanged(f, X)
    # The nest as written: the LLVM lowering without the rewrite.
    monkeypatch.setattr(interchange_columns, "with_rows_outside", lambda module, copy=True: module)
    assert adpasses.jit(f)(X) == primal
    assert math.isclose(primal, f(X), rel_tol=1e-13)


@pytest.mark.parametrize("shape", [(6, 5), (1, 4), (5, 1), (0, 3), (3, 0)])
def test_the_primal_over_rows_matches_numpy(shape) -> None:
    X = np.random.default_rng(sum(shape) + 10).normal(size=shape)
    for f in (lse_loops, lse_columns, column_norms):
        if X.size == 0 and f is not column_norms:
            continue  # max of an empty column: Python's error, not a number
        assert math.isclose(adpasses.jit(f)(X), f(X), rel_tol=1e-13, abs_tol=1e-300), f.__name__
    for view in (X.T, X[::2, 1:]):
        assert math.isclose(adpasses.jit(column_norms)(view), column_norms(view), rel_tol=1e-13)


def test_a_parallel_loop_stays_as_written() -> None:
    X = np.random.default_rng(12).normal(size=(7, 6))
    module, _ = adpasses.jit(lse_loops, parallel=True).build((X,), True)
    assert interchange_columns.with_rows_outside(module) is module
    assert math.isclose(adpasses.jit(lse_loops, parallel=True)(X), lse_loops(X), rel_tol=1e-13)


def test_transposed_and_strided_views() -> None:
    X = np.random.default_rng(5).normal(size=(5, 8))
    for view in (X.T, X[::2, 1:], np.asfortranarray(X)):
        _check(lse_loops, (view,))


def test_two_arrays_and_a_scalar_crossing_stages() -> None:
    rng = np.random.default_rng(6)
    X, Y = rng.normal(size=(4, 6)), rng.normal(size=(4, 6))
    _check(weighted_columns, (X, Y), argnums=(0, 1))
    assert _interchanged(weighted_columns, X, Y, argnums=(0, 1))


def test_the_same_array_twice() -> None:
    X = np.random.default_rng(7).normal(size=(4, 6))
    gx, gy = adpasses.grad(adpasses.jit(weighted_columns), argnums=(0, 1))(X, X)
    (want,) = finite_differences(lambda A: weighted_columns(A, A), [X], (0,))
    assert_matches(gx + gy, want, what="weighted_columns(X, X)")


def test_a_nest_that_writes_stays_and_is_right() -> None:
    rng = np.random.default_rng(8)
    X, out = rng.normal(size=(5, 4)), np.zeros(4)
    _check(stores_each_sum, (X, out))
    assert not _interchanged(stores_each_sum, X, out)


@pytest.mark.parametrize("shape", [(0, 4), (4, 0)])
def test_empty_matrices(shape) -> None:
    X = np.zeros(shape)
    value, g = adpasses.value_and_grad(adpasses.jit(column_norms))(X)
    assert value == column_norms(X)
    assert g.shape == shape and not g.any()


def test_out_of_bounds_read_still_raises() -> None:
    X = np.random.default_rng(9).normal(size=(4, 3))
    with pytest.raises(IndexError):
        adpasses.grad(adpasses.jit(reads_past_the_end))(X)
    with pytest.raises(IndexError):
        adpasses.jit(reads_past_the_end)(X)


def test_an_unused_out_of_bounds_read_still_raises() -> None:
    """Its stage computes nothing a later one reads: the read is kept anyway."""
    X = np.random.default_rng(10).normal(size=(4, 3))
    assert _primal_interchanged(unused_read_past_the_end, X)
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0"):
        adpasses.jit(unused_read_past_the_end)(X)
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0"):
        adpasses.grad(adpasses.jit(unused_read_past_the_end))(X)
