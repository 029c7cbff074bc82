"""jvp and jacfwd of functions returning float arrays and tuples: tangents
against central finite differences on random inputs, jacfwd against jacrev,
and the results' sharing and ownership (a returned argument, a view of one,
an array the compiled code allocated)."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses

import forward_result_kernels as k

rng = np.random.default_rng(3116)
H = 1e-6


def central(f, args, tangents):
    """d/dt f(args + t tangents) by central differences, per result."""
    plus = f(*[a + H * t if t is not None else a for a, t in zip(args, tangents)])
    minus = f(*[a - H * t if t is not None else a for a, t in zip(args, tangents)])
    if isinstance(plus, tuple):
        return tuple((np.asarray(p, float) - np.asarray(m, float)) / (2 * H) for p, m in zip(plus, minus))
    return (np.asarray(plus, float) - np.asarray(minus, float)) / (2 * H)


def close(a, b, rtol=1e-6):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-7 * max(1.0, float(np.abs(b).max(initial=0))))


CASES = [
    (k.elementwise, lambda: (rng.standard_normal(7),)),
    (k.column_sums, lambda: (rng.standard_normal((4, 3)),)),
    (k.row_sums, lambda: (rng.standard_normal((4, 3)),)),
    (k.matmul, lambda: (rng.standard_normal((3, 4)), rng.standard_normal((4, 2)))),
    (k.slices, lambda: (rng.standard_normal(6),)),
    (k.tail, lambda: (rng.standard_normal(5),)),
    (k.doubled, lambda: (rng.standard_normal(5),)),
]


@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_jvp_of_an_array_result_matches_central_differences(fn, make):
    args = make()
    tangents = tuple(rng.standard_normal(a.shape) for a in args)
    saved = [a.copy() for a in args]
    out, tan = adpasses.jvp(adpasses.jit(fn), args, tangents)
    expect = fn(*args)
    np.testing.assert_allclose(out, expect, rtol=1e-12)
    assert tan.shape == expect.shape and tan.dtype == expect.dtype
    close(tan, central(fn, args, tangents))
    for a, s in zip(args, saved):
        np.testing.assert_array_equal(a, s)  # arguments unchanged


@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_jacfwd_of_an_array_result_equals_jacrev_and_differences(fn, make):
    args = make()
    nums = tuple(range(len(args)))
    jit = adpasses.jit(fn)
    fwd = adpasses.jacfwd(jit, nums)(*args)
    rev = adpasses.jacrev(jit, nums)(*args)
    out = fn(*args)
    for n, (jf_, jr) in enumerate(zip(fwd, rev)):
        assert jf_.shape == out.shape + args[n].shape
        close(jf_, jr, rtol=1e-10)
        # one column by differences: the direction of a random unit element
        e = np.zeros(args[n].shape)
        flat = int(rng.integers(args[n].size))
        e.reshape(-1)[flat] = 1.0
        directions = [e if m == n else np.zeros(a.shape) for m, a in enumerate(args)]
        close(jf_.reshape(out.shape + (-1,))[..., flat], central(fn, args, directions))


def test_jvp_of_energy_and_forces_keeps_the_tuple_structure():
    x, c = rng.standard_normal(6), 0.7
    dx, dc = rng.standard_normal(6), 0.3
    (e, f), (de, df) = adpasses.jvp(adpasses.jit(k.energy_forces), (x, c), (dx, dc))
    e0, f0 = k.energy_forces(x, c)
    assert isinstance(e, float) and isinstance(de, float)
    np.testing.assert_allclose(f, f0, rtol=1e-12)
    fd_e, fd_f = central(k.energy_forces, (x, c), (dx, dc))
    close(de, fd_e)
    close(df, fd_f)
    # hand derivation: de = sum(4 c x^3 dx) + dc sum(x^4)
    close(de, np.sum(4 * c * x ** 3 * dx) + dc * np.sum(x ** 4), rtol=1e-12)


def test_jacfwd_of_a_tuple_result_nests_like_jax_and_equals_jacrev():
    x, c = rng.standard_normal(5), 1.3
    jit = adpasses.jit(k.energy_forces)
    je, jf_ = adpasses.jacfwd(jit)(x, c)
    re, rf = adpasses.jacrev(jit)(x, c)
    assert je.shape == (5,) and jf_.shape == (5, 5)
    close(je, re, rtol=1e-10)
    close(jf_, rf, rtol=1e-10)
    close(jf_, np.diag(-12.0 * c * x ** 2), rtol=1e-12)


def test_an_int_result_has_no_tangent_and_no_jacobian():
    x = rng.standard_normal(6)
    dx = rng.standard_normal(6)
    (out, n), (dout, dn) = adpasses.jvp(adpasses.jit(k.with_count), (x,), (dx,))
    assert n == int(np.sum(x > 0)) and dn is None
    close(dout, 2 * x * dx, rtol=1e-12)
    jo, jn = adpasses.jacfwd(adpasses.jit(k.with_count))(x)
    assert jn is None
    close(jo, np.diag(2 * x), rtol=1e-12)


def test_a_returned_argument_and_a_view_of_one_come_back_with_their_tangents():
    x, dx = rng.standard_normal(5), rng.standard_normal(5)
    out, tan = adpasses.jvp(adpasses.jit(k.identity), (x,), (dx,))
    assert out is x and tan is dx  # numpy's `return x`: the argument itself
    out, tan = adpasses.jvp(adpasses.jit(k.tail), (x,), (dx,))
    assert out.base is x and tan.base is dx
    np.testing.assert_array_equal(tan, dx[1:])


def test_a_result_independent_of_the_inputs_has_a_fresh_zero_tangent():
    x, dx = rng.standard_normal(4), rng.standard_normal(4)
    out, tan = adpasses.jvp(adpasses.jit(k.constant_array), (x,), (dx,))
    np.testing.assert_array_equal(out, np.ones(4))
    np.testing.assert_array_equal(tan, np.zeros(4))
    assert tan.flags.owndata or tan.base is not None
    assert not np.shares_memory(tan, dx)


def test_empty_arrays():
    x = np.zeros(0)
    out, tan = adpasses.jvp(adpasses.jit(k.doubled), (x,), (np.zeros(0),))
    assert out.shape == (0,) and tan.shape == (0,)
    assert adpasses.jacfwd(adpasses.jit(k.elementwise))(np.zeros(0)).shape == (0, 0)


def test_arrays_returned_by_a_callee():
    x, dx = rng.standard_normal(6), rng.standard_normal(6)
    (y, s), (dy, ds) = adpasses.jvp(adpasses.jit(k.through_callee), (x,), (dx,))
    close(dy, 4 * x * dx, rtol=1e-12)
    close(ds, np.sum(4 * x * dx), rtol=1e-12)
    jy, js = adpasses.jacfwd(adpasses.jit(k.through_callee))(x)
    ry, rs = adpasses.jacrev(adpasses.jit(k.through_callee))(x)
    close(jy, ry, rtol=1e-10)
    close(js, rs, rtol=1e-10)


def test_a_returned_array_the_function_writes_is_the_callers_own_copy():
    # f writes x and returns it: jvp runs f on a kept copy, which the next call reuses
    jit = adpasses.jit(k.scales_in_place)
    x, dx = rng.standard_normal(5), rng.standard_normal(5)
    saved = x.copy()
    out1, tan1 = adpasses.jvp(jit, (x,), (dx,))
    out2, tan2 = adpasses.jvp(jit, (x + 1.0,), (dx,))
    np.testing.assert_array_equal(x, saved)
    np.testing.assert_allclose(out1, saved ** 2, rtol=1e-12)
    np.testing.assert_allclose(tan1, 2 * saved * dx, rtol=1e-12)
    np.testing.assert_allclose(out2, (saved + 1) ** 2, rtol=1e-12)
    assert not np.shares_memory(out1, out2) and not np.shares_memory(tan1, tan2)


def test_float32_results_keep_their_dtype():
    x = rng.standard_normal(5).astype(np.float32)
    dx = rng.standard_normal(5).astype(np.float32)
    out, tan = adpasses.jvp(adpasses.jit(k.doubled), (x,), (dx,))
    assert out.dtype == np.float32 and tan.dtype == np.float32
    np.testing.assert_allclose(tan, 4 * x * dx, rtol=1e-5)
    assert adpasses.jacfwd(adpasses.jit(k.doubled))(x).dtype == np.float32


def test_repeated_calls_take_the_same_answers():
    # the second call of a signature goes through the generated fast path
    jit = adpasses.jit(k.elementwise)
    for _ in range(3):
        x, dx = rng.standard_normal(6), rng.standard_normal(6)
        out, tan = adpasses.jvp(jit, (x,), (dx,))
        np.testing.assert_allclose(out, k.elementwise(x), rtol=1e-12)
        close(tan, (2 * np.cos(x) + 2 * x) * dx, rtol=1e-12)
    out, tan = adpasses.jvp(jit, (np.zeros(2),), (np.ones(2),))  # another shape, same signature
    np.testing.assert_allclose(tan, [2.0, 2.0], rtol=1e-12)
