"""grad(f) of a function with a loop but no parallel loop zero-fills its
result shadows inside the compiled gradient, serially
(`private_copies.zero_shadows_inside`, `ad.zero_shadow` without the pool's
mark), instead of the caller's `np.zeros`, which ran with the GIL held:
the fast path passes `np.empty` and Python threads calling one gradient
overlap the fills (docs/parallel.md, "Python threads calling one compiled
gradient"). Each gradient is checked against central finite differences,
and the compiled gradient is called directly with shadows full of NaN
(what `np.empty` may hand out) to show that it does the zeroing itself."""

from __future__ import annotations

import threading

import numpy as np
from xdsl.dialects import scf

import adpasses
from adpasses.dialects.ad import PARALLEL_ATTR
from benchmarks.kernels.threads import energy  # kernel 2, the threads benchmark's gradient


def read_and_written(x, w):
    # x is written (a private copy), w only read (its shadow zero-filled)
    s = 0.0
    for i in range(len(x)):
        x[i] = x[i] * w[i]
        s += x[i] * w[i]
    return s


def straight_line(v):
    return v[0] * v[1] + v[2] * v[2]


def rows(a):
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s += a[i, j] * a[i, j] * (i + 1)
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


def _loaded(gf):
    return list(gf.jf._gradients.values())


def _no_parallel_loop(lg) -> bool:
    """The gradient's module marks no loop parallel: the fills stay serial."""
    return not any(isinstance(op, scf.ForOp) and PARALLEL_ATTR in op.attributes for op in lg.module.walk())


def test_energy_shadow_is_zero_filled_by_the_gradient_and_matches_fd() -> None:
    rng = np.random.default_rng(17)
    g = adpasses.grad(adpasses.jit(energy))
    for call in range(3):  # the slow path, then the fast path
        x = rng.uniform(-0.5, 0.5, 9 + call)
        np.testing.assert_allclose(g(x), _fd(energy, [x], 0), rtol=1e-6, atol=1e-8)
    (loaded,) = _loaded(g)
    assert loaded.zeroed == {0} and loaded.private == frozenset() and _no_parallel_loop(loaded)
    # The compiled gradient itself, with a shadow of garbage: the same result.
    x = rng.uniform(-0.5, 0.5, 1000)
    dx = np.full_like(x, np.nan)
    loaded.call(x, dx, 1.0)
    np.testing.assert_array_equal(dx, g(x))
    assert np.all(np.isfinite(dx))


def test_a_read_array_beside_a_written_one() -> None:
    rng = np.random.default_rng(18)
    g = adpasses.grad(read_and_written, argnums=(0, 1))
    for _ in range(3):
        x, w = rng.uniform(-1, 1, 11), rng.uniform(-1, 1, 11)
        xb = x.copy()
        gx, gw = g(x, w)
        np.testing.assert_array_equal(x, xb)  # grad leaves its arguments unchanged
        np.testing.assert_allclose(gx, _fd(read_and_written, [xb, w], 0), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gw, _fd(read_and_written, [xb, w], 1), rtol=1e-6, atol=1e-8)
    (loaded,) = _loaded(g)
    assert loaded.private == {0} and loaded.zeroed == {1} and _no_parallel_loop(loaded)
    x, w = rng.uniform(-1, 1, 50), rng.uniform(-1, 1, 50)
    dx, dw = np.full_like(x, np.nan), np.full_like(w, np.nan)
    want = g(x, w)
    loaded.call(x, dx, w, dw, 1.0)
    np.testing.assert_array_equal(dx, want[0])
    np.testing.assert_array_equal(dw, want[1])


def test_rank_2_shadow_is_zeroed_inside_and_straight_line_code_keeps_np_zeros() -> None:
    """A gradient without a loop keeps the GIL (pyentry.releases_gil): a fill
    loop would make it give the GIL up and take it back, so it keeps the
    caller's np.zeros. A rank-2 shadow is zeroed inside (a flat view)."""
    rng = np.random.default_rng(19)
    g1, g2 = adpasses.grad(straight_line), adpasses.grad(rows)
    for _ in range(3):
        v, a = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, (4, 3))
        np.testing.assert_allclose(g1(v), _fd(straight_line, [v], 0), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(g2(a), _fd(rows, [a], 0), rtol=1e-6, atol=1e-8)
    assert [lg.zeroed for lg in _loaded(g1)] == [frozenset()]
    (loaded,) = _loaded(g2)
    assert loaded.zeroed == {0} and _no_parallel_loop(loaded)
    a = rng.uniform(-1, 1, (6, 5))
    da = np.full_like(a, np.nan)
    loaded.call(a, da, 1.0)
    np.testing.assert_array_equal(da, g2(a))


def test_threads_calling_the_gradient_at_once_get_their_own_results() -> None:
    rng = np.random.default_rng(20)
    g = adpasses.grad(adpasses.jit(energy))
    data = [rng.uniform(-0.5, 0.5, 20_000 + 7 * k) for k in range(8)]
    want = [g(x) for x in data]
    got: list[list[np.ndarray]] = [[] for _ in range(4)]
    barrier = threading.Barrier(4)

    def work(t: int) -> None:
        barrier.wait()
        for _ in range(5):
            for x in data[t::4]:
                got[t].append(g(x))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for t in range(4):
        expected = want[t::4] * 5
        assert len(got[t]) == len(expected)
        for a, b in zip(got[t], expected):
            np.testing.assert_array_equal(a, b)


def test_from_32_mib_the_caller_zeroes_with_calloc_and_the_gradient_does_not() -> None:
    """At SERIAL_ZERO_FILL_BYTES and above, calloc gets fresh zero pages and
    clears nothing with the GIL held, while a fill inside would be one more
    pass over memory: the fill is skipped (a NaN shadow stays NaN) and grad
    passes np.zeros (its result is right)."""
    from adpasses.core.parallel import SERIAL_ZERO_FILL_BYTES

    g = adpasses.grad(adpasses.jit(energy))
    n = SERIAL_ZERO_FILL_BYTES // 8
    x = np.random.default_rng(21).uniform(-0.5, 0.5, n)
    got = g(x)
    e = np.exp(-3.0 * (x + 1.0))
    rho = e.sum()
    np.testing.assert_allclose(got, -3.0 * (2 * rho + 3 * rho**2 + rho**3) * e, rtol=1e-9)
    (loaded,) = _loaded(g)
    dx = np.full(n, np.nan)
    loaded.call(x, dx, 1.0)
    assert np.isnan(dx).all()  # not filled: the caller's np.zeros is the zero
    small = x[: n - 1].copy()
    dx = np.full(n - 1, np.nan)
    loaded.call(small, dx, 1.0)
    np.testing.assert_array_equal(dx, g(small))  # one element fewer: filled inside
