"""`adpasses.checkpoint(g)`: calls recomputed in the reverse sweep.

Each kernel exists twice: calling `g` through `adpasses.checkpoint` (the
call stays a `func.call` marked `ad.checkpoint`; its gradient calls g's
gradient on restored inputs) and calling `g` plainly (inlined, taped as
usual). The gradients must agree to rounding, and both must match central
finite differences of the plain Python function, on random inputs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import adpasses
from finite_diff import assert_matches, finite_differences


def pair(body):
    """The kernel with `g` checkpointed and with `g` plain, compiled."""
    return adpasses.jit(body(True)), adpasses.jit(body(False)), body(False)


def scalar_kernel(ck):
    def g(x, y):
        return math.exp(math.sin(x) * y)

    h = adpasses.checkpoint(g) if ck else g

    def f(x, y):
        u = x * x
        return h(u, y) * u + h(y, x)

    return f


def euler_kernel(ck):
    def step(u, du, dt):
        n = len(u)
        for i in range(1, n):
            du[i] = -u[i] ** 3 + 0.1 * u[i - 1]
        for i in range(1, n):
            u[i] = u[i] + dt * du[i]

    h = adpasses.checkpoint(step) if ck else step

    def f(u, steps, dt):
        n = len(u)
        du = np.zeros(n)
        for t in range(steps):
            h(u, du, dt)
        s = 0.0
        for i in range(n):
            s += math.sin(u[i]) * u[i]
        return s

    return f


def scalar_state_kernel(ck):
    def g(s, w):
        return math.tanh(s * w + 0.5) + 0.1 * s

    h = adpasses.checkpoint(g) if ck else g

    def f(w, steps):
        s = 0.3
        for t in range(steps):
            s = h(s, w[t % len(w)])
        return s * s

    return f


def overwritten_later_kernel(ck):
    """g reads `a`, which the caller overwrites after the call (in the same
    iteration and in later ones): its contents at the call are snapshot."""

    def g(a, b):
        s = 0.0
        for i in range(len(a)):
            s += math.exp(a[i] * b[i])
        return s

    h = adpasses.checkpoint(g) if ck else g

    def f(a, b, iters):
        total = 0.0
        for k in range(iters):
            total += h(a, b)
            for i in range(len(a)):
                a[i] = 0.5 * a[i] + 0.1 * b[i] * total
        return total

    return f


def nested_kernel(ck):
    def inner(x, v):
        for i in range(len(v)):
            v[i] = math.sin(v[i] * x)

    hi = adpasses.checkpoint(inner) if ck else inner

    def outer(x, v):
        hi(x, v)
        hi(x + 1.0, v)
        s = 0.0
        for i in range(len(v)):
            s += v[i] * v[i]
        return s

    ho = adpasses.checkpoint(outer) if ck else outer

    def f(x, v):
        a = ho(x, v)
        return a + ho(a * 0.1, v)

    return f


@pytest.mark.parametrize("argnums", [(0,), (1,), (0, 1)])
def test_scalar_callee(argnums):
    ck, plain, py = pair(scalar_kernel)
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-1, 1, 2)
    got = adpasses.grad(ck, argnums)(x, y)
    ref = adpasses.grad(plain, argnums)(x, y)
    fd = finite_differences(py, [x, y], argnums)
    np.testing.assert_allclose(got, ref, rtol=1e-13)
    assert_matches(np.array(got, dtype=float).ravel(), np.array(fd).ravel())


@pytest.mark.parametrize("steps", [0, 1, 7])
def test_callee_overwriting_an_array_in_a_time_loop(steps):
    ck, plain, py = pair(euler_kernel)
    rng = np.random.default_rng(steps)
    u = rng.uniform(0.2, 0.9, 9)
    got = adpasses.grad(ck)(u.copy(), steps, 0.05)
    ref = adpasses.grad(plain)(u.copy(), steps, 0.05)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-15)
    assert_matches(got, finite_differences(py, [u, steps, 0.05], [0])[0])


def test_callee_in_a_loop_with_scalar_state():
    ck, plain, py = pair(scalar_state_kernel)
    w = np.random.default_rng(3).uniform(-1, 1, 5)
    got = adpasses.grad(ck)(w, 11)
    np.testing.assert_allclose(got, adpasses.grad(plain)(w, 11), rtol=1e-12, atol=1e-15)
    assert_matches(got, finite_differences(py, [w, 11], [0])[0])


def test_callee_reading_an_array_overwritten_later():
    ck, plain, py = pair(overwritten_later_kernel)
    rng = np.random.default_rng(4)
    a, b = rng.uniform(-0.5, 0.5, 6), rng.uniform(-0.5, 0.5, 6)
    got = adpasses.grad(ck, (0, 1))(a.copy(), b.copy(), 3)
    ref = adpasses.grad(plain, (0, 1))(a.copy(), b.copy(), 3)
    fd = finite_differences(py, [a, b, 3], [0, 1])
    for g, r, d in zip(got, ref, fd):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-15)
        assert_matches(g, d)


def test_nested_checkpoints():
    ck, plain, py = pair(nested_kernel)
    rng = np.random.default_rng(5)
    x, v = 0.7, rng.uniform(-1, 1, 4)
    got = adpasses.grad(ck, (0, 1))(x, v.copy())
    ref = adpasses.grad(plain, (0, 1))(x, v.copy())
    fd = finite_differences(py, [x, v, ], [0, 1])
    for g, r, d in zip(got, ref, fd):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-15)
        assert_matches(np.atleast_1d(g), np.atleast_1d(d))


def test_primal_result_and_arrays_are_unchanged_by_checkpointing():
    """The reverse sweep reruns the callee on a scratch copy: the mutated
    argument ends as the primal leaves it (value_and_grad on a dup array
    through autodiff), and the value is the primal's."""
    ck, plain, _ = pair(euler_kernel)
    u = np.random.default_rng(6).uniform(0.2, 0.9, 9)
    u1, u2, du1, du2 = u.copy(), u.copy(), np.zeros(9), np.zeros(9)
    r1 = adpasses.autodiff(ck, adpasses.Duplicated(u1, du1), 5, 0.05, return_primal=True)
    r2 = adpasses.autodiff(plain, adpasses.Duplicated(u2, du2), 5, 0.05, return_primal=True)
    np.testing.assert_array_equal(u1, u2)
    np.testing.assert_allclose(du1, du2, rtol=1e-12)
    assert r1[1] == pytest.approx(r2[1], rel=1e-15)


def test_cache_report_shows_the_snapshots_and_no_tape_of_the_callee():
    ck, plain, _ = pair(euler_kernel)
    u = np.random.default_rng(7).uniform(0.2, 0.9, 10)
    report = adpasses.cache_report(ck, u, 6, 0.05)
    snapshots = [e for e in report.entries if e.decision == "snapshot"]
    assert snapshots and all("memory of func.call" in e.op for e in snapshots)
    # Nothing per step is taped: only the final sum's sin(u[i]), once per element.
    assert all(e.count == 10 for e in report.entries if e.decision == "tape")
    # u's snapshot: one state per step (the call overwrites u).
    assert any(e.value == "%u" and e.bytes == 8 * 10 * 6 for e in snapshots)
    assert report.taped_bytes == sum(e.bytes for e in report.entries)


def test_checkpoint_from_python_calls_the_function():
    f = adpasses.checkpoint(adpasses.jit(scalar_kernel(False)))
    assert f(0.3, 0.4) == pytest.approx(scalar_kernel(False)(0.3, 0.4))
    with pytest.raises(TypeError, match="adpasses.checkpoint needs"):
        adpasses.checkpoint(3)


def test_array_allocated_inside_the_loop_is_a_clear_error():
    @adpasses.checkpoint
    def fill(t, x):
        for i in range(len(x)):
            t[i] = math.sin(x[i]) * 2.0

    def f(x):
        s = 0.0
        for k in range(3):
            t = np.zeros(len(x))
            fill(t, x)
            s += t[0] * t[1]
        return s

    with pytest.raises(adpasses.CompileError, match=r"checkpointed call whose array argument "
                       r"np.zeros\(len\(x\)\) is allocated inside a loop .* allocate it before the loop"):
        adpasses.grad(f)(np.ones(4))


def array_language_kernel(ck):
    """The callee is written with numpy array expressions: `u.copy()` and an
    elementwise expression (linalg.generic), a slice store, a reduction and
    a local scalar array (linalg.fill). Its gradient, built when the reverse
    sweep first asks for it, must see them lowered to loops like the
    caller's own array expressions."""

    def step(u, dt):
        un = u.copy()
        u[1:-1] = un[1:-1] + dt * (un[:-2] - 2.0 * un[1:-1] + un[2:]) * un[1:-1]
        u[0] = np.sum(un * un) * dt

    h = adpasses.checkpoint(step) if ck else step

    def f(u, steps):
        for t in range(steps):
            h(u, 0.1)
        return np.sum(u ** 2)

    return f


@pytest.mark.parametrize("steps", [1, 4])
def test_callee_written_with_array_expressions(steps):
    ck, plain, py = pair(array_language_kernel)
    u = np.random.default_rng(steps).uniform(-1, 1, 8)
    got = adpasses.grad(ck)(u, steps)
    np.testing.assert_allclose(got, adpasses.grad(plain)(u, steps), rtol=1e-12, atol=1e-15)
    assert_matches(got, finite_differences(py, [u, steps], [0])[0])
    # forward over reverse through the checkpointed call
    H = adpasses.hessian(ck)(u, steps)
    np.testing.assert_allclose(H, adpasses.hessian(plain)(u, steps), rtol=1e-10, atol=1e-12)


def test_forward_mode_inlines_checkpointed_calls():
    """jvp of a function calling a checkpointed function: forward mode has
    nothing to recompute, the call is inlined (it used to be a CompileError:
    "calls '@g_0', which has no body to differentiate")."""
    ck, plain, py = pair(scalar_kernel)
    rng = np.random.default_rng(5)
    x, y, dx, dy = rng.uniform(-1, 1, 4)
    value, tangent = adpasses.jvp(ck, (x, y), (dx, dy))
    assert value == pytest.approx(py(x, y), rel=1e-13)
    fd = finite_differences(py, [x, y], (0, 1))
    assert tangent == pytest.approx(fd[0] * dx + fd[1] * dy, rel=1e-6, abs=1e-8)
    assert tangent == pytest.approx(adpasses.jvp(plain, (x, y), (dx, dy))[1], rel=1e-13)
