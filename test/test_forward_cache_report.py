"""The cache report of forward over reverse: `adpasses.cache_report(
hessian(f), *args)` and `cache_report(hvp(f), *args, v)` give the
gradient's report and what the tangent sweep tapes beside it (a tangent
tape per lane beside each tape whose values vary along the direction, none
beside the others), with counts and bytes for the arguments. The Hessians
and products themselves are checked against central differences of the
gradient (the report describes the code those calls run)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import adpasses


@adpasses.jit
def f(x, c):
    s = 0.0
    for i in range(len(x)):
        p = math.sin(x[i]) * math.exp(c)
        s += p * p
    return s * s  # used after the loop: its reverse is not loop-local, so the gradient tapes


def gradient(x: np.ndarray, c: float) -> np.ndarray:
    """d f / d (x, c), by hand: f = S^2, S = e^{2c} sum sin(x_i)^2."""
    S = math.exp(2 * c) * np.sum(np.sin(x) ** 2)
    return np.append(2 * S * math.exp(2 * c) * np.sin(2 * x), 4 * S * S)


def hessian_by_differences(x: np.ndarray, c: float) -> np.ndarray:
    z = np.append(x, c)
    h = 1e-5
    cols = [(gradient((z + h * e)[:-1], (z + h * e)[-1]) - gradient((z - h * e)[:-1], (z - h * e)[-1])) / (2 * h)
            for e in np.eye(z.size)]
    return np.stack(cols, axis=1)


def _taped(report, lanes: int) -> list:  # type: ignore[no-untyped-def]
    return [e for e in report.tangent.entries if e.lanes == lanes]


@pytest.mark.parametrize("n", [4, 10])
def test_hessian_report_lists_tangent_tapes_with_bytes(n: int) -> None:
    x, c = np.linspace(0.1, 1.0, n), 0.3
    H = adpasses.hessian(f)(x, c)
    np.testing.assert_allclose(H, hessian_by_differences(x, c)[:n, :n], rtol=1e-6, atol=1e-7)
    r = adpasses.cache_report(adpasses.hessian(f), x, c)
    # The gradient tapes exp(c) and p per iteration (n each).
    taped = [e for e in r.gradient.entries if e.decision == "tape"]
    assert [e.count for e in taped] == [n, n]
    assert r.gradient.taped_bytes == 2 * 8 * n
    # Along x (c constant): p varies (n lanes of width n), exp(c) does not.
    [moving] = _taped(r, n)
    [still] = _taped(r, 0)
    assert moving.count == n and moving.bytes == n * 8 * n and moving.tape == "%tape_p"
    assert still.count == n and still.bytes == 0
    assert r.tangent_taped_bytes == n * 8 * n
    assert r.taped_bytes == 2 * 8 * n + n * 8 * n
    text = str(r)
    assert f"tangent tapes of @{r.tangent.tangent}" in text and f"width {n}" in text
    assert f"tangent taped bytes: {n * 8 * n}" in text
    d = json.loads(r.to_json())
    assert d["taped_bytes"] == r.taped_bytes and d["tangent"]["width"] == n


@adpasses.jit
def f2(x, cv):
    s = 0.0
    for i in range(len(x)):
        p = math.sin(x[i]) * math.exp(cv[0])
        s += p * p
    return s * s


def test_differentiating_c_gives_its_tape_tangents_too() -> None:
    """With c differentiated as well (a 1-element array), exp(c) varies
    along the direction: both tapes get tangent tapes (a neighbour of the
    case above)."""
    x, c = np.linspace(0.1, 1.0, 5), 0.3
    (Hxx, Hxc), _ = adpasses.hessian(f2, (0, 1))(x, np.array([c]))
    H = hessian_by_differences(x, c)
    np.testing.assert_allclose(Hxx, H[:5, :5], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(Hxc[:, 0], H[:5, 5], rtol=1e-6, atol=1e-7)
    r = adpasses.cache_report(adpasses.hessian(f2, (0, 1)), x, np.array([c]))
    width = r.tangent.width
    assert width == 5
    assert not _taped(r, 0)
    assert len(_taped(r, width)) == 2
    assert r.tangent_taped_bytes == 2 * width * 8 * 5


def test_hvp_report_has_one_lane_per_vector() -> None:
    x, c = np.linspace(0.1, 1.0, 6), -0.2
    V = np.random.default_rng(1).standard_normal((3, 6))
    HV = adpasses.hvp(f)(x, c, V)
    H = hessian_by_differences(x, c)[:6, :6]
    np.testing.assert_allclose(HV, V @ H.T, rtol=1e-6, atol=1e-7)
    r = adpasses.cache_report(adpasses.hvp(f), x, c, V)
    assert r.tangent.width == 3
    assert r.tangent_taped_bytes == 3 * 8 * 6
    r1 = adpasses.cache_report(adpasses.hvp(f), x, c, V[0])
    assert r1.tangent.width == 1 and r1.tangent_taped_bytes == 8 * 6


def test_jacfwd_and_plain_functions_keep_their_reports() -> None:
    x = np.linspace(0.1, 1.0, 4)
    assert adpasses.cache_report(f, x, 0.3).taped_bytes == 2 * 8 * 4
    with pytest.raises(TypeError, match="does not return a float|Hessian is that of a float"):
        adpasses.cache_report(adpasses.hvp(_writes), x, np.ones(4), x)


@adpasses.jit
def _writes(x, out):
    for i in range(len(x)):
        out[i] = x[i] * x[i]
