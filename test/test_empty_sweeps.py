"""Loops of sweeps over no element still run f once.

hessian, jacfwd, jacrev (of an Output or of an array result), hvp, jvp and
vmap(hessian) call f inside a compiled loop over seeds
(transforms/seed_loops.py). With an empty argument or output that loop
used to run zero times: f never ran, so `x[0]` out of bounds, a `raise` or an
`assert` went unreported and an empty Jacobian came back, while `grad` of
the same call raised. The loop now runs at least once, every lane masked
off, so each mode raises what `grad` raises, and an f that accepts empty
input still gives the empty derivative of the right shape; nonempty
Hessians and Jacobians are checked against finite differences beside
them (the bound changed for every call)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

import adpasses
from adpasses import Output

E = np.zeros(0)


def first_squared(x):
    return x[0] * x[0]


def asserts_nonempty(x):
    assert len(x) > 0, "x must not be empty"
    return np.sum(x * x)


def raises_when_empty(x):
    if len(x) == 0:
        raise ValueError("empty x")
    return np.sum(x * x)


def cubes(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] ** 3 * math.sin(x[i])
    return s


def writes_first(x, out):
    out[0] = x[0] * 2.0


def shifted(x, out):
    for i in range(len(out)):
        out[i] = math.exp(x[i + 1]) * x[i]


def tail_times_head(x):
    return x[1:] * x[0]


def two(a, x):
    return a[0] * np.sum(x * x)


BAD = {"bounds": (first_squared, IndexError, "out of bounds"),
       "assert": (asserts_nonempty, AssertionError, "must not be empty"),
       "raise": (raises_when_empty, ValueError, "empty x")}

MODES = {
    "grad": lambda f: adpasses.grad(f)(E),
    "hessian": lambda f: adpasses.hessian(f)(E),
    "hessian_width4": lambda f: adpasses.hessian(f, width=4)(E),
    "jacfwd": lambda f: adpasses.jacfwd(f)(E),
    "hvp": lambda f: adpasses.hvp(f)(E, E),
    "jvp": lambda f: adpasses.jvp(f, (E,), (E,)),
    "vmap_hessian": lambda f: adpasses.vmap(adpasses.hessian(f))(np.zeros((2, 0))),
    "vmap_grad": lambda f: adpasses.vmap(adpasses.grad(f))(np.zeros((2, 0))),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bad", BAD)
def test_every_mode_reports_what_f_rejects_on_empty_input(mode, bad):
    f, error, text = BAD[bad]
    with pytest.raises(error, match=text):
        MODES[mode](adpasses.jit(f))


@pytest.mark.parametrize("width", [None, 3])
def test_empty_output_still_runs_f(width):
    jf = adpasses.jit(writes_first)
    kw = {} if width is None else {"width": width}
    with pytest.raises(IndexError, match="out of bounds"):
        adpasses.jacfwd(jf, **kw)(np.ones(2), Output(np.zeros(0)))
    with pytest.raises(IndexError, match="out of bounds"):
        adpasses.jacrev(jf, **kw)(np.ones(2), Output(np.zeros(0)))
    with pytest.raises(IndexError, match="out of bounds"):
        adpasses.jacfwd(jf, **kw)(E, Output(np.zeros(1)))


def test_array_result_on_empty_input_raises():
    jf = adpasses.jit(tail_times_head)
    with pytest.raises(IndexError, match="out of bounds"):
        adpasses.jacrev(jf)(E)
    with pytest.raises(IndexError, match="out of bounds"):
        adpasses.vjp(jf)(E)


def test_one_empty_argument_among_several():
    jf = adpasses.jit(two)
    with pytest.raises(IndexError, match="out of bounds"):
        adpasses.hessian(jf, argnums=1)(E, np.ones(2))
    with pytest.raises(IndexError, match="out of bounds"):
        adpasses.hessian(jf, argnums=(0, 1))(E, np.ones(2))
    # a nonempty, x empty: f is fine; the blocks have the shapes jax gives
    h = adpasses.hessian(jf, argnums=(0, 1))(np.array([1.5]), E)
    assert [[b.shape for b in row] for row in h] == [[(1, 1), (1, 0)], [(0, 1), (0, 0)]]
    assert h[0][0][0, 0] == 0.0


def test_f_that_accepts_empty_input_gives_empty_derivatives():
    jf = adpasses.jit(cubes)
    assert adpasses.hessian(jf)(E).shape == (0, 0)
    assert adpasses.jacfwd(jf)(E).shape == (0,)
    assert adpasses.hvp(jf)(E, E).shape == (0,)
    assert adpasses.vmap(adpasses.hessian(jf))(np.zeros((3, 0))).shape == (3, 0, 0)
    js = adpasses.jit(shifted)
    out = np.zeros(0)
    assert adpasses.jacrev(js)(np.ones(1), Output(out)).shape == (0, 1)
    assert adpasses.jacfwd(js)(np.ones(1), Output(out)).shape == (0, 1)


@pytest.mark.parametrize("n", [1, 2, 5, 17])
def test_nonempty_sweeps_match_finite_differences(n):
    rng = np.random.default_rng(n)
    x = rng.uniform(-1.0, 1.0, n)
    jf = adpasses.jit(cubes)

    def grad_by_hand(z):
        return 3 * z ** 2 * np.sin(z) + z ** 3 * np.cos(z)
    hess = np.array([finite_differences(lambda z, i=i: grad_by_hand(z)[i], [x], [0])[0] for i in range(n)])
    h = adpasses.hessian(jf)(x)
    assert_matches(h, hess)
    assert_matches(adpasses.hessian(jf, width=4)(x), h)
    js = adpasses.jit(shifted)
    xs = rng.uniform(-1.0, 1.0, n + 1)
    out = np.zeros(n)

    def column(z, j):
        o = np.zeros(n)
        shifted(z, o)
        return o[j]
    jac = np.array([finite_differences(lambda z, j=j: column(z, j), [xs], [0])[0] for j in range(n)])
    assert_matches(adpasses.jacrev(js)(xs, Output(out.copy())), jac)
    assert_matches(adpasses.jacfwd(js)(xs, Output(out.copy())), jac)

