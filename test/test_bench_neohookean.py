"""The neo-Hookean benchmark kernel's hand-written derivatives (the numba
peer compiles these very functions) against central finite differences:
the hand gradient against differences of W, the hand Hessian against
differences of the hand gradient, on random deformation gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.kernels import neohookean as nh
from finite_diff import assert_matches, finite_differences


def samples(n: int = 5) -> np.ndarray:
    return nh.deformation_gradients(np.random.default_rng(1515), n)


def hand_gradient(x: np.ndarray) -> np.ndarray:
    g = np.empty(9)
    nh.gradient_by_hand(x, g)
    return g


@pytest.mark.parametrize("k", range(5))
def test_hand_gradient_matches_finite_differences(k: int) -> None:
    x = samples()[k]
    (fd,) = finite_differences(nh.strain_energy, [x.copy()], [0])
    assert_matches(hand_gradient(x), fd, what="hand gradient of W")


@pytest.mark.parametrize("k", range(5))
def test_hand_hessian_matches_finite_differences_of_the_gradient(k: int) -> None:
    x = samples()[k]
    H = np.empty((9, 9))
    nh.hessian_by_hand(x, H)
    fd = np.stack([finite_differences(lambda y: hand_gradient(y)[i], [x.copy()], [0])[0]
                   for i in range(9)])
    assert_matches(H, fd, what="hand Hessian of W")
    assert np.allclose(H, H.T, rtol=0, atol=1e-12)


def test_the_peers_formula_is_the_kernel() -> None:
    for x in samples():
        assert nh.strain_energy_xp(math.log)(x) == pytest.approx(nh.strain_energy(x), rel=1e-14)


def test_the_identity_is_stress_free() -> None:
    """W(I) = 0 and dW/dF(I) = 0: the textbook property of this W."""
    x = np.eye(3).reshape(9)
    assert nh.strain_energy(x) == 0.0
    assert np.all(hand_gradient(x) == 0.0)
