"""The column-wise log-sum-exp benchmark (benchmarks/kernels/lse.py): its
spellings (column views, scalar loops, one array expression,
scipy.special.logsumexp) give
the value and the gradient of the closed form (a column softmax), to
rounding, on random matrices (so the timed rows compute the same thing)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import adpasses
from benchmarks.kernels import lse


def closed_form(X):  # type: ignore[no-untyped-def]
    mx = X.max(axis=0)
    e = np.exp(X - mx)
    return float(np.sum(mx + np.log(e.sum(axis=0)))), e / e.sum(axis=0)


SPELLINGS = [lse.lse_columns, lse.lse_loops, lse.lse_array] + ([lse.lse_scipy] if lse.scipy_special else [])


@pytest.mark.parametrize("f", SPELLINGS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(20, 30), (1, 4), (7, 1)])
def test_spellings_agree_with_the_closed_form(f, shape) -> None:  # type: ignore[no-untyped-def]
    X = np.random.default_rng(sum(shape)).normal(scale=3.0, size=shape)
    value, softmax = closed_form(X)
    assert adpasses.jit(f)(X) == pytest.approx(value, rel=1e-13)
    np.testing.assert_allclose(adpasses.grad(f)(X), softmax, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("f", SPELLINGS, ids=lambda f: f.__name__)
def test_taped_bytes_are_numbers(f) -> None:  # type: ignore[no-untyped-def]
    """Every spelling's tape is counted for the arguments (array expressions'
    counts are sizes of views and broadcasts): at least the exponentials (8
    bytes per element) and the max's choices (1 byte per compared element)."""
    m, n = 12, 7
    X = np.random.default_rng(2).normal(size=(m, n))
    report = adpasses.cache_report(adpasses.jit(f), X)
    assert isinstance(report.taped_bytes, int), report.taped_bytes_formula
    assert report.taped_bytes >= 8 * m * n + (m - 1) * n, str(report)
    if f is lse.lse_loops:
        assert report.taped_bytes == 8 * m * n + (m - 1) * n


def test_the_array_spelling_tapes_what_the_loops_tape() -> None:  # type: ignore[no-untyped-def]
    """Its reduction over the leading axis chooses a loop order at run time
    (two branches): they share one tape of exponentials (9 bytes per
    element, not 17), and the gradient allocates one f64 tape."""
    m, n = 12, 7
    X = np.random.default_rng(3).normal(size=(m, n))
    report = adpasses.cache_report(adpasses.jit(lse.lse_array), X)
    assert report.taped_bytes == 9 * m * n, str(report)
    ir = adpasses.inspect(adpasses.jit(lse.lse_array), X).gradient_mlir
    assert len(re.findall(r"memref\.alloc\([^)]*\) \{ad\.workspace\} : memref<\?xf64>", ir)) == 1, ir
