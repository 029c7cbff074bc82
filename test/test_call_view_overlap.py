"""A callee returning a view of its argument (`return x[::-1]`) gives the
caller that argument's memory (docs/frontend.md, "Returns"). An in-place
update or a slice store whose right side reads the target through such a
result must read the target as it was before the statement, as numpy does
(copy-first), not elements the statement already wrote.

Found by the array fuzzer (`--mode arrays`, seed 23 with LARGE_SHARE
sizes: `t2 = helper(t1); t1 += np.minimum(t2 / 2.44, t2[::-1])` where the
helper returns `x[::-1]`): the in-place update and the slice store
followed views but not call results to the memory they address, and wrote
the target while reading it (memory_root now follows both)."""

from __future__ import annotations

import numpy as np
import pytest
from finite_diff import finite_differences

import adpasses


def flip(x):
    return x[::-1]


def tail(x):
    return x[1:]


def update_through_flip(a):
    t = a * 1.0
    r = flip(t)
    t += r
    return t


def update_through_tail(a):
    t = a * 1.0
    r = tail(t)
    t[:-1] *= r + 1.0
    return t


def store_through_flip(a):
    t = np.sin(a)
    r = flip(t)
    t[1:] = r[:-1] * 2.0
    return t


def store_whole_through_flip(a):
    t = np.sin(a)
    r = flip(t)
    t[:] = r + a
    return np.sum(t * t)


def update_argument_through_flip(a):
    r = flip(a)
    a += r * 0.5
    return np.sum(a * a)


CASES = [update_through_flip, update_through_tail, store_through_flip, store_whole_through_flip,
         update_argument_through_flip]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [4, 5, 17])
def test_values_are_numpys(f, n: int) -> None:
    a = np.random.default_rng(n).uniform(-1, 1, n)
    got_arg, want_arg = a.copy(), a.copy()
    got, want = adpasses.jit(f)(got_arg), f(want_arg)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(got_arg, want_arg, rtol=1e-13, atol=1e-13)  # the argument written alike


@pytest.mark.parametrize("f", [store_whole_through_flip, update_argument_through_flip], ids=lambda f: f.__name__)
def test_gradients_match_finite_differences(f) -> None:
    a = np.random.default_rng(3).uniform(-1, 1, 9)
    g = adpasses.grad(f)(a.copy())
    (fd,) = finite_differences(f, [a], [0])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def update_from_other_argument(a, b):
    a += b[::-1]
    return np.sum(a * a)


def update_2d_from_other_argument(A, B):
    A *= B.T + 1.0
    return np.sum(A)


@pytest.mark.parametrize("f", [update_from_other_argument, update_2d_from_other_argument],
                         ids=lambda f: f.__name__)
def test_an_update_from_another_argument_that_is_the_same_array(f) -> None:
    """`f(x, x)`: the other argument is the target; numpy reads it before
    writing (found beside seed 23: the update writes a while reading b)."""
    shape = (5,) if f is update_from_other_argument else (4, 4)
    x = np.random.default_rng(7).uniform(-1, 1, shape)
    y = x.copy()
    got, want = adpasses.jit(f)(x, x), f(y, y)
    assert got == pytest.approx(want, rel=1e-13)
    np.testing.assert_allclose(x, y, rtol=1e-13)
    a, b = np.random.default_rng(8).uniform(-1, 1, (2,) + shape)   # distinct arrays: as before
    assert adpasses.jit(f)(a.copy(), b.copy()) == pytest.approx(f(a.copy(), b.copy()), rel=1e-13)
    g = adpasses.grad(f, (0, 1))(a.copy(), b.copy())
    fd = finite_differences(f, [a, b], [0, 1])
    for ours, theirs in zip(g, fd):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-8)
