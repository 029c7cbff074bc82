"""grad(f) of a function that writes its array arguments: the gradient
copies them itself (`ad-private-copies`, adpasses/transforms/private_copies.py)
instead of the caller copying them and zero-filling their shadows.

Each case: the caller's arrays are unchanged after the call (first call:
the slow path; later calls: the fast path), and the gradient matches
central finite differences of the plain Python function on random inputs.
Cases where the copy cannot fuse into the function's first loop (reads
ahead, reads before any loop), where the pass does not apply (rank 2, a
strided view) and a call that stops with a bounds error."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import adpasses
from benchmarks.kernels.inplace import square_then_sum  # kernel 5


def reversed_product(x):
    # reads x[n-1-i] after the earlier iterations overwrote it: not fusable
    n = len(x)
    s = 0.0
    for i in range(n):
        x[i] = x[i] * x[n - 1 - i]
        s += x[i]
    return s


def first_then_loop(x):
    a = x[0]
    x[0] = a * a
    s = 0.0
    for i in range(len(x)):
        x[i] = x[i] * 3.0 + a
        s += x[i] * x[i]
    return s


def with_scratch(x, out):
    # `out` is written but not differentiated: the gradient still copies it
    s = 0.0
    for i in range(len(x)):
        out[i] = x[i] * x[i]
        s += out[i] * x[i]
    return s


def two_written(x, y):
    s = 0.0
    for i in range(len(x)):
        x[i] = x[i] * y[i]
        y[i] = y[i] + x[i]
        s += x[i] * y[i]
    return s


def square_rows(a):
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] = a[i, j] * a[i, j]
            s += a[i, j]
    return s


def out_of_bounds(x):
    s = 0.0
    for i in range(len(x) + 1):
        x[i] = x[i] * 2.0
        s += x[i]
    return s


def _fd(f, args, k, h=1e-6):
    base = [np.array(a, copy=True) for a in args]
    g = np.zeros_like(base[k])
    for idx in np.ndindex(base[k].shape):
        plus = [a.copy() for a in base]
        minus = [a.copy() for a in base]
        plus[k][idx] += h
        minus[k][idx] -= h
        g[idx] = (f(*plus) - f(*minus)) / (2 * h)
    return g


def _private(gf):
    """The primal arguments the gradients compiled for `gf` copy themselves."""
    return set().union(*(lg.private for lg in gf.jf._gradients.values()))


@pytest.mark.parametrize("f, copied", [(square_then_sum, {0}), (reversed_product, {0}),
                                       (first_then_loop, {0})])
def test_written_argument_unchanged_and_gradient_matches_fd(f, copied) -> None:
    rng = np.random.default_rng(11)
    g = adpasses.grad(f)
    for call in range(3):  # the slow path, then the fast path
        x = rng.uniform(-1.5, 1.5, 9 + call)
        before = x.copy()
        got = g(x)
        np.testing.assert_array_equal(x, before)
        np.testing.assert_allclose(got, _fd(f, [before], 0), rtol=1e-6, atol=1e-7)
    assert _private(g) == copied


def test_kernel5_gradient_is_twice_x() -> None:
    rng = np.random.default_rng(5)
    g = adpasses.grad(square_then_sum)
    x = rng.uniform(-1.0, 1.0, 10**4)
    before = x.copy()
    for _ in range(3):
        np.testing.assert_array_equal(g(x), 2.0 * before)
        np.testing.assert_array_equal(x, before)


def test_value_and_grad_and_float32() -> None:
    rng = np.random.default_rng(3)
    vg = adpasses.value_and_grad(square_then_sum)
    for _ in range(2):
        x = rng.uniform(-1.0, 1.0, 33).astype(np.float32)
        before = x.copy()
        value, grad = vg(x)
        np.testing.assert_array_equal(x, before)
        assert grad.dtype == np.float32
        np.testing.assert_allclose(value, float(np.sum(before.astype(np.float64) ** 2)), rtol=1e-5)
        np.testing.assert_allclose(grad, 2.0 * before, rtol=1e-6)


def test_written_arguments_not_differentiated_are_copied_too() -> None:
    rng = np.random.default_rng(7)
    g = adpasses.grad(with_scratch)
    g2 = adpasses.grad(two_written, argnums=(0, 1))
    for _ in range(3):
        x, out = rng.uniform(-1, 1, 12), rng.uniform(-1, 1, 12)
        xb, ob = x.copy(), out.copy()
        np.testing.assert_allclose(g(x, out), _fd(with_scratch, [xb, ob], 0), rtol=1e-6, atol=1e-7)
        np.testing.assert_array_equal(x, xb)
        np.testing.assert_array_equal(out, ob)
        y = rng.uniform(-1, 1, 12)
        yb = y.copy()
        gx, gy = g2(x, y)
        np.testing.assert_allclose(gx, _fd(two_written, [xb, yb], 0), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(gy, _fd(two_written, [xb, yb], 1), rtol=1e-6, atol=1e-7)
        np.testing.assert_array_equal(x, xb)
        np.testing.assert_array_equal(y, yb)
    assert _private(g) == {1} and _private(g2) == {0, 1}  # with_scratch writes only out


def test_rank_two_and_strided_views_keep_the_caller_copy() -> None:
    rng = np.random.default_rng(9)
    g = adpasses.grad(square_rows)
    gs = adpasses.grad(square_then_sum)
    for _ in range(3):
        a = rng.uniform(-1, 1, (4, 5))
        ab = a.copy()
        np.testing.assert_allclose(g(a), 2.0 * ab, rtol=1e-12)
        np.testing.assert_array_equal(a, ab)
        base = rng.uniform(-1, 1, 20)
        bb = base.copy()
        np.testing.assert_allclose(gs(base[::2]), 2.0 * bb[::2], rtol=1e-12)
        np.testing.assert_array_equal(base, bb)
    assert _private(g) == set()


def test_bounds_error_leaves_the_argument_unchanged() -> None:
    g = adpasses.grad(out_of_bounds)
    for _ in range(2):
        x = np.linspace(0.5, 1.5, 6)
        before = x.copy()
        with pytest.raises(IndexError):
            g(x)
        np.testing.assert_array_equal(x, before)


def test_threads_calling_one_gradient() -> None:
    g = adpasses.grad(reversed_product)
    gs = adpasses.grad(square_then_sum)
    rng = np.random.default_rng(13)
    inputs = [rng.uniform(-1, 1, 200 + 17 * k) for k in range(4)]
    g(inputs[0].copy()), gs(inputs[0].copy())  # compiled before the threads start
    expected = [(_fd(reversed_product, [x], 0), 2.0 * x) for x in inputs]
    errors: list[str] = []

    def work(k: int) -> None:
        x = inputs[k].copy()
        for _ in range(200):
            a, b = g(x), gs(x)
            if not (np.allclose(a, expected[k][0], rtol=1e-6, atol=1e-6) and np.array_equal(b, expected[k][1])
                    and np.array_equal(x, inputs[k])):
                errors.append(f"thread {k}: wrong result or changed argument")
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
