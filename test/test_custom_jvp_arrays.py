"""Reverse mode through a custom_jvp rule of a function with array
arguments (grad, value_and_grad, jacrev, hessian): the rule is linear in
its tangents, so the cotangent of element i is the rule's output tangent
for a unit tangent at i, one call per element
(reverse/rules/func.py, CallRule._reverse_by_forward_rule). Every
derivative against central finite differences on random inputs; a
deliberately wrong rule shows that the rule, not the body, is used."""

from __future__ import annotations

import math

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

import adpasses

RNG = np.random.default_rng(1616)


@adpasses.custom_jvp
def wsum(x, s):
    """s * sum sin(x_i) x_i."""
    t = 0.0
    for i in range(len(x)):
        t += math.sin(x[i]) * x[i]
    return s * t


@wsum.defjvp
def wsum_jvp(primals, tangents):
    x, s = primals
    tx, ts = tangents
    t = 0.0
    d = 0.0
    for i in range(len(x)):
        t += math.sin(x[i]) * x[i]
        d += (math.cos(x[i]) * x[i] + math.sin(x[i])) * tx[i]
    return s * t, s * d + ts * t


@adpasses.custom_jvp
def quad(a, x, k):
    """sum_ij a_ij x_i x_j ** k (2-D and 1-D arrays and an int)."""
    t = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            t += a[i, j] * x[i] * x[j] ** k
    return t


@quad.defjvp
def quad_jvp(primals, tangents):
    a, x, k = primals
    ta, tx, tk = tangents
    t = 0.0
    d = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            p = x[i] * x[j] ** k
            t += a[i, j] * p
            d += ta[i, j] * p + a[i, j] * (tx[i] * x[j] ** k + x[i] * k * x[j] ** (k - 1) * tx[j])
    return t, d


@adpasses.custom_jvp
def wrong(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


@wrong.defjvp
def wrong_jvp(primals, tangents):
    (x,) = primals
    (tx,) = tangents
    s = 0.0
    d = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
        d += 3.0 * x[i] * tx[i]  # deliberately 3x, not 2x
    return s, d


def loss(x, s):
    return wsum(x, s) ** 2 + np.sum(x * x) * s


def loss_in_loop(x, w):
    """The custom call in a loop, its scalar argument different each time."""
    acc = 0.0
    for k in range(len(w)):
        acc += math.tanh(wsum(x, w[k]))
    return acc


def loss_2d(a, x):
    return math.exp(0.1 * quad(a, x, 2)) + quad(a, x, 1)


def loss_wrong(x):
    return 2.0 * wrong(x)


@pytest.mark.parametrize("n", [1, 3, 7])
def test_grad_through_array_jvp_rule_matches_finite_differences(n):
    for _ in range(2):
        x = RNG.uniform(-1.5, 1.5, n)
        s = float(RNG.uniform(0.5, 2.0))
        gx, gs = adpasses.grad(loss, argnums=(0, 1))(x, s)
        fx, fs = finite_differences(loss, [x, s], [0, 1])
        assert_matches(gx, fx, what="d/dx")
        assert gs == pytest.approx(fs, rel=1e-6, abs=1e-8)
        v, g = adpasses.value_and_grad(loss)(x, s)
        assert v == pytest.approx(loss(x, s), rel=1e-12)
        assert_matches(g, fx)


def test_call_in_a_loop_and_hessian():
    x = RNG.uniform(-1.0, 1.0, 4)
    w = RNG.uniform(-0.5, 0.5, 3)
    gx, gw = adpasses.grad(loss_in_loop, argnums=(0, 1))(x, w)
    fx, fw = finite_differences(loss_in_loop, [x, w], [0, 1])
    assert_matches(gx, fx, what="d/dx")
    assert_matches(gw, fw, what="d/dw")
    grad = adpasses.grad(loss)
    s = 1.3
    H = adpasses.hessian(loss)(x, s)
    fd_h = np.array([finite_differences(lambda y: grad(y, s)[j], [x], [0])[0] for j in range(4)])
    assert_matches(H, fd_h, what="hessian through the jvp rule")


def test_two_dimensional_and_const_array_arguments():
    a = RNG.uniform(-1.0, 1.0, (3, 4))
    x = RNG.uniform(0.5, 1.5, 4)
    ga, gx = adpasses.grad(loss_2d, argnums=(0, 1))(a, x)
    fa, fx = finite_differences(loss_2d, [a, x], [0, 1])
    assert_matches(ga, fa, what="d/da (2-D)")
    assert_matches(gx, fx, what="d/dx")
    # a held constant: its tangent is a zeroed buffer, x's loop still runs
    assert_matches(adpasses.grad(loss_2d, argnums=1)(a, x), fx)
    assert_matches(adpasses.grad(loss_2d, argnums=0)(a, x), fa)


def test_the_rule_is_what_runs():
    x = RNG.uniform(-1.0, 1.0, 5)
    assert_matches(adpasses.grad(loss_wrong)(x), 2.0 * 3.0 * x)  # the rule's 3x, not 2x
    assert_matches(adpasses.jacrev(loss_wrong)(x), 2.0 * 3.0 * x)
    assert_matches(adpasses.grad(wrong)(x), 3.0 * x)


def test_empty_array_runs_no_rule_call_and_gives_empty_gradient():
    assert adpasses.grad(loss)(np.zeros(0), 1.0).shape == (0,)
