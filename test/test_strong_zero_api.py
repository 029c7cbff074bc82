"""`strong_zero` from Python (issue 20): `grad`, `value_and_grad` and
`autodiff` take Enzyme's flag, and it reaches the derivative rules the
op table does not cover: matrix products (differentiated as their loop
nest, each term guarded) and custom rules (a custom_vjp's reverse rule is
not run when every cotangent it gets is zero; a custom_jvp rule's tangents
are contracted with zero-guarded terms). Each case is checked at a point
where plain IEEE accumulation gives nan (the test would fail without the
flag) and at random points against the gradient without it and central
differences."""

from __future__ import annotations

import math

import numpy as np
import pytest

import adpasses


def scaled_sqrt(x, y):  # type: ignore[no-untyped-def]
    return y * math.sqrt(x)


def test_grad_and_value_and_grad_take_the_flag() -> None:
    plain = adpasses.grad(scaled_sqrt, (0, 1))(0.0, 0.0)
    assert math.isnan(plain[0])  # 0 * inf: what strong zero is for
    assert adpasses.grad(scaled_sqrt, (0, 1), strong_zero=True)(0.0, 0.0) == (0.0, 0.0)
    value, (dx, dy) = adpasses.value_and_grad(scaled_sqrt, (0, 1), strong_zero=True)(4.0, 3.0)
    assert (value, dx, dy) == (6.0, 0.75, 2.0)
    rng = np.random.default_rng(3)
    for _ in range(3):
        x, y = float(rng.uniform(0.1, 2)), float(rng.standard_normal())
        assert adpasses.grad(scaled_sqrt, (0, 1), strong_zero=True)(x, y) == adpasses.grad(
            scaled_sqrt, (0, 1))(x, y)


def log_sum(x, s):  # type: ignore[no-untyped-def]
    t = 0.0
    for i in range(len(x)):
        t += s * math.log(x[i])
    return t


def test_autodiff_takes_the_flag() -> None:
    x = np.array([0.0, 1.0, 2.0])
    dx = np.zeros(3)
    adpasses.autodiff(log_sum, adpasses.Duplicated(x, dx), adpasses.Active(0.0))
    assert math.isnan(dx[0])
    dx[:] = 0.0
    (_, ds) = adpasses.autodiff(log_sum, adpasses.Duplicated(x, dx), adpasses.Active(0.0), strong_zero=True)
    assert list(dx) == [0.0, 0.0, 0.0] and ds == -math.inf
    with pytest.raises(TypeError, match="strong_zero must be True or False"):
        adpasses.grad(scaled_sqrt, strong_zero="yes")


def weighted_product(a, b, w):  # type: ignore[no-untyped-def]
    c = a @ b
    t = 0.0
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            t += w[i, j] * c[i, j]
    return t


def test_matrix_products_are_guarded_term_by_term() -> None:
    a = np.array([[1.0, 2.0], [0.0, 3.0]])
    b = np.array([[np.inf, 1.0], [0.5, 2.0]])
    w = np.array([[0.0, 1.0], [1.0, 1.0]])
    plain = adpasses.grad(weighted_product, 0)(a, b, w)
    assert math.isnan(plain[0, 0])  # 0 * inf + 1 * 1
    strong = adpasses.grad(weighted_product, 0, strong_zero=True)(a, b, w)
    # dA[i, k] = sum_j w[i, j] b[k, j], a term with w = 0 counting 0.
    expected = np.array([[sum(w[i, j] * b[k, j] for j in range(2) if w[i, j] != 0) for k in range(2)]
                         for i in range(2)])
    np.testing.assert_array_equal(strong, expected)
    rng = np.random.default_rng(4)
    a, b, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal((3, 2))
    db = adpasses.grad(weighted_product, 1, strong_zero=True)(a, b, w)
    np.testing.assert_allclose(db, adpasses.grad(weighted_product, 1)(a, b, w), rtol=1e-13)
    np.testing.assert_allclose(db, a.T @ w, rtol=1e-13)


@adpasses.custom_vjp
def root(x):  # type: ignore[no-untyped-def]
    return math.sqrt(x)


def root_fwd(x):  # type: ignore[no-untyped-def]
    return math.sqrt(x), x


def root_bwd(x, g):  # type: ignore[no-untyped-def]
    return (g / (2.0 * math.sqrt(x)),)


root.defvjp(root_fwd, root_bwd)


def scaled_root(x, y):  # type: ignore[no-untyped-def]
    return y * root(x)


@adpasses.custom_jvp
def jroot(x):  # type: ignore[no-untyped-def]
    return math.sqrt(x)


@jroot.defjvp
def jroot_jvp(primals, tangents):  # type: ignore[no-untyped-def]
    (x,), (t,) = primals, tangents
    r = math.sqrt(x)
    return r, t / (2.0 * r)


def scaled_jroot(x, y):  # type: ignore[no-untyped-def]
    return y * jroot(x)


@pytest.mark.parametrize("f", [scaled_root, scaled_jroot], ids=["custom_vjp", "custom_jvp"])
def test_custom_rules_give_zero_for_a_zero_cotangent(f) -> None:  # type: ignore[no-untyped-def]
    assert math.isnan(adpasses.grad(f, 0)(0.0, 0.0))
    assert adpasses.grad(f, (0, 1), strong_zero=True)(0.0, 0.0) == (0.0, 0.0)
    rng = np.random.default_rng(5)
    for _ in range(3):
        x, y = float(rng.uniform(0.2, 2.0)), float(rng.standard_normal())
        dx, dy = adpasses.grad(f, (0, 1), strong_zero=True)(x, y)
        assert dx == pytest.approx(y / (2 * math.sqrt(x)), rel=1e-14) and dy == pytest.approx(math.sqrt(x))
        h = 1e-6
        assert dx == pytest.approx((f(x + h, y) - f(x - h, y)) / (2 * h), rel=1e-6)
