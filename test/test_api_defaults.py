"""Default parameter values and keyword arguments in calls of jitted
functions, of grad / value_and_grad (argnums count every parameter, in the
function's order) and of autodiff: values and gradients against plain
Python and central finite differences on random inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import adpasses
from finite_diff import assert_matches, finite_differences


def weighted(x, scale=2.0, n=-1, shift=0.5):
    s = 0.0
    m = len(x) if n < 0 else n
    for i in range(m):
        s += scale * math.sin(x[i] + shift) * x[i]
    return s


f = adpasses.jit(weighted)
rng = np.random.default_rng(7)


def full(x, scale, n, shift):
    return weighted(x, scale, n, shift)


CALLS = [
    # (positional, keywords, the complete argument list)
    ((), {}, (2.0, -1, 0.5)),
    ((1.5,), {}, (1.5, -1, 0.5)),
    ((), {"scale": -0.7}, (-0.7, -1, 0.5)),
    ((), {"n": 3}, (2.0, 3, 0.5)),
    ((0.3,), {"shift": -1.25, "n": 2}, (0.3, 2, -1.25)),
]


@pytest.mark.parametrize("pos,kw,complete", CALLS)
def test_primal_with_defaults_and_keywords(pos, kw, complete):
    x = rng.standard_normal(5)
    for _ in range(2):  # the second call goes through the installed dispatch
        assert f(x, *pos, **kw) == pytest.approx(weighted(x, *complete), rel=1e-12)


@pytest.mark.parametrize("pos,kw,complete", CALLS)
def test_gradients_with_defaults_and_keywords(pos, kw, complete):
    x = rng.standard_normal(5)
    args = [x, *complete]
    expected = finite_differences(weighted, args, [0, 1, 3])
    for _ in range(2):
        gx = adpasses.grad(f)(x, *pos, **kw)
        assert_matches(gx, expected[0], what="d/dx")
        value, (gx2, gscale, gshift) = adpasses.value_and_grad(f, argnums=(0, 1, 3))(x, *pos, **kw)
        assert value == pytest.approx(weighted(*args), rel=1e-12)
        assert_matches(gx2, expected[0], what="d/dx")
        assert_matches(gscale, expected[1], what="d/dscale")
        assert_matches(gshift, expected[2], what="d/dshift")


def test_autodiff_fills_defaults_and_returns_one_entry_per_argument_passed():
    x = rng.standard_normal(4)
    dx = np.zeros(4)
    derivs = adpasses.autodiff(f, adpasses.Duplicated(x, dx), adpasses.Active(0.9))
    assert len(derivs) == 2 and derivs[0] is None
    expected = finite_differences(weighted, [x, 0.9, -1, 0.5], [0, 1])
    assert_matches(dx, expected[0], what="dx")
    assert_matches(derivs[1], expected[1], what="d/dscale")


def test_binding_errors_name_the_function_and_the_parameter():
    x = np.ones(3)
    f(x)  # installs the dispatch: errors must come through it too
    with pytest.raises(TypeError, match=r"^weighted\(\) missing 1 required positional argument: 'x'$"):
        f()
    with pytest.raises(TypeError, match=r"^weighted\(\) got an unexpected keyword argument 'sc'$"):
        f(x, sc=1.0)
    with pytest.raises(TypeError, match=r"^weighted\(\) got multiple values for argument 'scale'$"):
        f(x, 1.0, scale=2.0)
    with pytest.raises(TypeError, match=r"^weighted\(\) got an unexpected keyword argument 'sc'$"):
        adpasses.grad(f)(x, sc=1.0)
