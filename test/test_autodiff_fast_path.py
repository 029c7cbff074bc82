"""autodiff's generated fast path (adpasses/api/autodiff_call.py) must give what
the general path gives, and hand every call it cannot check cheaply back to
it: shadows of another shape or layout, overlapping arrays, changed dtypes
or kinds, read-only shadows. Gradients against central finite differences
on random inputs; each case is called repeatedly so that the fast path is
in place."""

from __future__ import annotations

import math

import numpy as np
import pytest

import adpasses
from adpasses import Active, Const, Duplicated, DuplicatedNoNeed
from finite_diff import assert_matches, finite_differences


def scaled_energy(x, w, a):
    s = 0.0
    for i in range(len(x)):
        s += w[i] * math.exp(-a * x[i] * x[i])
    return a * s


def write_square(x, out):
    for i in range(len(x)):
        out[i] = x[i] * x[i]


f = adpasses.jit(scaled_energy)
sq = adpasses.jit(write_square)
rng = np.random.default_rng(11)


def test_fast_path_matches_finite_differences_on_every_call():
    for _ in range(4):
        x, w, a = rng.standard_normal(6), rng.standard_normal(6), float(rng.uniform(0.5, 2.0))
        dx, dw = np.zeros(6), np.full(6, 0.25)  # dw accumulates: starts nonzero
        derivs, value = adpasses.autodiff(f, Duplicated(x, dx), Duplicated(w, dw), Active(a),
                                          seed=1.5, return_primal=True)
        gx, gw, ga = finite_differences(scaled_energy, [x, w, a], [0, 1, 2])
        assert value == pytest.approx(scaled_energy(x, w, a), rel=1e-12)
        assert derivs[0] is None and derivs[1] is None
        assert_matches(dx, 1.5 * gx, what="dx")
        assert_matches(dw - 0.25, 1.5 * gw, what="dw")
        assert_matches(derivs[2], 1.5 * ga, what="da")
    assert len(f._autodiff_fast) == 1


def test_const_and_plain_arguments_and_output_seed():
    for _ in range(3):
        x, w = rng.standard_normal(5), rng.standard_normal(5)
        dx = np.zeros(5)
        (d0, d1, d2) = adpasses.autodiff(f, Duplicated(x, dx), Const(w), 0.7)
        assert (d0, d1, d2) == (None, None, None)
        assert_matches(dx, finite_differences(scaled_energy, [x, w, 0.7], [0])[0], what="dx")
        out, seed = np.zeros(5), rng.standard_normal(5)
        gx = np.zeros(5)
        adpasses.autodiff(sq, Duplicated(x, gx), Duplicated(out, seed.copy()))
        np.testing.assert_allclose(out, x * x, rtol=1e-15)
        np.testing.assert_allclose(gx, 2 * x * seed, rtol=1e-13)


def test_misses_take_the_general_path():
    x, w = rng.standard_normal(6), rng.standard_normal(6)
    adpasses.autodiff(f, Duplicated(x, np.zeros(6)), Duplicated(w, np.zeros(6)), Active(1.0))
    # a shadow of another shape: the general path's ValueError
    with pytest.raises(ValueError, match="shadow of argument 0 has shape"):
        adpasses.autodiff(f, Duplicated(x, np.zeros(5)), Duplicated(w, np.zeros(6)), Active(1.0))
    # a read-only shadow
    ro = np.zeros(6)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        adpasses.autodiff(f, Duplicated(x, ro), Duplicated(w, np.zeros(6)), Active(1.0))
    # an int where a float is differentiated
    with pytest.raises(TypeError, match="Active argument 2 must be a float"):
        adpasses.autodiff(f, Duplicated(x, np.zeros(6)), Duplicated(w, np.zeros(6)), Active(1))
    # the same array for x and w (overlap): still right
    dx, dw = np.zeros(6), np.zeros(6)
    adpasses.autodiff(f, Duplicated(x, dx), Duplicated(x, dw), Active(0.8))
    g = finite_differences(lambda v, a: scaled_energy(v, v, a), [x, 0.8], [0])[0]
    assert_matches(dx + dw, g, what="d/dx with w = x")
    # a shadow laid out differently from its view
    base = rng.standard_normal(12)
    view = base[::2]
    dview = np.zeros(12)[1::2]
    shadow_c = np.zeros(6)
    for shadow in (dview, shadow_c):
        adpasses.autodiff(f, Duplicated(view, shadow), Const(w), Active(1.2))
        g = finite_differences(scaled_energy, [view.copy(), w, 1.2], [0])[0]
        assert_matches(shadow, g, what="strided view")
    # DuplicatedNoNeed is another shape of call: its own fast path
    d = np.zeros(6)
    for _ in range(2):
        d[:] = 0
        adpasses.autodiff(f, DuplicatedNoNeed(x, d), Const(w), Active(1.0))
        assert_matches(d, finite_differences(scaled_energy, [x, w, 1.0], [0])[0], what="dupnoneed")
