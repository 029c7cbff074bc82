"""math.lgamma and math.gamma in compiled code, and the special dialect's
digamma and polygamma their derivatives compile to (adpasses/ops/special.py,
adpasses/lowering/special.py).

Values against scipy.special (the reference implementation) over the real
line, poles and edges included; gradients, forward tangents and Hessians
(forward over reverse: polygamma(1) and polygamma(2) compiled) against
central finite differences of the Python function on random inputs. The
op-table tests (test_rules_numeric, test_forward_rules) check each entry's
partials on its own.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

import adpasses
from adpasses.core.context import parse_module
from adpasses.native.llvm_jit import compile_module

special = pytest.importorskip("scipy.special")

SOURCE = """
func.func @lgamma(%x: f64) -> f64 {
  %r = special.lgamma %x : f64
  func.return %r : f64
}
func.func @gamma(%x: f64) -> f64 {
  %r = special.gamma %x : f64
  func.return %r : f64
}
func.func @polygamma(%x: f64, %n: i32) -> f64 {
  %r = special.polygamma %x, %n : f64, i32
  func.return %r : f64
}
func.func @polygamma_index(%x: f64, %n: index) -> f64 {
  %r = special.polygamma %x, %n : f64, index
  func.return %r : f64
}
func.func @digamma32(%x: f32) -> f32 {
  %r = special.digamma %x : f32
  func.return %r : f32
}
"""


@pytest.fixture(scope="module")
def compiled():  # type: ignore[no-untyped-def]
    return compile_module(parse_module(SOURCE, "special.mlir"))


def _points() -> np.ndarray:
    rng = np.random.default_rng(16)
    return np.concatenate([
        rng.uniform(1e-3, 40.0, 400), 10.0 ** rng.uniform(-8, 8, 100),
        np.linspace(1.2, 1.75, 101),                       # around digamma's root
        rng.uniform(-25.0, 0.0, 300),                      # reflection / recurrence
        [1.0, 2.0, 0.5, 9.999999999999998, 10.0, 12.0, 1e300],
    ])


@pytest.mark.parametrize("n", range(0, 6))
def test_polygamma_matches_scipy(compiled, n: int) -> None:  # type: ignore[no-untyped-def]
    worst = 0.0
    for x in _points():
        want = special.digamma(x) if n == 0 else special.polygamma(n, x)
        if not np.isfinite(want):
            continue
        got = compiled["polygamma"](float(x), n)
        # near the negative poles the reference itself loses digits
        scale = max(abs(want), 1e-300) if x > 0 else max(abs(want), 1.0)
        err = abs(got - want) / scale
        worst = max(worst, err)
        assert err < (1e-13 if x > 0 else 1e-12), (n, x, got, want)
    assert compiled["polygamma_index"](2.5, n) == compiled["polygamma"](2.5, n)
    assert worst > 0.0 or n == 0  # compared something


def test_digamma_is_accurate_near_its_root(compiled) -> None:  # type: ignore[no-untyped-def]
    """The recurrence alone cancels there (|psi| << 1): the series about
    the root keeps the relative accuracy."""
    for x in np.linspace(1.45, 1.475, 51):
        want = special.digamma(x)
        assert compiled["polygamma"](float(x), 0) == pytest.approx(want, rel=1e-12, abs=1e-17)


def test_lgamma_and_gamma_match_scipy(compiled) -> None:  # type: ignore[no-untyped-def]
    for x in _points():
        if x > 0:
            assert compiled["lgamma"](float(x)) == pytest.approx(special.gammaln(x), rel=1e-13, abs=1e-15)
        want = special.gamma(x)
        if np.isfinite(want):
            assert compiled["gamma"](float(x)) == pytest.approx(want, rel=1e-13)


def test_poles_edges_and_float32(compiled) -> None:  # type: ignore[no-untyped-def]
    pg = compiled["polygamma"]
    nan, inf = math.nan, math.inf
    assert math.isnan(pg(nan, 0)) and math.isnan(pg(nan, 2))
    assert math.isnan(pg(-2.0, 0)) and math.isnan(pg(-inf, 0))     # a pole of digamma
    assert pg(inf, 0) == inf and pg(inf, 1) == 0.0
    assert math.isnan(pg(1.5, -1))                                   # no negative order
    assert pg(0.0, 1) == inf and pg(-3.0, 2) == -inf                 # scipy's signs
    assert math.isnan(pg(-1e7 - 0.5, 1))                             # documented limit
    assert pg(-1e7, 1) == inf and pg(-inf, 2) == -inf and pg(-0.0, 2) == -inf  # poles, as scipy
    assert pg(0.0, 0) == -inf and pg(-0.0, 0) == inf                 # digamma(+-0) = -1/x, as scipy
    assert compiled["lgamma"](0.0) == inf and compiled["lgamma"](-1.0) == inf
    assert compiled["digamma32"](2.5) == pytest.approx(float(np.float32(special.digamma(2.5))), rel=1e-7)


# -- through the frontend: math.lgamma, math.gamma -------------------------------------


def loglik(x, a):  # type: ignore[no-untyped-def]
    """A gamma log-likelihood: lgamma of data and parameters."""
    s = 0.0
    for i in range(len(x)):
        s += (a - 1.0) * math.log(x[i]) - math.lgamma(a) + math.lgamma(x[i] + a) * 0.5
        s += math.gamma(x[i] * 0.5 + a) * 0.01
    return s


def beta_fn(a, b):  # type: ignore[no-untyped-def]
    return math.exp(math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)) + math.gamma(a * b)


@pytest.mark.parametrize("seed", range(3))
def test_grad_matches_finite_differences(seed: int) -> None:
    rng = np.random.default_rng(160 + seed)
    x, a = rng.uniform(0.3, 4.0, 7), float(rng.uniform(0.5, 3.0))
    gx, ga = adpasses.grad(loglik, (0, 1))(x, a)
    fx, fa = finite_differences(loglik, [x, a], [0, 1])
    assert_matches(gx, fx, what="d/dx")
    assert_matches(ga, fa, what="d/da")
    assert adpasses.jit(loglik)(x, a) == pytest.approx(loglik(x, a), rel=1e-13)
    a2, b2 = (float(v) for v in rng.uniform(0.3, 2.5, 2))
    assert_matches(adpasses.grad(beta_fn, (0, 1))(a2, b2), finite_differences(beta_fn, [a2, b2], [0, 1]))


@pytest.mark.parametrize("seed", range(3))
def test_jvp_matches_finite_differences(seed: int) -> None:
    rng = np.random.default_rng(170 + seed)
    x, a = rng.uniform(0.3, 4.0, 5), float(rng.uniform(0.5, 3.0))
    u, da = rng.normal(size=5), float(rng.normal())
    value, tangent = adpasses.jvp(loglik, (x, a), (u, da))
    fx, fa = finite_differences(loglik, [x, a], [0, 1])
    assert value == pytest.approx(loglik(x, a), rel=1e-13)
    assert tangent == pytest.approx(fx @ u + fa * da, rel=1e-6, abs=1e-8)


def lgamma_sum(x):  # type: ignore[no-untyped-def]
    s = 0.0
    for i in range(len(x)):
        s += math.lgamma(x[i] * x[(i + 1) % len(x)] + 0.5) + math.gamma(x[i])
    return s


@pytest.mark.parametrize("seed", range(2))
def test_hessian_matches_differences_of_the_gradient(seed: int) -> None:
    """Forward over reverse: the Hessian needs polygamma(1) (trigamma) of
    lgamma and polygamma(1) of gamma's digamma; compared with central
    differences of the gradient's finite-difference oracle (the Python
    function, twice)."""
    rng = np.random.default_rng(180 + seed)
    x = rng.uniform(0.5, 2.5, 4)
    hess = adpasses.hessian(lgamma_sum)(x)
    want = np.zeros((4, 4))
    for j in range(4):
        h = 1e-4 * max(1.0, abs(x[j]))
        up, down = x.copy(), x.copy()
        up[j] += h
        down[j] -= h
        want[:, j] = (finite_differences(lgamma_sum, [up], [0])[0]
                      - finite_differences(lgamma_sum, [down], [0])[0]) / (2 * h)
    np.testing.assert_allclose(hess, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-12, atol=1e-12)
    # an exact check of one diagonal entry: d^2/dx^2 gamma(x) = gamma(x)(psi(x)^2 + psi'(x)), the rest
    # of lgamma_sum's x[0] x[0] entry is lgamma'' of its two terms times their squared inner derivatives
    x0, x1, x3 = x[0], x[1], x[3]
    exact = (special.gamma(x0) * (special.digamma(x0) ** 2 + special.polygamma(1, x0))
             + special.polygamma(1, x0 * x1 + 0.5) * x1 ** 2 + special.polygamma(1, x3 * x0 + 0.5) * x3 ** 2)
    assert hess[0, 0] == pytest.approx(exact, rel=1e-12)
