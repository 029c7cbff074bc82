"""Dead forward-sweep loads lose their loop, not their bounds check
(adpasses/transforms/dead_forward.py): through the Python API (which skips
canonicalisation), out-of-bounds indices still raise IndexError with the
index, size and source line the primal reports, gradients stay right
(central finite differences on random inputs), and the forward loop is
gone from the compiled gradient."""

from __future__ import annotations

import inspect as pyinspect

import numpy as np
import pytest

import adpasses
from finite_diff import assert_matches, finite_differences


def shifted_diff(x, k):
    s = 0.0
    for i in range(0, len(x) - k, 2):
        d = x[i + k] - x[i]
        s += d * d
    return s


def strided(x):
    s = 0.0
    for i in range(0, len(x) - 1, 2):
        d = x[i + 1] - x[i]
        s += d * d
    return s


def strided_scaled(x):
    # The scaling after the loop is differentiated, so the loop is reversed
    # after the forward sweep (not loop-locally: docs/parallel.md), and the
    # forward loop, whose sum the gradient does not return, is dead.
    s = 0.0
    for i in range(0, len(x) - 1, 2):
        d = x[i + 1] - x[i]
        s += d * d
    return 0.5 * s


def overrun(x):
    s = 0.0
    for i in range(0, len(x), 2):  # odd len(x): the last i + 1 is len(x)
        d = x[i + 1] - x[i]
        s += d * d
    return s


def line_of(fn, text: str) -> int:
    lines, first = pyinspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


rng = np.random.default_rng(5)


@pytest.mark.parametrize("n,k", [(9, 1), (10, 3), (7, 2)])
def test_gradient_matches_finite_differences(n, k):
    # x[i + k] with a runtime k wraps negative indices like Python: not
    # affine, so this loop keeps its checks; strided's are hoisted
    x = rng.standard_normal(n)
    got = adpasses.grad(shifted_diff)(x, k)
    assert_matches(got, finite_differences(shifted_diff, [x, k], [0])[0], what="d/dx")
    got = adpasses.grad(strided)(x)
    assert_matches(got, finite_differences(strided, [x], [0])[0], what="d/dx")


def test_forward_loop_is_gone_and_reverse_accesses_unchecked():
    x = rng.standard_normal(9)
    assert_matches(adpasses.grad(strided_scaled)(x), finite_differences(strided_scaled, [x], [0])[0])
    info = adpasses.inspect(strided_scaled, x)
    text = info.gradient_mlir
    assert text.count("scf.for") == 1  # the reverse loop only
    assert text.count("scf.if") == 2   # one endpoint check per dead load
    loop = text[text.index("scf.for"):]
    assert "memref.load %x" in loop and all(
        "ad.unchecked" in line for line in loop.splitlines() if "memref.load" in line or "memref.store" in line)


@pytest.mark.parametrize("n", [5, 7, 1])
def test_out_of_bounds_still_raises_with_the_primal_message(n):
    f = adpasses.jit(overrun)
    x = rng.standard_normal(n)
    where = f"{__file__}:{line_of(overrun, 'd = x[i + 1]')}:"
    with pytest.raises(IndexError) as primal:
        f(x)
    with pytest.raises(IndexError) as gradient:
        adpasses.grad(f)(x)
    message = f"index {n} is out of bounds for axis 0 with size {n}"
    assert message in str(primal.value) and message in str(gradient.value)
    assert where in str(primal.value) and where in str(gradient.value)


def test_loop_that_does_not_run_checks_nothing():
    # range(0, 0 - 1, 2) is empty: the endpoint checks must not run
    assert adpasses.grad(strided)(np.zeros(0)).shape == (0,)
    assert adpasses.grad(strided)(np.zeros(1)).shape == (1,)
