"""scipy.special in compiled code (frontend/special_calls.py; the ops of
adpasses/ops/special.py): values against scipy itself (numbers, arrays,
float32, edges: inf, nan, 0 log 0), gradients and Hessians against central
finite differences of the Python function on random inputs, logsumexp
over every axis, and located errors for what is not compiled."""

from __future__ import annotations

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

import adpasses

sp = pytest.importorskip("scipy.special")
import scipy.special  # noqa: E402  (the module-attribute spelling)
from scipy.special import expit, gammaln, logsumexp, xlogy  # noqa: E402

RNG = np.random.default_rng(2016)


def scalar_loop(x, y):
    s = 0.0
    for i in range(len(x)):
        s += sp.expit(x[i]) * sp.log_expit(x[i]) + scipy.special.erfc(x[i]) + gammaln(y[i])
        s += xlogy(x[i], y[i]) + sp.logit(sp.expit(0.5 * x[i])) + sp.psi(y[i]) + sp.digamma(y[i])
        s += sp.polygamma(1, y[i]) + sp.erf(x[i]) * sp.gamma(y[i])
    return s


def whole_arrays(x, y):
    return (np.sum(expit(x) * sp.xlogy(x, y)) + logsumexp(x) + np.sum(sp.polygamma(2, y))
            + np.mean(gammaln(y) * sp.log_expit(-x)) + np.sum(sp.erfc(x) * sp.logit(expit(x))))


def lse_axes(M):
    w = np.arange(M.shape[1]) * 0.5
    return (np.sum(logsumexp(M, axis=0) * w) + np.sum(logsumexp(M, axis=1) ** 2) + logsumexp(M)
            + np.sum(sp.logsumexp(M, axis=-1)) + logsumexp(M, None))


def elementwise_results(x, y):
    return sp.expit(x), sp.log_expit(x), sp.erfc(x), sp.xlogy(x, y), gammaln(y), sp.polygamma(1, y)


def lse_results(M):
    return logsumexp(M, axis=0), logsumexp(M, axis=1), logsumexp(M)


def test_values_match_scipy_on_numbers_arrays_and_edges():
    x = np.array([-800.0, -40.0, -3.0, -1e-9, 0.0, 0.7, 3.0, 40.0, 800.0, np.inf, -np.inf, np.nan])
    y = np.array([0.0, 0.0, 2.0, 0.5, 0.0, 3.0, 1.0, np.nan, 2.0, 1.0, 4.0, 0.0])
    got = adpasses.jit(elementwise_results)(x, np.abs(y) + 0.25)
    want = elementwise_results(x, np.abs(y) + 0.25)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-300, equal_nan=True)
    # xlogy(0, y) = 0 for every y but NaN, as scipy
    xs, ys = np.array([0.0, 0.0, 0.0, 0.0, 2.0]), np.array([0.0, np.inf, np.nan, 3.0, 0.0])
    np.testing.assert_array_equal(adpasses.jit(elementwise_results)(xs, ys)[3], sp.xlogy(xs, ys))
    p = np.array([1e-300, 1e-9, 0.1, 0.5, 0.9, 1 - 1e-9, 0.0, 1.0])
    np.testing.assert_allclose(adpasses.jit(lambda_free_logit)(p), sp.logit(p), rtol=1e-9)


def lambda_free_logit(p):
    return sp.logit(p)


def gamma_family(y):
    return (sp.digamma(y), sp.psi(y), sp.polygamma(0, y), sp.polygamma(1, y), sp.polygamma(2, y),
            sp.polygamma(3, y), sp.gamma(y), gammaln(y))


def digamma_of_a_number(v):
    return sp.digamma(v), sp.polygamma(2, v)


POLES = np.array([0.0, -0.0, -1.0, -2.0, -7.0, -1e30, -np.inf, 1e-300, -1e-300, -2.5, 3.0, np.nan])


def test_gamma_family_at_the_poles_matches_scipy():
    """digamma(+-0) is -1/x (-inf at +0, +inf at -0) and nan at the negative
    poles; polygamma(n >= 1, x) is (-1)^(n+1) inf at every pole (the sign of
    zero does not matter; -inf and floats below -2^52 are poles); gamma and
    gammaln as scipy: values and signs bit for bit (nan where scipy's is)."""
    got, want = adpasses.jit(gamma_family)(POLES), gamma_family(POLES)
    # gammaln(-inf): scipy's is -inf, C's lgamma and Python's math.lgamma
    # +inf (one op serves both; docs/frontend.md)
    assert got[-1][6] == np.inf and want[-1][6] == -np.inf
    got[-1][6] = want[-1][6]
    for g, w in zip(got, want):
        exact = ~np.isfinite(w)
        np.testing.assert_array_equal(g[exact], w[exact])
        np.testing.assert_allclose(g[~exact], w[~exact], rtol=1e-13)
    for v in (0.0, -0.0, -3.0):
        np.testing.assert_array_equal(adpasses.jit(digamma_of_a_number)(v), digamma_of_a_number(v))
    # the derivatives are the same functions: d gammaln = digamma at the pole 0
    assert adpasses.grad(lambda t: sp.gammaln(t))(0.0) == sp.digamma(0.0) == -np.inf


def test_float32_stays_float32():
    x = RNG.uniform(-3, 3, 7).astype(np.float32)
    got = adpasses.jit(lambda_free_logit)(sp.expit(x).astype(np.float32))
    assert got.dtype == np.float32
    out = adpasses.jit(elementwise_results)(x, np.abs(x) + np.float32(0.5))
    for g, w in zip(out[:3], elementwise_results(x, np.abs(x) + np.float32(0.5))[:3]):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("shape", [(3, 4), (1, 5), (6, 1)])
def test_logsumexp_every_axis_matches_scipy(shape):
    M = RNG.normal(size=shape) * 3
    for got, want in zip(adpasses.jit(lse_results)(M), lse_results(M)):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    # infinities: scipy's shift by 0 where the max is not finite
    N = np.array([[-np.inf, -np.inf, 1.0], [-np.inf, 2.0, np.inf], [-np.inf, -np.inf, -np.inf]])
    for got, want in zip(adpasses.jit(lse_results)(N), lse_results(N)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fn", [scalar_loop, whole_arrays])
def test_gradients_match_finite_differences(fn):
    for _ in range(3):
        x = RNG.uniform(-2.0, 2.0, 6)
        y = RNG.uniform(0.5, 3.0, 6)
        gx, gy = adpasses.grad(fn, argnums=(0, 1))(x, y)
        fx, fy = finite_differences(fn, [x, y], [0, 1])
        assert_matches(gx, fx, what="d/dx")
        assert_matches(gy, fy, what="d/dy")


def test_logsumexp_gradient_and_hessian():
    for _ in range(3):
        M = RNG.normal(size=(3, 5))
        assert_matches(adpasses.grad(lse_axes)(M), finite_differences(lse_axes, [M], [0])[0])
    x = RNG.normal(size=5)
    H = adpasses.hessian(lse_vector)(x)
    s = np.exp(x - sp.logsumexp(x))
    assert_matches(H, np.diag(s) - np.outer(s, s), what="Hessian of logsumexp: diag(s) - s s^T")


def lse_vector(x):
    return logsumexp(x)


def test_hessian_of_the_scalar_ops():
    x = RNG.uniform(-1.5, 1.5, 4)
    y = RNG.uniform(0.5, 2.5, 4)
    grad = adpasses.grad(scalar_loop, argnums=0)
    H = adpasses.hessian(scalar_loop)(x, y)
    fd = np.array([finite_differences(lambda z, j=j: grad(z, y)[j], [x], [0])[0] for j in range(4)])
    assert_matches(H, fd, what="Hessian (forward over reverse of expit, log_expit, erfc, xlogy, logit)")


def unsupported_ufunc(x):
    return sp.beta(x, 2.0)


def unsupported_function(x):
    return np.sum(sp.softmax(x))


def lse_with_b(x):
    return sp.logsumexp(x, b=x)


def float_order(x):
    return sp.polygamma(1.5, x)


def with_out(x):
    return sp.expit(x, out=x)


@pytest.mark.parametrize("fn, message", [
    (unsupported_ufunc, r"scipy.special.beta is not supported in compiled code \(compiled from scipy.special: "
                        r"digamma, erf, erfc, expit, gamma, gammaln, log_expit, logit, logsumexp, polygamma, "
                        r"psi, xlogy\)"),
    (unsupported_function, r"scipy.special.softmax is not supported in compiled code"),
    (lse_with_b, r"scipy.special.logsumexp in compiled code takes a and axis=, not b="),
    (float_order, r"scipy.special.polygamma\(n, x\) in compiled code takes an int order n"),
    (with_out, r"scipy.special.expit takes no keyword arguments in compiled code"),
])
def test_unsupported_uses_are_located_errors(fn, message):
    with pytest.raises(adpasses.CompileError, match=r"test_scipy_special.py:\d+:\d+: error: " + message):
        adpasses.jit(fn)(np.ones(3))
