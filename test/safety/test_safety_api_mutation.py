"""grad and value_and_grad leave every argument unchanged (issue 13, item
8): they differentiate f at the given values, like jax.grad, so the arrays
f writes (known from the compiled function's write analysis) are copied
first. Before, the caller's arrays were overwritten and two calls on the
same array gave different gradients. `autodiff` keeps Enzyme's semantics:
it runs f on the arrays it is given, mutating them."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses
from adpasses import Duplicated
from finite_diff import assert_matches, finite_differences

rng = np.random.default_rng(808)


@adpasses.jit
def inplace_square(x):
    for i in range(len(x)):
        x[i] = x[i] * x[i]
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


@adpasses.jit
def fill_out(x, out, s):
    t = 0.0
    for i in range(len(x)):
        out[i] = s * x[i]
        t += out[i] * x[i]
    return t


@adpasses.jit
def scale_in_place(v, s):
    for i in range(len(v)):
        v[i] = s * v[i]
    return 0


@adpasses.jit
def through_callee(x, s):
    scale_in_place(x, s)
    t = 0.0
    for i in range(len(x)):
        t += x[i] * x[i]
    return t


@adpasses.jit
def with_int_scratch(x, marks):
    t = 0.0
    for i in range(len(x)):
        marks[i] = i
        t += x[i] * x[marks[i]]
    return t


@adpasses.jit
def rows_in_place(m):
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            m[i, j] = m[i, j] * m[i, 0]
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s += m[i, j]
    return s


def check_unchanged_and_right(fn, args, nums, what):
    """Three calls of grad and of value_and_grad (general path, then the
    fast path): same results, right against finite differences, and the
    arguments keep their values."""
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    expected = finite_differences(fn.py_func, before, nums)
    value = fn.py_func(*[a.copy() if isinstance(a, np.ndarray) else a for a in before])
    for _ in range(3):
        got = adpasses.grad(fn, nums)(*args)
        v, got2 = adpasses.value_and_grad(fn, nums)(*args)
        assert v == pytest.approx(value, rel=1e-12), what
        for g, g2, e in zip(got, got2, expected):
            assert_matches(g, e, what=what)
            np.testing.assert_array_equal(g, g2)
        for a, b in zip(args, before):
            np.testing.assert_array_equal(a, b, err_msg=f"{what}: an argument changed")


def test_grad_leaves_an_array_f_squares_in_place_unchanged():
    x = rng.uniform(0.5, 1.5, 6)
    check_unchanged_and_right(inplace_square, [x], (0,), "in-place square")


@pytest.mark.parametrize("make", [lambda b: b[::2], lambda b: b[::-1][:6], lambda b: b[1:7]],
                         ids=["stride 2", "reversed", "offset"])
def test_grad_leaves_written_views_and_their_base_unchanged(make):
    base = rng.uniform(0.5, 1.5, 12)
    keep = base.copy()
    check_unchanged_and_right(inplace_square, [make(base)], (0,), "view")
    np.testing.assert_array_equal(base, keep)


def test_grad_leaves_output_and_scratch_arrays_unchanged():
    x, out = rng.uniform(-1, 1, 5), np.full(5, 9.0)
    check_unchanged_and_right(fill_out, [x, out, 1.5], (0, 2), "output array")
    check_unchanged_and_right(fill_out, [x, out, 1.5], (0, 1, 2), "differentiated output array")
    marks = np.full(5, -1, np.int64)
    check_unchanged_and_right(with_int_scratch, [x, marks], (0,), "int scratch")


def test_grad_leaves_arrays_a_callee_writes_unchanged():
    x = rng.uniform(-1, 1, 5)
    check_unchanged_and_right(through_callee, [x, 1.7], (0, 1), "written by a callee")


def test_grad_leaves_2d_arrays_unchanged():
    m = rng.uniform(0.5, 1.5, (3, 4))
    check_unchanged_and_right(rows_in_place, [m], (0,), "2-D")
    check_unchanged_and_right(rows_in_place, [np.asfortranarray(m)], (0,), "2-D Fortran order")


def test_grad_accepts_read_only_arrays_f_writes():
    """grad never writes the caller's array, so a read-only one is fine."""
    x = rng.uniform(0.5, 1.5, 5)
    x.flags.writeable = False
    check_unchanged_and_right(inplace_square, [x], (0,), "read-only")
    with pytest.raises(ValueError, match=r"argument 0 \('x'\) is read-only, but the function writes to it"):
        inplace_square(x)  # calling f itself does write


def test_keyword_and_default_calls_leave_arguments_unchanged():
    x, out = rng.uniform(-1, 1, 4), np.zeros(4)
    before = out.copy()
    g = adpasses.grad(fill_out)(x, out=out, s=2.0)
    assert_matches(g, finite_differences(fill_out.py_func, [x, out.copy(), 2.0], (0,))[0])
    np.testing.assert_array_equal(out, before)


def test_autodiff_runs_f_on_the_arrays_it_is_given():
    """Enzyme's semantics: f's writes happen (documented)."""
    x0 = rng.uniform(0.5, 1.5, 5)
    x, dx = x0.copy(), np.zeros(5)
    adpasses.autodiff(inplace_square, Duplicated(x, dx))
    np.testing.assert_allclose(x, x0 * x0, rtol=1e-15)
    assert_matches(dx, 2 * x0)
    assert "runs f on the arrays it is given" in adpasses.autodiff.__doc__
    assert "leaves every argument unchanged" in adpasses.grad.__doc__
