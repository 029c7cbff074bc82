"""Shadows and tangents of reinterpret_cast views when the primal is a
strided numpy view and its shadow (tangent) is contiguous: the view's
offset and strides must be made from the shadow's own layout
(`memref_views.layout_over`); with the primal's, the gradient silently
went to the wrong elements (relative error ~1 for `X[i, :] * X[i, :]`
with X = B[:, ::2])."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses

import strided_kernels as sk


def central_fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for j in range(x.size):
        plus, minus = x.copy(), x.copy()
        plus.flat[j] += eps
        minus.flat[j] -= eps
        g.flat[j] = (f(plus) - f(minus)) / (2 * eps)
    return g


@pytest.mark.parametrize("kernel", [sk.row_broadcast, sk.transposed, sk.reversed_rows],
                         ids=["broadcast", "transpose", "negative-step"])
def test_gradient_and_tangent_of_a_strided_primal(kernel):
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((5, 12)) * 0.5)[:, ::2]  # strided: (5, 6), strides (96, 16)
    assert not X.flags["C_CONTIGUOUS"]
    jf = adpasses.jit(kernel)
    dense = np.ascontiguousarray(X)
    ref = central_fd(jf, dense)
    g = adpasses.grad(jf)(X)
    assert np.allclose(g, ref, rtol=1e-6, atol=1e-7)
    assert np.allclose(g, adpasses.grad(jf)(dense), rtol=1e-13, atol=1e-14)
    V = rng.standard_normal(X.shape)
    value, tangent = adpasses.jvp(jf, (X,), (V,))
    assert value == pytest.approx(jf(dense), rel=1e-13)
    assert tangent == pytest.approx(float((ref * V).sum()), rel=1e-6, abs=1e-8)
