"""The README's Newton-CG example: scipy's Newton-CG driven by
adpasses.grad and adpasses.hvp converges on the Rosenbrock function
(skipped only when scipy is absent); the example's Hessian of the strain
energy against the hand-written one."""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest
from finite_diff import assert_matches

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import newton_cg as example  # noqa: E402

from benchmarks.kernels import neohookean as nh  # noqa: E402


@pytest.mark.skipif(importlib.util.find_spec("scipy") is None, reason="scipy is not installed")
def test_newton_cg_with_hvp_converges() -> None:
    result = example.newton_cg(np.full(20, -1.0))
    assert result.success and np.max(np.abs(result.x - 1.0)) < 1e-6
    assert result.nhev > 0  # the Hessian-vector products were used


def test_the_examples_strain_energy_hessian() -> None:
    import adpasses

    F = nh.deformation_gradients(np.random.default_rng(3), 1)[0]
    want = np.empty((9, 9))
    nh.hessian_by_hand(F, want)
    assert_matches(adpasses.hessian(example.strain_energy)(F), want, what="example Hessian")


def test_rosenbrock_hvp_against_finite_differences() -> None:
    import adpasses

    x, p = np.random.default_rng(4).uniform(-1.5, 1.5, 8), np.random.default_rng(5).normal(size=8)
    g = adpasses.grad(example.rosenbrock)
    fd = (g(x + 1e-6 * p) - g(x - 1e-6 * p)) / 2e-6
    assert_matches(adpasses.hvp(example.rosenbrock)(x, p), fd, what="hvp(rosenbrock)")
