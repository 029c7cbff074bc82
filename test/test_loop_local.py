"""Loop-local reverse (Tapenade's II-loops) and loop fusion.

A top-level loop whose iterations are independent is reversed one
iteration at a time inside its forward loop (adpasses/cache/loop_local.py);
adjacent loops over one range are fused first (ad-fuse-loops). Each test
checks the decision the cache report shows (and its reason) and the
gradient against central finite differences on random inputs: a loop
reversed locally although its iterations depend on each other gives a
wrong gradient, so the loops with loop-carried dependences (through
memory, through views, through calls, through scalars) are both reported
as not local and checked numerically.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import adpasses
from finite_diff import assert_matches, finite_differences


def loops_of(f, *args, argnums=0):  # type: ignore[no-untyped-def]
    """[(local, reason)] per top-level loop of grad(f)'s cache report."""
    report = adpasses.cache_report(f, *args, argnums=argnums)
    return [(local, reason) for _, local, reason in report.loops], report


def check_grad(f, args, argnums=(0,)):  # type: ignore[no-untyped-def]
    """grad(f) vs central differences of the Python function on copies."""
    py = f.__wrapped__ if hasattr(f, "__wrapped__") else f
    got = adpasses.grad(f, argnums=argnums)(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    got = got if isinstance(got, tuple) else (got,)
    expected = finite_differences(py, args, argnums)
    for g, e in zip(got, expected):
        assert_matches(g, e)


RNG = np.random.default_rng(17)


# -- kernels that are reversed loop-locally --------------------------------------------------


def small3(v, w):
    a = 0.5 * v[0] * v[1] - 1.25 * v[2] * w[0]
    b = math.sin(v[0] + 2.0 * w[1]) + 3.0 * v[1] * v[1]
    return a * b + math.exp(0.1 * v[2]) * w[1]


def batch(V, W):
    s = 0.0
    for k in range(V.shape[0]):
        s += small3(V[k], W[k])
    return s


def test_batch_of_small_gradients_is_loop_local_tapes_nothing_and_matches_fd():
    V, W = RNG.uniform(-1, 1, (7, 3)), RNG.uniform(-1, 1, (7, 2))
    loops, report = loops_of(batch, V, W, argnums=(0, 1))
    assert loops == [(True, loops[0][1])] and "iterations independent" in loops[0][1]
    assert report.taped_bytes == 0
    check_grad(batch, [V, W], (0, 1))
    # autodiff with Duplicated accumulates into the shadows (row k: the
    # gradient of f(V[k], W[k])), on top of what they hold
    jb = adpasses.jit(batch)
    dV, dW = np.ones_like(V), np.ones_like(W)
    adpasses.autodiff(jb, adpasses.Duplicated(V, dV), adpasses.Duplicated(W, dW))
    gV, gW = finite_differences(batch, [V, W], (0, 1))
    assert_matches(dV, 1.0 + gV)
    assert_matches(dW, 1.0 + gW)


def square_then_sum(x):
    for i in range(len(x)):
        x[i] = x[i] * x[i]
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


def test_in_place_square_fuses_into_one_loop_local_loop():
    x = RNG.uniform(-1, 1, 9)
    loops, report = loops_of(square_then_sum, x.copy())
    assert len(loops) == 1 and loops[0][0], loops
    assert "fused with the loop at" in loops[0][1]
    assert report.taped_bytes == 0
    check_grad(square_then_sum, [x])


def scaled_sums(x, y, p):
    s = 1.0
    for i in range(len(x)):
        y[i] = p * x[i] * x[i]
        s -= p * math.sin(x[i])
    return s


def test_outer_scalar_subtraction_and_stores_into_another_array():
    """`p` is used in every iteration: its adjoint is summed across the
    iterations; `s -= ...` is a sum reduction; y[i] is written, x[i] read."""
    x, y, p = RNG.uniform(-1, 1, 6), np.zeros(6), 0.7
    loops, _ = loops_of(scaled_sums, x, y, p, argnums=(0, 2))
    assert [local for local, _ in loops] == [True]
    check_grad(scaled_sums, [x, y, p], (0, 2))


def row_products(X):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(1, X.shape[1]):
            X[i, j] = X[i, j] * X[i, j - 1]
        s += X[i, X.shape[1] - 1]
    return s


def test_rows_independent_with_a_dependence_inside_each_row():
    """The inner loop carries a dependence within a row (its reverse tapes
    inside the iteration); the rows are independent."""
    X = RNG.uniform(0.5, 1.5, (4, 5))
    loops, _ = loops_of(row_products, X.copy())
    assert [local for local, _ in loops] == [True]
    check_grad(row_products, [X])


# -- loops that must not be reversed locally -----------------------------------------------


def carried_through_memory(x):
    for i in range(1, len(x)):
        x[i] = x[i] * x[i - 1]
    s = 0.0
    for i in range(1, len(x)):
        s += x[i]
    return s


def carried_through_view(x):
    y = x[1:]
    for i in range(len(x) - 1):
        x[i] = y[i] * x[i]
    s = 0.0
    for i in range(len(x) - 1):
        s += x[i] * x[i]
    return s


def bump_next(x, i):
    x[i + 1] = x[i + 1] + x[i] * x[i]


def carried_through_call(x):
    s = 0.0
    for i in range(len(x) - 1):
        bump_next(x, i)
        s += x[i]
    return s


def shared_accumulator(x, acc):
    s = 0.0
    for i in range(len(x)):
        acc[0] = acc[0] * 0.5 + x[i]
        s += acc[0] * x[i]
    return s


def product_reduction(x):
    s = 1.0
    for i in range(len(x)):
        s = s * x[i]
    return s


def used_after_the_loop(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s * s


@pytest.mark.parametrize("f, why", [
    (carried_through_memory, "iterations may depend on each other"),
    (carried_through_view, "iterations may depend on each other"),
    (carried_through_call, "iterations may depend on each other"),
    (product_reduction, "is not a sum reduction"),
    (used_after_the_loop, "after the loop is differentiated"),
])
def test_dependent_loops_are_not_local_and_gradients_match_fd(f, why):
    x = RNG.uniform(0.5, 1.5, 7)
    loops, _ = loops_of(f, x.copy())
    assert loops and not any(local for local, _ in loops), loops
    assert any(why in reason for _, reason in loops), loops
    check_grad(f, [x])


def test_shared_write_is_not_local():
    x, acc = RNG.uniform(-1, 1, 5), np.array([0.3])
    loops, _ = loops_of(shared_accumulator, x, acc.copy(), argnums=(0, 1))
    assert [local for local, _ in loops] == [False]
    assert "iterations may depend on each other" in loops[0][1]
    check_grad(shared_accumulator, [x, acc], (0, 1))


def not_fusable(x, y):
    for i in range(len(x) - 1):
        x[i] = x[i] * 2.0
    s = 0.0
    for i in range(len(x) - 1):
        s += x[i + 1] * y[i]
    return s


def test_loops_whose_fusion_would_read_too_early_stay_apart():
    """The second loop reads x[i+1], which the first writes in the next
    iteration: fused, it would read the old value."""
    x, y = RNG.uniform(-1, 1, 6), RNG.uniform(-1, 1, 6)
    loops, _ = loops_of(not_fusable, x.copy(), y, argnums=(0, 1))
    assert len(loops) == 2 and not any("fused" in reason for _, reason in loops)
    check_grad(not_fusable, [x, y], (0, 1))
