"""A byte budget alone (`grad(f, memory_limit=...)`, `jit(tape_limit=...)`):
the schedule that fits is chosen when the gradient runs: no
checkpointing when the whole tape fits, sqrt segments when they fit,
else the binomial (revolve) schedule with as many snapshots as fit beside
two steps' tapes, else a MemoryError naming the least budget.

For each regime: the cache report names the schedule and its numbers, the
report's peak taped bytes (snapshots + tapes, as the generated code pushes
them) is within the budget, the runtime's count of heap bytes of the first
call stays within the budget plus the buffers that are not tape (working
state, local arrays and their shadows), and the gradient equals the one
without checkpointing and central finite differences on random inputs."""

from __future__ import annotations

import types

import numpy as np
import pytest

import adpasses
from adpasses.native import runtime
from finite_diff import assert_matches, copy_args, finite_differences
from revolve_kernels import counted_plain, euler, scalar_state

N, STEPS = 40, 60
STATE = N * 8                # u (du is written before it is read each step: scratch)
STEP_TAPE = (N - 1) * 8      # u[i] ** 3 needs u[i], i >= 1


def fresh(f):  # type: ignore[no-untyped-def]
    """A new function object: compiled anew, so the runtime counts its first call."""
    return types.FunctionType(f.__code__, f.__globals__, f.__name__)


def args_of(seed=0):  # type: ignore[no-untyped-def]
    return [np.random.default_rng(seed).uniform(0.3, 0.9, N), STEPS, 0.02]


def choice(limit):  # type: ignore[no-untyped-def]
    report = adpasses.cache_report(adpasses.jit(euler, tape_limit=limit), *args_of())
    [c] = report.schedules
    return report, c


def check_gradient(f, args, argnums, **budget):  # type: ignore[no-untyped-def]
    ref = adpasses.grad(f, argnums)(*copy_args(args))
    got = adpasses.grad(f, argnums, **budget)(*copy_args(args))
    ref = ref if isinstance(ref, tuple) else (ref,)
    got = got if isinstance(got, tuple) else (got,)
    for g, r, d in zip(got, ref, finite_differences(f, list(args), argnums)):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-14)
        assert_matches(np.atleast_1d(g), np.atleast_1d(d))


def sqrt_bytes():  # type: ignore[no-untyped-def]
    """What the sqrt segments hold (the report says it for any limit below the whole tape)."""
    return choice(1)[1].sqrt_bytes


def test_the_numbers_of_the_choice():
    # k = ceil(sqrt(N*S/T)) = ceil(sqrt(60*320/312)) = 8, ceildiv(60, 8) = 8 segments
    assert sqrt_bytes() == 8 * STATE + 8 * STEP_TAPE
    assert choice(1)[1].least == STATE + 2 * STEP_TAPE


def test_whole_tape_fits_no_checkpointing():
    plain = adpasses.cache_report(euler, *args_of())
    report, c = choice(plain.taped_bytes)
    assert c.schedule == "none" and report.peak_taped_bytes == plain.taped_bytes
    assert "no checkpointing (the loop's whole tape fits)" in str(report)
    check_gradient(euler, args_of(1), (0,), memory_limit=plain.taped_bytes)


def test_sqrt_segments_when_they_fit():
    limit = sqrt_bytes()
    report, c = choice(limit)
    assert c.schedule == "sqrt" and report.peak_taped_bytes <= limit
    assert f"sqrt segments (they hold {limit} bytes <= {limit})" in str(report)
    check_gradient(euler, args_of(2), (0,), memory_limit=limit)


@pytest.mark.parametrize("snaps", [1, 2, 5])
def test_revolve_when_the_sqrt_segments_do_not_fit(snaps):
    limit = snaps * STATE + 2 * STEP_TAPE + STATE // 2
    assert limit < sqrt_bytes()
    report, c = choice(limit)
    assert (c.schedule, c.snapshots, c.state_bytes) == ("revolve", snaps, STATE)
    assert report.peak_taped_bytes <= limit
    [(_, stats)] = report.revolves
    assert stats.steps == STEPS - 1 and stats.snapshots == snaps
    text = str(report)
    assert (f"under a limit of {limit} bytes: binomial (revolve), {snaps} snapshots of {STATE} bytes "
            f"(sqrt segments would hold {sqrt_bytes()} bytes > {limit}); it needs at least "
            f"{STATE + 2 * STEP_TAPE} bytes") in text
    check_gradient(euler, args_of(3 + snaps), (0,), memory_limit=limit)


def test_the_heap_measured_by_the_runtime_stays_within_the_budget():
    """The first call's heap (runtime counter: snapshots, tapes, positions,
    and the buffers that are not tape: the working state, the scratch du
    in the working copy, du itself and its shadow, and the gradient's own
    copy of the array f writes, `ad-private-copies`) against the budget:
    the tapes and snapshots fit it, the rest is 5 states and the
    positions. (Passed a strided view, which the caller copies instead,
    the heap is one state less.)"""
    limit = 3 * STATE + 2 * STEP_TAPE
    g = adpasses.grad(fresh(euler), memory_limit=limit)
    runtime.reset_stats()
    g(*args_of(9))
    heap = runtime.stats()["bytes"]
    assert heap <= limit + 5 * STATE + 8 * 3
    # taping every step would take more than 5 times that (18720 bytes
    # against 3208)
    assert adpasses.cache_report(euler, *args_of(9)).taped_bytes > 5 * heap


def test_no_schedule_fits_a_clear_error():
    least = STATE + 2 * STEP_TAPE
    with pytest.raises(MemoryError) as err:
        adpasses.grad(euler, memory_limit=least - 1)(*args_of())
    message = str(err.value)
    assert f"of {least - 1} bytes is too small for this time loop" in message
    assert f"needs at least {least} bytes" in message
    assert f"sqrt segments would hold {sqrt_bytes()} bytes" in message
    assert "revolve_kernels.py:" in message  # the loop's line
    report, c = choice(least - 1)
    assert c.schedule == "too small" and "the gradient raises MemoryError" in str(report)
    # the least itself is enough
    check_gradient(euler, args_of(4), (0,), memory_limit=least)


def test_report_as_json():
    import json

    limit = 2 * STATE + 2 * STEP_TAPE
    [entry] = json.loads(choice(limit)[0].to_json())["schedules"]
    assert entry == {"location": entry["location"], "limit": limit, "schedule": "revolve",
                     "least_bytes": STATE + 2 * STEP_TAPE, "sqrt_bytes": sqrt_bytes(), "snapshots": 2,
                     "state_bytes": STATE}


@pytest.mark.parametrize("steps", [0, 1, 2, 25])
def test_carried_scalars_and_a_read_only_array(steps):
    """counted: an array state, a carried scalar, a read-only array; a
    budget of two snapshots under revolve."""
    from revolve_kernels import counted

    rng = np.random.default_rng(steps)
    u, w = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6)
    limit = 2 * (6 * 8 + 8) + 2 * 6 * 8 * 2
    ref = adpasses.grad(counted, (0, 1))(u.copy(), w.copy(), steps)
    got = adpasses.grad(counted, (0, 1), memory_limit=limit)(u.copy(), w.copy(), steps)
    for g, r, d in zip(got, ref, finite_differences(counted_plain, [u, w, steps], (0, 1))):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-14)
        assert_matches(g, d)


def test_scalar_state_only():
    """Two carried scalars (16 bytes a state), 16 bytes a step: revolve
    needs 48; 64 holds two snapshots."""
    w = np.random.default_rng(11).uniform(-1, 1, 4)
    report = adpasses.cache_report(adpasses.jit(scalar_state, tape_limit=64), w, 30, 0.3, argnums=(0, 2))
    [c] = report.schedules
    assert (c.schedule, c.snapshots, c.least) == ("revolve", 2, 48)
    check_gradient(scalar_state, (w, 30, 0.3), (0, 2), memory_limit=64)


def test_explicit_sqrt_keeps_the_segments():
    """schedule="sqrt": segments whatever they hold (the report says so)."""
    limit = STATE
    report = adpasses.cache_report(adpasses.jit(euler, tape_limit=limit, schedule="sqrt"), *args_of())
    assert not report.schedules and not report.revolves
    assert report.peak_taped_bytes == sqrt_bytes() > limit
    check_gradient(euler, args_of(5), (0,), memory_limit=limit, schedule="sqrt")
