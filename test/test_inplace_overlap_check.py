"""An in-place update `a op= e(b)` reads b as it was before the statement,
as numpy does, also when b is a's memory seen through another view and
only the call tells: two arguments that are the same array (`f(x, x)`),
overlapping views passed from Python, an array whose elements share
memory (a writable `as_strided` with a stride of 0). The frontend tests
the byte ranges per call (`ad.overlaps`, `ad.self_overlaps`:
frontend/overlap.py) and copies only when they overlap; for arrays that
share no memory the API compiles the `ad.noalias` version, where the test
is folded away (`ad-fold-overlap-checks`): no test, no temporary.
Values are numpy's, gradients central differences of numpy's semantics
(grad differentiates arrays that share memory with respect to the memory
they cover: docs/api.md)."""

from __future__ import annotations

import numpy as np
import pytest
from finite_diff import finite_differences
from numpy.lib.stride_tricks import as_strided

import adpasses


def reversed_update(a, b):
    a += b[::-1]
    return np.sum(a * a * b)


def scaled_update(a, b):
    a *= 0.5 * b + 1.0
    return np.sum(np.sin(a) * b)


def two_sources(a, b, c):
    a -= b * c[::-1]
    return np.sum(a * c)


def transposed_update(A, B):
    A *= B.T + 1.0
    return np.sum(A * A)


def transposed_add(A, B):
    A += B.T
    return np.sum(A * B)


def own_transpose(A):
    A += A.T
    return np.sum(A * A)


def shifted_store(a, b):
    a[1:] = b[:-1]
    return np.sum(a * b)


def shifted_store_update(a, b):
    a[1:] *= b[:-1] + 1.0
    return np.sum(a * a)


def expression_store(a, b):
    a[:] = np.tanh(b[::-1]) + a
    return np.sum(a * b)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# (function, how the caller shares memory between the arguments: a function of
# one base array giving the arguments, the base's shape)
SHARED = [
    (reversed_update, lambda y: (y, y), (7,)),
    (reversed_update, lambda y: (y[1:], y[:-1]), (8,)),          # shifted right
    (reversed_update, lambda y: (y[:-1], y[1:]), (8,)),          # shifted left
    (scaled_update, lambda y: (y[::2], y[1::2]), (10,)),         # interleaved: ranges overlap, elements do not
    (scaled_update, lambda y: (y[::2], y[::-2]), (9,)),          # strided and reversed, sharing elements
    (scaled_update, lambda y: (y[2:7], y[4:9]), (9,)),
    (two_sources, lambda y: (y[:5], y[5:], y[2:7]), (10,)),      # a and c share 3 elements, b is other memory
    (transposed_update, lambda Y: (Y, Y), (4, 4)),
    (transposed_add, lambda Y: (Y, Y), (5, 5)),
    (transposed_add, lambda Y: (Y[1:, :4], Y[:4, 1:]), (5, 5)),
    (shifted_store, lambda y: (y, y), (6,)),                     # slice stores share the test
    (shifted_store, lambda y: (y[1:], y[:-1]), (7,)),
    (shifted_store_update, lambda y: (y, y), (6,)),
    (expression_store, lambda y: (y, y), (6,)),
    (expression_store, lambda y: (y[:5], y[3:]), (8,)),
]
IDS = [f"{f.__name__}-{k}" for k, (f, _, _) in enumerate(SHARED)]


def _numpy(f, share, base):  # type: ignore[no-untyped-def]
    y = base.copy()
    return f(*share(y)), y


@pytest.mark.parametrize("f,share,shape", SHARED, ids=IDS)
def test_values_and_the_written_memory_are_numpys(f, share, shape) -> None:  # type: ignore[no-untyped-def]
    base = _rng(len(shape) * 10 + shape[0]).uniform(-1, 1, shape)
    want, want_memory = _numpy(f, share, base)
    y = base.copy()
    got = adpasses.jit(f)(*share(y))
    assert got == pytest.approx(want, rel=1e-13, abs=1e-13)
    np.testing.assert_allclose(y, want_memory, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("f,share,shape", SHARED, ids=IDS)
def test_gradients_match_finite_differences_of_numpys_semantics(f, share, shape) -> None:  # type: ignore[no-untyped-def]
    """grad at arguments sharing memory: each argument's gradient is the
    derivative with respect to the memory it covers, so it is the
    corresponding part of d/dy f(*share(y))."""
    base = _rng(3 + shape[0]).uniform(-1, 1, shape)
    n = len(share(base))
    y = base.copy()
    args = share(y)
    g = adpasses.grad(f, tuple(range(n)))(*args)
    np.testing.assert_array_equal(y, base)  # grad leaves its arguments unchanged
    (fd,) = finite_differences(lambda z: f(*share(z)), [base], [0])
    index = np.arange(base.size).reshape(shape)
    for k, part in enumerate(share(index)):
        np.testing.assert_allclose(g[k], fd.ravel()[part], rtol=1e-6, atol=1e-8)


def test_a_transpose_of_the_target_itself_is_numpys() -> None:
    """`A += A.T` (one argument: known to overlap, copied at compile time):
    numpy's symmetric result, and its gradient."""
    X = _rng(5).uniform(-1, 1, (4, 4))
    got, want = X.copy(), X.copy()
    assert adpasses.jit(own_transpose)(got) == pytest.approx(own_transpose(want), rel=1e-13)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    np.testing.assert_allclose(got, got.T)
    (fd,) = finite_differences(own_transpose, [X], [0])
    np.testing.assert_allclose(adpasses.grad(own_transpose)(X.copy()), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f,shape,n", [(reversed_update, (6,), 2), (two_sources, (6,), 3),
                                       (transposed_update, (3, 3), 2), (shifted_store, (6,), 2),
                                       (expression_store, (6,), 2)], ids=lambda v: getattr(v, "__name__", ""))
def test_distinct_arrays_update_in_place_with_no_test_and_no_temporary(f, shape, n) -> None:  # type: ignore[no-untyped-def]
    """The version for arrays that share no memory has neither the test nor
    the copy nor the second branch (IR), and computes numpy's values and
    gradients; arrays sharing memory take the other version, with the test."""
    args = [_rng(k).uniform(-1, 1, shape) for k in range(n)]
    jf = adpasses.jit(f)
    text = str(jf.build(args, noalias=True)[0])
    assert "ad.overlaps" not in text and "memref.alloc(" not in text and "scf.if" not in text
    text = str(jf.build(args, noalias=False)[0])
    assert text.count("ad.overlaps") >= 1 and "scf.if" in text
    got, want = [a.copy() for a in args], [a.copy() for a in args]
    assert jf(*got) == pytest.approx(f(*want), rel=1e-13)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    y, z = args[0].copy(), args[0].copy()
    assert jf(*[y] * n) == pytest.approx(f(*[z] * n), rel=1e-13)
    np.testing.assert_allclose(y, z, rtol=1e-13)
    g = adpasses.grad(f, tuple(range(n)))(*args)
    fd = finite_differences(f, args, list(range(n)))
    for ours, theirs in zip(g, fd):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("api", ["jvp", "hessian", "vmap", "split", "vjp"])
def test_other_modes_refuse_a_written_array_that_shares_memory(api: str) -> None:
    """These run f on arrays laid out anew (a copy per written array, a
    batch per argument): f(x, x) would be another function there, so they
    refuse it with a ValueError naming what to pass; on distinct arrays
    they agree with finite differences (jvp, split) or numpy (vmap)."""
    x = _rng(2).uniform(-1, 1, 5)
    t = _rng(3).uniform(-1, 1, 5)
    X = _rng(4).uniform(-1, 1, (3, 5))
    calls = {
        "jvp": lambda a, b: adpasses.jvp(reversed_update, (a, b), (t, t.copy())),
        "hessian": lambda a, b: adpasses.hessian(reversed_update, 0)(a, b),
        "vmap": lambda a, b: adpasses.vmap(reversed_update)(a, b),
        "split": lambda a, b: adpasses.split(reversed_update).reverse(adpasses.split(reversed_update).forward(a, b)[1]),
        "vjp": lambda a, b: adpasses.vjp(reversed_update)(a, b)[1](1.0),
    }
    same = X.copy() if api == "vmap" else x.copy()
    with pytest.raises(ValueError, match="share memory"):
        calls[api](same, same)
    if api == "jvp":
        primal, tangent = calls[api](x.copy(), x[::-1].copy())
        fd = finite_differences(lambda s: reversed_update(x + s * t, x[::-1] + s * t), [0.0], [0])
        assert primal == pytest.approx(reversed_update(x.copy(), x[::-1].copy()), rel=1e-13)
        assert tangent == pytest.approx(fd[0], rel=1e-6)
    if api == "vmap":
        B = X[::-1].copy()
        want = [reversed_update(a.copy(), b.copy()) for a, b in zip(X, B)]
        np.testing.assert_allclose(calls[api](X.copy(), B), want, rtol=1e-13)


def test_split_on_distinct_arrays_is_grads() -> None:
    x, y = _rng(6).uniform(-1, 1, (2, 5))
    fwd, rev = adpasses.split(reversed_update)
    out, tape = fwd(x.copy(), y.copy())
    assert out == pytest.approx(reversed_update(x.copy(), y.copy()), rel=1e-13)
    got = rev(tape)
    fd = finite_differences(reversed_update, [x, y], [0, 1])
    for ours, theirs in zip(got, fd):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-8)


# -- an array whose elements share memory ---------------------------------------------


def increment(y):
    y += 1.0


def add_array(y, z):
    y += z


def times_sum(y):
    y *= 2.0
    return np.sum(y)


def slice_increment(y):
    y[1:] += 1.0


def slice_times(y, z):
    y[1:] *= z[1:]


def store_from_itself(y):
    y[:] = y * 2.0 + 1.0


def store_array(y, z):
    y[:] = z


def broadcast_rows(Y):
    Y += 1.0
    return np.sum(Y)


def _stride0(shape: tuple[int, ...], strides: tuple[int, ...], base: int, fill: float = 0.5):  # type: ignore[no-untyped-def]
    x = np.full(base, fill)
    return x, as_strided(x, shape=shape, strides=strides, writeable=True)


@pytest.mark.parametrize("f,extra", [(increment, ()), (add_array, (np.arange(1.0, 6.0),)), (times_sum, ()),
                                     (slice_increment, ()), (slice_times, (np.arange(1.0, 6.0),)),
                                     (store_from_itself, ()), (store_array, (np.arange(1.0, 6.0),))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_a_stride_0_target_is_updated_as_numpy_updates_it(f, extra) -> None:  # type: ignore[no-untyped-def]
    """`y += 1.0` on five views of one element: numpy reads every element
    before writing, so the element ends at old + 1 (not old + 5), and
    `y[:] = z` leaves z's last element."""
    x, y = _stride0((5,), (0,), 1)
    want_x, want_y = _stride0((5,), (0,), 1)
    got, want = adpasses.jit(f)(y, *extra), f(want_y, *extra)
    assert got == want
    np.testing.assert_array_equal(x, want_x)


def test_rows_of_stride_0_and_a_contiguous_view_are_numpys() -> None:
    x, Y = _stride0((3, 4), (8, 0), 3)
    want_x, want_Y = _stride0((3, 4), (8, 0), 3)
    assert adpasses.jit(broadcast_rows)(Y) == broadcast_rows(want_Y)
    np.testing.assert_array_equal(x, want_x)
    # a strided argument whose elements are distinct: no copy, same values
    z = np.arange(10.0)
    w = z.copy()
    adpasses.jit(increment)(z[::3])
    increment(w[::3])
    np.testing.assert_array_equal(z, w)


def test_grad_refuses_a_written_stride_0_array() -> None:
    _, y = _stride0((5,), (0,), 1)
    with pytest.raises(ValueError, match="share memory"):
        adpasses.grad(times_sum)(y)


# -- `...` in a subscript ----------------------------------------------------------------


def fill_all(y):
    y[...] = 2.0


def increment_all(y):
    y[...] += 1.0


def first_column(X):
    X[..., 0] = np.tanh(X[..., 1])
    return np.sum(X[...] * X)


@pytest.mark.parametrize("f", [fill_all, increment_all], ids=lambda f: f.__name__)
def test_an_ellipsis_is_the_whole_array_also_of_stride_0(f) -> None:  # type: ignore[no-untyped-def]
    y, w = np.arange(5.0), np.arange(5.0)
    adpasses.jit(f)(y)
    f(w)
    np.testing.assert_array_equal(y, w)
    x, s = _stride0((5,), (0,), 1)
    want_x, want_s = _stride0((5,), (0,), 1)
    adpasses.jit(f)(s)
    f(want_s)
    np.testing.assert_array_equal(x, want_x)


def test_an_ellipsis_before_an_index_and_its_gradient() -> None:
    X = _rng(9).uniform(-1, 1, (3, 4))
    got, want = X.copy(), X.copy()
    assert adpasses.jit(first_column)(got) == pytest.approx(first_column(want), rel=1e-13)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    (fd,) = finite_differences(first_column, [X], [0])
    np.testing.assert_allclose(adpasses.grad(first_column)(X.copy()), fd, rtol=1e-6, atol=1e-8)


def test_two_ellipses_are_a_located_error() -> None:
    def two(y):
        y[..., ...] = 1.0

    with pytest.raises(adpasses.CompileError, match=r"test_inplace_overlap_check.py:\d+:\d+: error: an index can "
                                                    r"only have a single ellipsis"):
        adpasses.jit(two)(np.ones(3))


# -- every mode through the tests (strided arguments keep `ad.self_overlaps`) -----------


def two_updates(a, b):
    a += b[::-1]
    a *= 0.5 * b + 1.0
    return np.sum(np.sin(a) * b)


def test_strided_arguments_in_every_mode_match_finite_differences() -> None:
    """Columns of a matrix are strided arguments: their updates keep the
    self-overlap test and both branches through grad, jvp, split, hessian
    and vmap(grad); each agrees with central differences."""
    rng = _rng(11)
    Z = rng.uniform(-1, 1, (5, 4))
    a, b = Z[:, 1], Z[:, 2]
    assert "ad.self_overlaps" in str(adpasses.jit(two_updates).build([a, b], noalias=True)[0])
    fd = finite_differences(two_updates, [a.copy(), b.copy()], [0, 1])
    for ours, theirs in zip(adpasses.grad(two_updates, (0, 1))(a, b), fd):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-8)
    t = rng.uniform(-1, 1, 5)
    _, tangent = adpasses.jvp(two_updates, (a, b), (t, np.zeros(5)))
    assert tangent == pytest.approx(float(fd[0] @ t), rel=1e-6)
    fwd, rev = adpasses.split(two_updates)
    for ours, theirs in zip(rev(fwd(a, b)[1]), fd):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(Z[:, 1], a)  # every mode left the arguments unchanged

    def grad_a(z):  # type: ignore[no-untyped-def]
        return adpasses.grad(two_updates, 0)(z, b.copy())

    H = adpasses.hessian(two_updates, 0)(a, b)
    H_fd = np.array([(grad_a(a + 1e-6 * e) - grad_a(a - 1e-6 * e)) / 2e-6 for e in np.eye(5)])
    np.testing.assert_allclose(H, H_fd, rtol=1e-5, atol=1e-7)
    X, Y = rng.uniform(-1, 1, (2, 3, 5))
    G = adpasses.vmap(adpasses.grad(two_updates, (0, 1)))(X, Y)
    for i in range(3):
        for k, theirs in enumerate(finite_differences(two_updates, [X[i], Y[i]], [0, 1])):
            np.testing.assert_allclose(G[k][i], theirs, rtol=1e-6, atol=1e-8)
