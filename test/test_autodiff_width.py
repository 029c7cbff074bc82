"""autodiff(f, ..., width=N): vector reverse mode from Python (Enzyme's
BatchDuplicated). Each lane against central finite differences on random
inputs (a float result with per-lane seeds; an output array with per-lane
cotangents: J^T u_k), against N calls of width 1, the fast path, and the
errors for shadows and seeds that do not match the width."""

from __future__ import annotations

import math

import numpy as np
import pytest
from finite_diff import finite_differences

import adpasses
from adpasses import Active, Const, Duplicated


def energy(x, a):
    s = 0.0
    n = len(x)
    for i in range(n):
        s += math.sin(x[i]) * a * x[(i + 1) % n] + 0.5 * x[i] * x[i] * x[i]
    return s


def spread(x, out, c):
    """out[i] = c tanh(x[i]) x[i-1] + exp(x[0]) (writes its result)."""
    n = len(x)
    for i in range(n):
        out[i] = c * math.tanh(x[i]) * x[(i + n - 1) % n] + math.exp(0.3 * x[0])


def jacobian_by_differences(x: np.ndarray, c: float, m: int, h: float = 1e-6) -> np.ndarray:
    def out_of(y: np.ndarray) -> np.ndarray:
        o = np.zeros(m)
        spread(y, o, c)
        return o
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        cols.append((out_of(x + e) - out_of(x - e)) / (2 * h))
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("width", [2, 3, 5])
def test_float_result_each_lane_is_its_seed_times_the_gradient(width: int) -> None:
    rng = np.random.default_rng(10 + width)
    x, a = rng.normal(size=7), float(rng.normal())
    seeds = rng.normal(size=width)
    dx = np.zeros((width, 7))
    (da_x, da) = adpasses.autodiff(energy, Duplicated(x, dx), Active(a), width=width, seed=list(seeds))
    assert da_x is None and da.shape == (width,)
    gx, ga = finite_differences(energy, [x, a], (0, 1))
    for k in range(width):
        np.testing.assert_allclose(dx[k], seeds[k] * gx, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(da[k], seeds[k] * ga, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("width", [2, 4])
def test_output_array_lanes_give_transposed_jacobian_products(width: int) -> None:
    rng = np.random.default_rng(20 + width)
    n = 6
    x, c = rng.normal(size=n), float(rng.normal())
    U = rng.normal(size=(width, n))
    dx, out, dout = np.zeros((width, n)), np.zeros(n), U.copy()
    adpasses.autodiff(spread, Duplicated(x, dx), Duplicated(out, dout), Const(c), width=width)
    J = jacobian_by_differences(x, c, n)
    for k in range(width):
        np.testing.assert_allclose(dx[k], J.T @ U[k], rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(dout, 0.0)  # every lane's seed consumed
    ref = np.zeros(n)
    spread(x, ref, c)
    np.testing.assert_allclose(out, ref, rtol=1e-15)  # f ran on the arrays it was given


def test_lanes_match_calls_of_width_one() -> None:
    rng = np.random.default_rng(30)
    x, c = rng.normal(size=5), 0.7
    U = rng.normal(size=(3, 5))
    dx = np.zeros((3, 5))
    adpasses.autodiff(spread, Duplicated(x, dx), Duplicated(np.zeros(5), U.copy()), c, width=3)
    for k in range(3):
        d1 = np.zeros(5)
        adpasses.autodiff(spread, Duplicated(x, d1), Duplicated(np.zeros(5), U[k].copy()), c)
        np.testing.assert_allclose(dx[k], d1, rtol=1e-14, atol=1e-15)


def test_return_primal_and_fast_path() -> None:
    rng = np.random.default_rng(40)
    jf = adpasses.jit(energy)
    x = rng.normal(size=4)
    for call in range(3):  # the general path, then the generated one
        dx = np.zeros((2, 4))
        (_, da), value = adpasses.autodiff(jf, Duplicated(x, dx), Active(1.5), width=2, seed=3.0,
                                           return_primal=True)
        assert value == pytest.approx(energy(x, 1.5), rel=1e-14)
        gx, ga = finite_differences(energy, [x, 1.5], (0, 1))
        np.testing.assert_allclose(dx, [3.0 * gx, 3.0 * gx], rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(da, [3.0 * ga, 3.0 * ga], rtol=1e-6, atol=1e-8)
    assert any(k[0] == "autodiff lanes" for k in jf._jacobian_functions if isinstance(k, tuple))
    # After the fast path exists, a mismatched shadow still gets the clear error.
    with pytest.raises(ValueError, match=r"with width 2 it must have shape \(2, 4\)"):
        adpasses.autodiff(jf, Duplicated(x, np.zeros((3, 4))), Active(1.5), width=2, return_primal=True)


def test_float32_lanes_stay_float32() -> None:
    rng = np.random.default_rng(50)
    x = rng.normal(size=4).astype(np.float32)
    dx = np.zeros((2, 4), np.float32)
    adpasses.autodiff(spread, Duplicated(x, dx), Duplicated(np.zeros(4, np.float32), np.ones((2, 4), np.float32)),
                      0.5, width=2)
    assert dx.dtype == np.float32
    J = jacobian_by_differences(x.astype(np.float64), 0.5, 4, h=1e-4)
    np.testing.assert_allclose(dx[0], J.T @ np.ones(4), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("bad", [0, -2, 2.5, True, "3"])
def test_width_must_be_a_positive_int(bad: object) -> None:
    x = np.ones(3)
    with pytest.raises(ValueError, match="width must be a positive int"):
        adpasses.autodiff(energy, Duplicated(x, np.zeros((2, 3))), 1.0, width=bad)


def test_mismatched_widths_are_errors() -> None:
    x = np.ones(3)
    with pytest.raises(ValueError, match=r"shadow of argument 0 has shape \(3,\).*width 2 it must have shape \(2, 3\)"):
        adpasses.autodiff(energy, Duplicated(x, np.zeros(3)), 1.0, width=2)
    with pytest.raises(ValueError, match=r"shape \(4, 3\).*width 2"):
        adpasses.autodiff(energy, Duplicated(x, np.zeros((4, 3))), 1.0, width=2)
    with pytest.raises(ValueError, match="3 seeds for width 2"):
        adpasses.autodiff(energy, Duplicated(x, np.zeros((2, 3))), 1.0, width=2, seed=[1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="seed must be a real number"):
        adpasses.autodiff(energy, Duplicated(x, np.zeros((2, 3))), 1.0, width=2, seed=["a", 1.0])


def test_shadows_that_share_memory_are_errors() -> None:
    x = np.ones(3)
    dx = np.zeros((2, 3))
    with pytest.raises(ValueError, match="share memory"):
        adpasses.autodiff(spread, Duplicated(x, dx), Duplicated(np.zeros(3), dx), 1.0, width=2)
    same = np.lib.stride_tricks.as_strided(np.zeros(3), (2, 3), (0, 8))
    with pytest.raises(ValueError, match="each lane needs its own"):
        adpasses.autodiff(energy, Duplicated(x, same), 1.0, width=2)
    with pytest.raises(ValueError, match="not C-contiguous"):
        adpasses.autodiff(energy, Duplicated(x, np.zeros((3, 2)).T), 1.0, width=2)
    with pytest.raises(TypeError, match="cannot be Duplicated"):
        adpasses.autodiff(energy, Duplicated(np.ones(3, np.int64), np.zeros((2, 3), np.int64)), 1.0, width=2)
