"""Automatic loop checkpointing (`grad(f, memory_limit=...)`,
`jit(tape_limit=...)`, `ad-reverse{tape-limit=N}`).

With `schedule="sqrt"` and a limit of 0 bytes every time loop that tapes
anything is split into segments of ceil(sqrt(steps)) iterations and
recomputed in the reverse sweep (without `schedule=`, a limit the segments
do not fit switches to revolve: test_checkpoint_auto.py).
Each gradient must equal the gradient without checkpointing (to rounding)
and central finite differences, on random inputs: scalar state, array state
overwritten in place, nested time loops, zero-trip and one-trip loops, step
counts not divisible by the segment length, a loop step other than 1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import adpasses
from adpasses.native import runtime
from finite_diff import assert_matches, finite_differences


def scalar_state(w, steps):
    s = 0.3
    for t in range(steps):
        s = math.tanh(s * w[t % len(w)] + 0.5) + 0.1 * s
    return s * s


def array_state(u, steps, dt):
    n = len(u)
    du = np.zeros(n)
    for t in range(steps):
        for i in range(1, n):
            du[i] = -u[i] ** 3 + 0.1 * u[i - 1]
        for i in range(1, n):
            u[i] = u[i] + dt * du[i]
    s = 0.0
    for i in range(n):
        s += math.sin(u[i]) * u[i]
    return s


def nested_time_loops(u, outer, inner):
    """A time loop inside a time loop, both carrying state, with an
    accumulated scalar and an array overwritten in place."""
    acc = 0.0
    for k in range(outer):
        for t in range(inner):
            for i in range(len(u)):
                u[i] = math.sin(u[i] + 0.1 * k) * 0.9 + 0.05 * t
        for i in range(len(u)):
            acc = acc * 0.5 + u[i] * u[i]
    return acc


def strided_steps(u, steps):
    s = 1.0
    for t in range(1, steps, 3):
        for i in range(len(u)):
            u[i] = u[i] * 0.9 + 0.01 * t * math.cos(u[i])
        s = s * 0.99 + u[t % len(u)]
    return s


def sinkhorn_style(a, b, iters):
    """An array read in an inner loop and overwritten later (a Sinkhorn-like
    alternating update)."""
    n = len(a)
    v = np.ones(n)
    for k in range(iters):
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += math.exp(-(a[i] - b[j]) ** 2) * v[j]
            a[i] = 0.5 * a[i] + 0.1 / s
        for j in range(n):
            v[j] = 1.0 / (1.0 + a[j] * a[j])
    t = 0.0
    for i in range(n):
        t += a[i] * v[i]
    return t


def two_buffers_slice_copy(x, w, steps):
    # the loop uses h and the view h[:] (a slice store): the segment takes h once
    h = np.zeros(len(x))
    h2 = np.zeros(len(x))
    h[:] = x
    for t in range(steps):
        for i in range(len(h2)):
            h2[i] = math.sin(h[i] * w[i]) + 0.5 * h[i]
        h[:] = h2
    s = 0.0
    for i in range(len(h)):
        s += h[i] * h[i]
    return s


def check(f, args, argnums):
    plain = adpasses.jit(f)
    limited = adpasses.jit(f, tape_limit=0, schedule="sqrt")
    ref = adpasses.grad(plain, argnums)(*args)
    got = adpasses.grad(limited, argnums)(*args)
    fd = finite_differences(f, list(args), argnums)
    ref = ref if isinstance(ref, tuple) else (ref,)
    got = got if isinstance(got, tuple) else (got,)
    for g, r, d in zip(got, ref, fd):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-14)
        assert_matches(np.atleast_1d(g), np.atleast_1d(d))


@pytest.mark.parametrize("steps", [0, 1, 2, 10, 17])
def test_scalar_state(steps):
    w = np.random.default_rng(steps).uniform(-1, 1, 4)
    check(scalar_state, (w, steps), (0,))


@pytest.mark.parametrize("steps", [0, 1, 5, 11])
def test_array_state_overwritten_in_place(steps):
    u = np.random.default_rng(10 + steps).uniform(0.2, 0.9, 7)
    check(array_state, (u, steps, 0.05), (0,))


@pytest.mark.parametrize("outer,inner", [(3, 5), (1, 1), (0, 4), (4, 0)])
def test_nested_time_loops(outer, inner):
    u = np.random.default_rng(outer * 7 + inner).uniform(-0.5, 0.5, 5)
    check(nested_time_loops, (u, outer, inner), (0,))


@pytest.mark.parametrize("steps", [0, 1, 6, 13])
def test_views_of_the_state_used_in_the_loop(steps):
    """A view the loop uses beside its source (`h[:] = h2`, the view made before the loop for `h[:] = x`) is recomputed
    inside each segment: the checkpointed call takes each array once."""
    rng = np.random.default_rng(40 + steps)
    check(two_buffers_slice_copy, (rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6), steps), (0, 1))


@pytest.mark.parametrize("steps", [1, 2, 14])
def test_loop_step_not_one(steps):
    u = np.random.default_rng(steps).uniform(-0.5, 0.5, 4)
    check(strided_steps, (u, steps), (0,))


def test_sinkhorn_style_array_read_in_an_inner_loop_and_overwritten_later():
    rng = np.random.default_rng(3)
    check(sinkhorn_style, (rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6), 5), (0, 1))


def test_limit_chooses_segments_and_report_shows_snapshots():
    u = np.random.default_rng(0).uniform(0.5, 1.0, 100)
    steps = 100
    plain = adpasses.cache_report(array_state, u, steps, 0.01)
    ck = adpasses.cache_report(adpasses.jit(array_state, tape_limit="1kB", schedule="sqrt"), u, steps, 0.01)
    assert plain.recompute_factor == 1 and not plain.callees
    assert ck.recompute_factor == 2
    snapshots = [e for e in ck.entries if e.decision == "snapshot"]
    # S = 800 bytes (u; du is written before it is read in each step: a
    # scratch buffer, not snapshot), T = 99 * 8 per step: segments of
    # k = ceil(sqrt(100 * 800 / 792)) = 11 steps, 10 segments, 10 snapshots.
    assert {e.bytes for e in snapshots} == {10 * 100 * 8}
    assert [e.decision for e in ck.entries if e.value == "np.zeros(n)"] == ["scratch"]
    # The time loop only: the final sum's iterations are independent, it is
    # reversed loop-locally and tapes nothing (docs/parallel.md), so it is
    # not checkpointed.
    [(_, segment)] = ck.callees
    assert segment.primal == "array_state_segment_0"
    assert segment.taped_bytes == 11 * 99 * 8  # one segment: 11 steps of u[i], i >= 1
    assert ck.loops[-1][1] and "iterations independent" in ck.loops[-1][2]
    assert ck.peak_taped_bytes == ck.taped_bytes + segment.taped_bytes
    assert ck.peak_taped_bytes < plain.taped_bytes / 3
    text = str(ck)
    assert "checkpoint @array_state_segment_0" in text and "recompute factor: 2" in text


def test_taped_memory_measured_by_the_runtime():
    """The heap the compiled gradient allocates on its first call (tape
    workspaces, snapshots; the runtime's counting allocator) shrinks."""
    import types

    u = np.random.default_rng(1).uniform(0.5, 1.0, 200)
    used = {}
    for limit in (None, 0):
        fresh = types.FunctionType(array_state.__code__, array_state.__globals__, "array_state")
        g = adpasses.grad(adpasses.jit(fresh, tape_limit=limit, schedule=None if limit is None else "sqrt"))
        runtime.reset_stats()
        g(u.copy(), 64, 0.01)
        used[limit] = runtime.stats()["bytes"]
    # 64 states (one per step) vs 8 snapshots of u and of du plus one
    # segment of 8 steps: 24 states.
    assert used[None] >= 64 * 199 * 8
    assert used[0] < used[None] / 2


def test_under_the_limit_one_segment():
    """When the loop's tape fits the limit it is one segment: no
    checkpointed call runs (the loop after the segments runs every
    iteration), the tape is the one without checkpointing, the gradient
    the same."""
    u = np.random.default_rng(2).uniform(0.5, 1.0, 50)
    plain = adpasses.cache_report(array_state, u, 30, 0.01)
    ck = adpasses.cache_report(adpasses.jit(array_state, tape_limit="1GB", schedule="sqrt"), u, 30, 0.01)
    assert {e.bytes for e in ck.entries if e.decision == "snapshot"} == {0}
    assert ck.taped_bytes == plain.taped_bytes == ck.peak_taped_bytes
    assert "not called for these arguments" in str(ck)
    auto = adpasses.cache_report(adpasses.jit(array_state, tape_limit="1GB"), u, 30, 0.01)
    assert auto.taped_bytes == plain.taped_bytes == auto.peak_taped_bytes
    assert "no checkpointing (the loop's whole tape fits)" in str(auto)
    check(array_state, (u, 30, 0.01), (0,))


def test_bad_limits_are_clear_errors():
    with pytest.raises(ValueError, match="not a size"):
        adpasses.grad(array_state, memory_limit="lots")
    with pytest.raises(ValueError, match="at least 0"):
        adpasses.jit(array_state, tape_limit=-5)
    with pytest.raises(TypeError, match="number of bytes"):
        adpasses.grad(array_state, memory_limit=[1])
    for bad in ("1.2.3MB", "+", "e"):  # were float()'s own ValueError
        with pytest.raises(ValueError, match="not a size"):
            adpasses.grad(array_state, memory_limit=bad)


@pytest.mark.parametrize("limit", [10**30, 2**64, "1e99", "1e999", "1e30GB"])
def test_limits_beyond_any_memory_mean_no_limit(limit):
    """A limit larger than 2**63 - 1 bytes (an address space's most) used to
    fail deep in the IR builder (xDSL's VerifyException: out of range for
    i64), and "1e999" with OverflowError; it is the largest limit: the
    loop's whole tape fits, the gradient is the plain one."""
    u = np.random.default_rng(3).uniform(0.5, 1.0, 20)
    got = adpasses.grad(array_state, memory_limit=limit)(u.copy(), 12, 0.01)
    np.testing.assert_allclose(got, adpasses.grad(array_state)(u.copy(), 12, 0.01), rtol=1e-13, atol=1e-15)
    report = adpasses.cache_report(adpasses.jit(array_state, tape_limit=limit), u, 12, 0.01)
    assert "no checkpointing (the loop's whole tape fits)" in str(report)
