"""A prange loop reading an array a callee returned as a view of its
argument (`t = flip(x)`, `return x[::-1]`). Found by the array fuzzer
(`--mode arrays`, seed 100145): the loop is rejected with "this prange
loop cannot run in parallel: ... ? (unknown origin: func.call ...) may
address allocation ?" (the reduction's accumulator slot), while the same
loop reading `x[::-1]` directly is proven independent. Open: the
independence proof does not follow a call's result to the argument it
views (the frontend knows it: `ResultKind.argument`)."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses


def flip(x):
    return x[::-1]


def direct(a1, a2):
    t1 = a1[::-1]
    t3 = 0.0
    for i in adpasses.prange(a2.shape[0]):
        t3 += np.sum(np.sin(a2[i, :]) * t1)
    return t3


def via_call(a1, a2):
    t1 = flip(a1)
    t3 = 0.0
    for i in adpasses.prange(a2.shape[0]):
        t3 += np.sum(np.sin(a2[i, :]) * t1)
    return t3


def _inputs():  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(5)
    return rng.uniform(-1, 1, 3), rng.uniform(-1, 1, (4, 3))


def test_a_prange_sum_reading_a_view_is_proven_independent() -> None:
    a1, a2 = _inputs()
    assert adpasses.jit(direct)(a1, a2) == pytest.approx(direct(a1, a2), rel=1e-12)


@pytest.mark.xfail(strict=True, raises=adpasses.CompileError,
                   reason="open: the prange proof treats a callee's returned view as memory of unknown origin")
def test_a_prange_sum_reading_a_returned_view_is_proven_independent() -> None:
    a1, a2 = _inputs()
    assert adpasses.jit(via_call)(a1, a2) == pytest.approx(via_call(a1, a2), rel=1e-12)
