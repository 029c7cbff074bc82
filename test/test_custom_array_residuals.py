"""Array residuals of custom_vjp rules (docs/custom_rules.md): `fwd` returns
one of its array arguments as a residual and `bwd` reads it. The reverse
rule must read the contents the array had at the call, also when the caller
overwrites the array afterwards (in place, in a time loop, under a memory
limit): the plan snapshots it there (`reverse/rules/func.py`,
`_array_residuals`). Before, bwd read the array as the reverse sweep found
it: silently wrong gradients. Checked against central finite differences of
plain Python on random inputs; Hessians (forward over reverse) through the
snapshot; an augmented primal writing its array residual is an error."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

import adpasses
from adpasses.core.diagnostics import CompileError


@adpasses.custom_vjp
def cubes(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] ** 3
    return s


def cubes_fwd(x):
    return cubes(x), x  # the array itself is the residual


def cubes_bwd(x, g):
    d = np.zeros(len(x))
    for i in range(len(x)):
        d[i] = 3.0 * g * x[i] ** 2
    return (d,)


cubes.defvjp(cubes_fwd, cubes_bwd)


@adpasses.custom_vjp
def norm(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return math.sqrt(s)


def norm_fwd(x):
    n = norm(x)
    return n, (x, n)


def norm_bwd(res, g):
    x, n = res
    d = np.zeros(len(x))
    for i in range(len(x)):
        d[i] = g * x[i] / n
    return (d,)


norm.defvjp(norm_fwd, norm_bwd)


@adpasses.jit
def overwritten_after(x):
    e = cubes(x)
    for i in range(len(x)):
        x[i] = 2.0 * x[i] + 1.0
    return e + 0.5 * cubes(x)


def overwritten_after_py(x):
    x = x.copy()
    e = np.sum(x**3)
    x = 2.0 * x + 1.0
    return e + 0.5 * np.sum(x**3)


@adpasses.jit
def time_loop(x, n):
    e = 0.0
    for t in range(n):
        e += cubes(x)
        for i in range(len(x)):
            x[i] = x[i] * 0.9 + 0.05
    return e


def time_loop_py(x, n):
    x = x.copy()
    e = 0.0
    for t in range(n):
        e += np.sum(x**3)
        x = 0.9 * x + 0.05
    return e


@adpasses.jit
def one_element_changed(x, y):
    a = norm(x)
    x[0] = y[0] * 3.0
    return a * a + norm(x)


def one_element_changed_py(x, y):
    x = x.copy()
    a = np.linalg.norm(x)
    x[0] = y[0] * 3.0
    return a * a + np.linalg.norm(x)


@pytest.mark.parametrize("seed", range(3))
def test_the_rule_reads_the_array_as_it_was_at_the_call(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, 3 + 2 * seed)
    assert overwritten_after(x.copy()) == pytest.approx(overwritten_after_py(x), rel=1e-12)
    (fd,) = finite_differences(overwritten_after_py, [x], [0])
    assert_matches(adpasses.grad(overwritten_after)(x.copy()), fd, what="overwritten after the call")
    y = rng.uniform(-1, 1, 2)
    fx, fy = finite_differences(one_element_changed_py, [x, y], [0, 1])
    gx, gy = adpasses.grad(one_element_changed, (0, 1))(x.copy(), y)
    assert_matches(gx, fx, what="one element changed: x")
    assert_matches(gy, fy, what="one element changed: y")


@pytest.mark.parametrize("limit", [None, "200B"])
def test_in_a_time_loop_and_under_a_memory_limit(limit) -> None:
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, 4)
    for steps in (1, 6, 40):
        (fd,) = finite_differences(lambda z: time_loop_py(z, steps), [x], [0])
        g = adpasses.grad(time_loop, memory_limit=limit)(x.copy(), steps)
        assert_matches(g, fd, what=f"time loop of {steps} steps, memory_limit={limit}")


def test_hessian_through_the_snapshot() -> None:
    rng = np.random.default_rng(9)
    x = rng.uniform(-1, 1, 4)
    H = adpasses.hessian(overwritten_after)(x.copy())
    expected = np.diag(6.0 * x + 0.5 * 6.0 * 2.0 * (2.0 * x + 1.0) * 2.0)  # d2/dx2 of the sums of cubes
    assert_matches(H, expected, what="hessian")


def test_the_report_shows_the_snapshot() -> None:
    report = str(adpasses.cache_report(overwritten_after, np.ones(3)))
    assert "snapshot" in report and "memory of func.call @cubes" in report, report


def test_an_augmented_primal_writing_its_array_residual_is_an_error(tmp_path, monkeypatch) -> None:
    source = textwrap.dedent("""
        import numpy as np
        import adpasses

        @adpasses.custom_vjp
        def scaled(x):
            s = 0.0
            for i in range(len(x)):
                s += x[i]
            return s

        def scaled_fwd(x):
            x[0] = 2.0 * x[0]
            return scaled(x), x

        def scaled_bwd(x, g):
            return (np.ones(len(x)) * g,)

        scaled.defvjp(scaled_fwd, scaled_bwd)

        @adpasses.jit
        def use(x):
            return scaled(x) * 2.0
    """)
    (tmp_path / "writes_residual.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    import writes_residual

    with pytest.raises(CompileError, match=r"writes_residual\.py:\d+:\d+: error: .*writes argument 0, "
                                           r"which it also returns as an array residual"):
        adpasses.grad(writes_residual.use)(np.ones(3))


@adpasses.custom_vjp
def log_sum_exp(x):
    m = np.max(x)
    return m + math.log(np.sum(np.exp(x - m)))


def log_sum_exp_fwd(x):
    v = log_sum_exp(x)
    return v, (x, v)


def log_sum_exp_bwd(res, g):
    x, v = res
    return (g * np.exp(x - v),)  # an array expression, not a named array


log_sum_exp.defvjp(log_sum_exp_fwd, log_sum_exp_bwd)


@adpasses.jit
def softmax_loss(x, w):
    e = log_sum_exp(x)
    for i in range(len(x)):
        x[i] = x[i] * w[i]  # overwrites the residual too
    return 2.0 * e + log_sum_exp(x)


def softmax_loss_py(x, w):
    lse = lambda z: np.log(np.sum(np.exp(z)))  # noqa: E731
    return 2.0 * lse(x) + lse(x * w)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_cotangent_written_as_an_array_expression(dtype) -> None:
    """`return (g * np.exp(x - v),)` was a CompileError naming an internal
    class ('returns ArrayExpr'); it is computed into an array."""
    rng = np.random.default_rng(11)
    x, w = rng.normal(size=5), rng.uniform(0.5, 1.5, 5)
    fx, fw = finite_differences(softmax_loss_py, [x, w], [0, 1])
    gx, gw = adpasses.grad(softmax_loss, (0, 1))(x.astype(dtype), w.astype(dtype))
    assert gx.dtype == dtype
    assert_matches(gx, fx, float32=dtype == np.float32, what="x")
    assert_matches(gw, fw, float32=dtype == np.float32, what="w")


@adpasses.custom_vjp
def scaled_sum(x):
    return np.sum(x * x)


def scaled_sum_fwd(x):
    return scaled_sum(x), (x * 2.0,)  # an array expression, not an argument


def scaled_sum_bwd(res, g):
    return (g * res[0],)


scaled_sum.defvjp(scaled_sum_fwd, scaled_sum_bwd)


def uses_scaled_sum(x):
    return scaled_sum(x) * 3.0


def test_an_array_expression_residual_is_named_in_the_error() -> None:
    """The message named the frontend's class ("returns ArrayExpr among them")."""
    with pytest.raises(CompileError, match=r"residuals must be numbers, .* but scaled_sum_fwd returns an "
                                           r"array expression among them"):
        adpasses.grad(uses_scaled_sum)(np.ones(3))
