"""Taped values of exclusive branches share one tape (adpasses/cache/shared_tapes.py):
an `if` that runs once per call pushes the values of one branch only, so
one buffer sized for the larger branch holds them. Gradients against
central finite differences through every branch (two and three ways, the
loops of different lengths), the cache report counting the shared tape
once, an `if` inside a loop (both branches run over the iterations) keeping
a tape each, and the array log-sum-exp (its reduction chooses a loop order
at run time) taping what the loop spelling tapes."""

from __future__ import annotations

import math

import numpy as np
import pytest

import adpasses
from adpasses.cache.shared_tapes import exclusive, shared_tape_groups
from finite_diff import assert_matches, finite_differences


def one_of_two_loops(x, w):
    n = x.shape[0]
    total = 0.0
    if w > 0.0:
        for i in range(n):
            total += math.exp(x[i]) * w
    else:
        for i in range(1, n):
            total += math.exp(x[i] * w) + math.sin(x[i - 1])
    return total


def one_of_three_loops(x, w):
    n = x.shape[0]
    total = 0.0
    if w > 1.0:
        for i in range(n):
            total += math.exp(x[i] * w)
    elif w > -1.0:
        for i in range(n // 2):
            total += math.exp(x[2 * i]) * math.exp(w)
    else:
        for i in range(n):
            total += math.log(1.0 + x[i] * x[i]) * w
    return total


def branch_in_a_loop(x, w):
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            total += math.exp(x[i] * w)
        else:
            total += math.exp(x[i] + w)
    return total


def _check(f, x, w) -> None:
    gx, gw = adpasses.grad(adpasses.jit(f), argnums=(0, 1))(x, w)
    want_x, want_w = finite_differences(f, [x, w], (0, 1))
    assert_matches(gx, want_x, what=f"{f.__name__} d/dx (w={w})")
    assert_matches(np.array(gw), np.array(want_w), what=f"{f.__name__} d/dw (w={w})")


@pytest.mark.parametrize("w", [0.7, -0.4])
def test_two_branches_gradients(w) -> None:
    x = np.random.default_rng(1).normal(size=9)
    _check(one_of_two_loops, x, w)


@pytest.mark.parametrize("w", [1.3, 0.2, -1.6])
def test_three_branches_gradients(w) -> None:
    x = np.random.default_rng(2).normal(size=8)
    _check(one_of_three_loops, x, w)


def _shared(report) -> list:  # type: ignore[no-untyped-def]
    return [e for e in report.entries if e.tape_group is not None]


def test_the_report_counts_a_shared_tape_once() -> None:
    n = 9
    x = np.random.default_rng(3).normal(size=n)
    report = adpasses.cache_report(adpasses.jit(one_of_two_loops), x, 0.5, argnums=(0, 1))
    shared = _shared(report)
    assert len(shared) == 2 and shared[0].tape_group == shared[1].tape_group, str(report)
    assert sorted(e.bytes for e in shared) == [8 * (n - 1), 8 * n]
    unshared = sum(e.bytes for e in report.entries if e.decision == "tape" and e.tape_group is None)
    assert report.taped_bytes == unshared + 8 * n, str(report)
    assert "max(" in report.taped_bytes_formula
    assert report.to_dict()["entries"][report.entries.index(shared[0])]["tape_group"] == shared[0].tape_group


def test_three_branches_one_tape() -> None:
    x = np.random.default_rng(4).normal(size=8)
    report = adpasses.cache_report(adpasses.jit(one_of_three_loops), x, 0.5, argnums=(0, 1))
    shared = _shared(report)
    # One value of each branch (exp, exp, log); the second branch's other
    # exponential has a tape of its own (its branch pushes both).
    assert len(shared) == 3 and len({e.tape_group for e in shared}) == 1, str(report)
    assert sorted(e.op for e in shared) == ["math.exp", "math.exp", "math.log"]
    assert len({e.location for e in shared}) == 3


def test_a_branch_in_a_loop_keeps_a_tape_each() -> None:
    x = np.random.default_rng(5).normal(size=10)
    _check(branch_in_a_loop, x, 0.3)
    report = adpasses.cache_report(adpasses.jit(branch_in_a_loop), x, 0.3, argnums=(0, 1))
    assert not _shared(report), str(report)


def test_exclusive_needs_another_region_of_a_choice_run_once() -> None:
    """The relation itself, on the IR of the functions above."""
    x = np.zeros(4)
    for f, expected in ((one_of_two_loops, True), (branch_in_a_loop, False)):
        module, name = adpasses.jit(f).build((x, 0.5), True)
        function = next(op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == name)
        exps = [op.results[0] for op in function.walk() if op.name == "math.exp"]
        assert len(exps) == 2
        assert exclusive(exps[0], exps[1], function) is expected
        assert exclusive(exps[0], exps[0], function) is False
        groups = shared_tape_groups(exps, function)
        assert len(groups) == (1 if expected else 2)


def one_of_two_parallel_loops(x, w):
    """x[i] is overwritten in each branch's parallel loop: a value per
    iteration is taped in each (exp(x[i]) in one, x[i] in the other)."""
    n = x.shape[0]
    total = 0.0
    if w > 0.0:
        for i in adpasses.prange(n):
            t = math.exp(x[i])
            x[i] = math.log(1.0 + t)
            total += x[i] * t * w
    else:
        for i in adpasses.prange(n):
            t = math.exp(x[i] * w)
            x[i] = math.log(1.0 + t)
            total += x[i] * t
    return total * total


@pytest.mark.parametrize("w", [0.6, -0.5])
def test_parallel_loops_in_branches_keep_a_tape_each(w) -> None:
    """A fixed tape layout (one row per iteration) needs every push of its
    tape in one loop: values of parallel loops are not shared."""
    x = np.random.default_rng(6).normal(size=12)
    _check(one_of_two_parallel_loops, x, w)
    report = adpasses.cache_report(adpasses.jit(one_of_two_parallel_loops), x.copy(), w, argnums=(0, 1))
    taped = [e for e in report.entries if e.decision == "tape"]
    assert len(taped) == 2 and {e.dtype for e in taped} == {"f64"}, str(report)  # one per branch
    assert not _shared(report), str(report)
