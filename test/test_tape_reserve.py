"""Tapes whose capacity is unknown before their top-level op (a loop nest
whose inner trip counts an outer loop computes, or a for loop inside a
while loop) make room once per nest with `ad.tape.reserve`; their pushes
(`ad.reserved`) then test nothing. Each kernel: the reserve is in the
gradient's IR, and the gradient matches central finite differences on
random inputs (a reserve too small would write past the buffer; a wrong
push or pop order would give wrong numbers). Neighbours of the class:
triangular nests (the inner bounds read the outer induction variable), a
per-iteration local array whose sizes bound the inner loops (the dense
layer written with `@`), a for loop inside a while loop, a branch inside
the nest (the reserve is an upper bound), empty inner loops, and forward
over reverse (the tangent tapes reserve beside the primal ones)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from finite_diff import assert_matches, copy_args, finite_differences

import adpasses


def triangular(x):
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i, n):
            s += math.tanh(x[j] * x[i])
    return s


def triangular_branch(x):
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            if x[j] > 0.0:
                s += math.tanh(x[j] * x[i])
    return s


def local_array_per_step(W, b, X):
    """The dense layer with `@`: y is allocated per step, and its sizes
    bound the elementwise loops of tanh."""
    y0 = np.tanh(W @ X[0] + b[:, None])
    s = 0.0
    for t in range(X.shape[0]):
        y = np.tanh(W @ X[t] + b[:, None])
        s += np.sum(y * y0)
    return s


def for_in_while(x, c):
    s = 0.0
    k = 0
    while s < c:
        for j in range(x.shape[0]):
            s += math.exp(0.1 * x[j] * x[j]) * (k + 1)
        k += 1
    return s


def growing_inner(x):
    """Inner trip counts 0, 1, ..., n - 1, then n again: reserves of every
    size, including none (an empty loop) and more than twice the tape."""
    n = x.shape[0]
    s = 0.0
    for i in range(n + 1):
        for j in range(i * i % (n + 1)):
            s += math.tanh(x[j] + 0.1 * i)
    return s


def check(f, args, argnums):
    jf = adpasses.jit(f)
    got = adpasses.grad(jf, argnums)(*copy_args(args))
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, finite_differences(f, args, argnums)):
        assert_matches(g, e, what=f.__name__)
    return adpasses.inspect(jf, *args, argnums=argnums).gradient_mlir


@pytest.fixture
def rng():
    return np.random.default_rng(1618)


@pytest.mark.parametrize("f", [triangular, triangular_branch, growing_inner])
def test_triangular_nests_reserve_per_outer_iteration(f, rng) -> None:
    x = rng.uniform(-1.0, 1.0, 13)
    ir = check(f, [x], (0,))
    assert "ad.tape.reserve" in ir and "{ad.reserved}" in ir


def test_local_array_per_step_reserves_before_its_loops(rng) -> None:
    W, b, X = rng.standard_normal((3, 4)) * 0.5, rng.standard_normal(3) * 0.5, rng.standard_normal((5, 4, 6))
    ir = check(local_array_per_step, [W, b, X], (0, 1))
    assert "ad.tape.reserve" in ir and "{ad.reserved}" in ir


def test_for_inside_while_reserves_per_for(rng) -> None:
    x = rng.uniform(-1.0, 1.0, 7)
    ir = check(for_in_while, [x, 30.0], (0,))
    assert "ad.tape.reserve" in ir and "{ad.reserved}" in ir


@pytest.mark.parametrize("f", [triangular, growing_inner])
def test_reserved_tapes_allocate_nothing_after_the_first_call(f, rng) -> None:
    from adpasses.native import runtime

    x = rng.uniform(-1.0, 1.0, 40)
    g = adpasses.grad(adpasses.jit(f))
    first = g(x)
    runtime.reset_stats()
    again = g(x)
    # the growable tapes come from their sites' pools, grown by the first call
    assert runtime.stats()["allocations"] == 0
    np.testing.assert_array_equal(again, first)


def test_hessian_through_reserved_tapes(rng) -> None:
    """Forward over reverse: the tangent tapes are pushed beside the
    reserved primal pushes; the Hessian matches central differences of
    the gradient."""
    x = rng.uniform(-1.0, 1.0, 6)
    h = adpasses.hessian(adpasses.jit(triangular))(x.copy())
    grad = adpasses.grad(adpasses.jit(triangular))
    eps = 1e-5
    expected = np.empty((6, 6))
    for k in range(6):
        plus, minus = x.copy(), x.copy()
        plus[k] += eps
        minus[k] -= eps
        expected[:, k] = (grad(plus) - grad(minus)) / (2 * eps)
    np.testing.assert_allclose(h, expected, rtol=1e-6, atol=1e-7)
