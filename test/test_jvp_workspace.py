"""jvp of a function that writes its array argument (an in-place
recurrence): the array and its tangent are copied into buffers the plan
keeps across calls (adpasses/api/forward.py `_Workspace`), so the caller's
arrays stay unchanged, every call starts from the caller's values, calls
of another size get buffers of that size, and concurrent calls (threads)
do not share them. Each tangent is checked against central differences.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

import adpasses


@adpasses.jit
def recurrence(x, c):
    for i in range(1, len(x)):
        x[i] = math.sin(x[i]) * x[i - 1] + c * x[i]
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


def reference(x: np.ndarray, c: float) -> float:
    x = x.copy()
    for i in range(1, len(x)):
        x[i] = math.sin(x[i]) * x[i - 1] + c * x[i]
    return float(np.sum(x * x))


def directional(x: np.ndarray, c: float, u: np.ndarray, uc: float, h: float = 1e-6) -> float:
    return (reference(x + h * u, c + h * uc) - reference(x - h * u, c - h * uc)) / (2 * h)


@pytest.mark.parametrize("n", [5, 40])
def test_repeated_calls_leave_arguments_unchanged_and_match_differences(n: int) -> None:
    rng = np.random.default_rng(n)
    for _ in range(3):  # the first call plans, the next ones take the fast path
        x, u = rng.uniform(0.2, 0.6, n), rng.standard_normal(n)
        c, uc = float(rng.uniform(0.1, 0.5)), float(rng.standard_normal())
        x_before, u_before = x.copy(), u.copy()
        value, tangent = adpasses.jvp(recurrence, (x, c), (u, uc))
        assert value == pytest.approx(reference(x, c), rel=1e-12)
        assert tangent == pytest.approx(directional(x, c, u, uc), rel=1e-6, abs=1e-8)
        np.testing.assert_array_equal(x, x_before)
        np.testing.assert_array_equal(u, u_before)
        # No tangent for x: its written copy still starts from the caller's values.
        value2, tangent2 = adpasses.jvp(recurrence, (x, c), (None, uc))
        assert value2 == value
        assert tangent2 == pytest.approx(directional(x, c, np.zeros(n), uc), rel=1e-6, abs=1e-8)


def test_concurrent_calls_do_not_share_buffers() -> None:
    rng = np.random.default_rng(3)
    cases = [(rng.uniform(0.2, 0.6, 200), rng.standard_normal(200), float(rng.uniform(0.1, 0.5)))
             for _ in range(4)]
    expected = [adpasses.jvp(recurrence, (x, c), (u, 0.0)) for x, u, c in cases]
    got: dict[int, list] = {k: [] for k in range(len(cases))}
    barrier = threading.Barrier(len(cases))

    def work(k: int) -> None:
        x, u, c = cases[k]
        barrier.wait()
        for _ in range(50):
            got[k].append(adpasses.jvp(recurrence, (x, c), (u, 0.0)))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, results in got.items():
        assert len(results) == 50
        assert all(r == expected[k] for r in results)
