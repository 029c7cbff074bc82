"""Binomial (revolve) checkpointing of time loops: `grad(f, snapshots=S)`,
`grad(f, memory_limit=..., schedule="revolve")`,
`ad-checkpoint-loops{schedule=revolve snapshots=S}`.

The schedule (adpasses/cache/revolve.py) is checked against the optimum
computed by its recursion, the generated code against the schedule: a C
counter called by every step counts the steps run forward (advances and
taped reruns), which must be N + F(N, S) (F: the fewest advances), and the
gradients must equal the gradient without checkpointing (to rounding) and
central finite differences, on random inputs."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

import adpasses
from adpasses.cache import revolve
from adpasses.native import runtime
from finite_diff import assert_matches, finite_differences
from revolve_kernels import COUNT, counted, counted_plain, euler, scalar_state, strided


@lru_cache(maxsize=None)
def fewest_advances(steps: int, snaps: int) -> int:
    """F(l, c) = min_m m + F(l - m, c - 1) + F(m, c); F(l, 1) = l(l-1)/2 (by its recursion)."""
    if steps <= 1:
        return 0
    if snaps == 1:
        return steps * (steps - 1) // 2
    return min(m + fewest_advances(steps - m, snaps - 1) + fewest_advances(m, snaps)
               for m in range(1, steps))


# -- the schedule ----------------------------------------------------------------------


@pytest.mark.parametrize("snaps", range(1, 9))
def test_closed_form_is_the_optimum(snaps):
    for steps in range(0, 160):
        assert revolve.min_advances(steps, snaps) == fewest_advances(steps, snaps), (steps, snaps)


@pytest.mark.parametrize("snaps", range(2, 9))
def test_first_advance_is_an_optimal_split(snaps):
    for steps in range(2, 160):
        m = revolve.first_advance(steps, snaps)
        assert 1 <= m < steps
        assert m + fewest_advances(steps - m, snaps - 1) + fewest_advances(m, snaps) \
            == fewest_advances(steps, snaps), (steps, snaps, m)


def test_reach_is_binomial():
    # with c snapshots and r repetitions, C(c + r, c) steps and no more
    for c in range(1, 7):
        for r in range(0, 6):
            assert revolve.repetitions(revolve.beta(c, r), c) == r
            assert revolve.repetitions(revolve.beta(c, r) + 1, c) == r + 1


def replay(steps, snaps):
    """Run the schedule's actions on a symbolic state; every step must be
    reversed once, in order, from the state it started from."""
    actions = revolve.schedule(steps, snaps)
    slots, state, reversed_steps = {}, 0, []
    for a in actions:
        assert a.slot < max(1, min(snaps, steps))
        if a.kind == "snapshot":
            assert state == a.start
            slots[a.slot] = a.start
        elif a.kind == "advance":
            assert state == a.start < a.stop
            state = a.stop
        elif a.kind == "restore":
            assert slots[a.slot] == a.start
            state = a.start
        elif a.kind == "taped":
            assert state == a.start == steps - 1
            state = None
        else:
            if a.start != steps - 1:  # the last step is reversed from the forward sweep's tape
                assert state == a.start, (steps, snaps, a)
            reversed_steps.append(a.start)
            state = None
    assert reversed_steps == list(range(steps - 1, -1, -1))
    return actions


@pytest.mark.parametrize("snaps", [1, 2, 3, 4, 7, 16])
def test_schedule_reverses_every_step_with_the_optimal_count(snaps):
    for steps in range(0, 130):
        actions = replay(steps, snaps)
        assert revolve.count_advanced(actions, "forward") == max(steps - 1, 0)
        assert revolve.count_advanced(actions) == revolve.reverse_advances(steps, snaps)
        # the forward sweep plus the reverse: revolve's optimum
        if steps:
            assert max(steps - 1, 0) + revolve.reverse_advances(steps, snaps) == fewest_advances(steps, snaps)


@pytest.mark.parametrize("bad", [0, -3, True, 2.5])
def test_schedule_rejects_bad_snapshot_counts(bad):
    with pytest.raises(ValueError, match="at least 1 snapshot"):
        revolve.schedule(10, bad)


# -- the generated code ----------------------------------------------------------------


PLAIN = adpasses.grad(counted, argnums=(0, 1))


@pytest.mark.parametrize("snaps", [1, 2, 3, 5, 8])
def test_gradient_and_step_count_follow_the_schedule(snaps):
    g = adpasses.grad(counted, argnums=(0, 1), snapshots=snaps)
    rng = np.random.default_rng(snaps)
    for steps in (0, 1, 2, 3, 4, 7, 9, 17, 40):
        u, w = rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 5)
        ref = PLAIN(u.copy(), w.copy(), steps)
        COUNT[0] = 0
        got = g(u.copy(), w.copy(), steps)
        # each step once in the forward sweep, once taped, plus the advances
        assert COUNT[0] == steps + revolve.min_advances(steps, snaps), (steps, snaps)
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("steps,snaps", [(1, 4), (2, 1), (3, 8), (11, 3), (23, 2)])
def test_gradient_matches_finite_differences(steps, snaps):
    rng = np.random.default_rng(100 + steps)
    u, w = rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 4)
    got = adpasses.grad(counted, argnums=(0, 1), snapshots=snaps)(u.copy(), w.copy(), steps)
    for g, d in zip(got, finite_differences(counted_plain, [u, w, steps], (0, 1))):
        assert_matches(g, d)


def check(f, args, argnums, **budget):
    ref = adpasses.grad(f, argnums)(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    got = adpasses.grad(f, argnums, **budget)(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    ref = ref if isinstance(ref, tuple) else (ref,)
    got = got if isinstance(got, tuple) else (got,)
    for g, r, d in zip(got, ref, finite_differences(f, list(args), argnums)):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-14)
        assert_matches(np.atleast_1d(g), np.atleast_1d(d))


@pytest.mark.parametrize("steps,snaps", [(0, 2), (1, 1), (5, 2), (12, 3), (12, 20)])
def test_euler_state_overwritten_in_place(steps, snaps):
    u = np.random.default_rng(steps).uniform(0.2, 0.9, 6)
    check(euler, (u, steps, 0.05), (0, 2), snapshots=snaps)


@pytest.mark.parametrize("steps,snaps", [(0, 1), (1, 3), (9, 2), (30, 4)])
def test_carried_scalars_and_an_active_scalar_used_by_every_step(steps, snaps):
    w = np.random.default_rng(steps).uniform(-1, 1, 4)
    check(scalar_state, (w, steps, 0.3), (0, 2), snapshots=snaps)


@pytest.mark.parametrize("steps,snaps", [(1, 2), (2, 2), (14, 2), (20, 3)])
def test_loop_step_not_one(steps, snaps):
    u = np.random.default_rng(steps).uniform(-0.5, 0.5, 4)
    check(strided, (u, steps), (0,), snapshots=snaps)


def test_snapshots_from_a_byte_budget():
    """schedule="revolve" with memory_limit: as many snapshots as fit
    beside two steps' tapes (the last step's, and the one a step's
    gradient holds), chosen when the gradient runs; the peak within the
    limit."""
    u, w = np.random.default_rng(5).uniform(-1, 1, 50), np.random.default_rng(6).uniform(-1, 1, 50)
    steps = 30
    jf = adpasses.jit(counted, snapshots=1)
    one_state = 50 * 8 + 8  # u and the carried s (w is only read)
    step_tape = adpasses.cache_report(jf, u, w, steps).callees[0][1].taped_bytes
    for snaps in (1, 3, 6):
        limit = 2 * step_tape + snaps * one_state + one_state // 2
        report = adpasses.cache_report(adpasses.jit(counted, tape_limit=limit, schedule="revolve"), u, w, steps)
        [(_, stats)] = report.revolves
        # the step's tape is estimated before the loop (the cache plan of the
        # loop body), the callee's report measures it: here they agree
        assert stats.state_bytes == one_state and stats.snapshots == snaps
        assert report.peak_taped_bytes <= limit
        COUNT[0] = 0
        got = adpasses.grad(counted, (0, 1), memory_limit=limit, schedule="revolve")(u.copy(), w.copy(), steps)
        assert COUNT[0] == steps + revolve.min_advances(steps, stats.snapshots)
        for a, b in zip(got, PLAIN(u.copy(), w.copy(), steps)):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    # a budget the whole tape fits in: no checkpointing, every step runs once
    COUNT[0] = 0
    adpasses.grad(counted, (0, 1), memory_limit="1GB", schedule="revolve")(u.copy(), w.copy(), steps)
    assert COUNT[0] == steps


def test_report_bounds_the_memory_by_the_snapshots():
    u = np.random.default_rng(0).uniform(0.5, 1.0, 100)
    steps = 200
    plain = adpasses.cache_report(euler, u, steps, 0.01)
    for snaps in (2, 4, 8):
        report = adpasses.cache_report(adpasses.jit(euler, snapshots=snaps), u, steps, 0.01)
        [(_, stats)] = report.revolves
        state = 100 * 8  # u (du is each step's scratch)
        assert (stats.steps, stats.snapshots, stats.state_bytes) == (steps - 1, snaps, state)
        assert stats.recomputed_steps == revolve.reverse_advances(steps, snaps)
        step_tape = 99 * 8
        # the snapshots, the last step's tape, one step's tape inside its gradient
        assert report.peak_taped_bytes == snaps * state + 2 * step_tape
        assert report.peak_taped_bytes <= (snaps + 2) * state
        assert report.recompute_factor == revolve.repetitions(steps, snaps) + 1
        assert f"{snaps} snapshots of {state} bytes" in str(report)
    assert plain.taped_bytes == steps * 99 * 8


def test_heap_measured_by_the_runtime():
    """The heap the compiled gradient allocates (snapshots, working state,
    one step's tape) is a few states, not one per step."""
    import types

    u = np.random.default_rng(1).uniform(0.5, 1.0, 200)
    used = {}
    for snaps in (None, 4):
        fresh = types.FunctionType(euler.__code__, euler.__globals__, "euler")
        g = adpasses.grad(fresh, snapshots=snaps) if snaps else adpasses.grad(fresh)
        runtime.reset_stats()
        g(u.copy(), 128, 0.01)
        used[snaps] = runtime.stats()["bytes"]
        if snaps:
            # snapshots and working state are workspaces: nothing allocated again
            runtime.reset_stats()
            g(u.copy(), 128, 0.01)
            assert runtime.stats()["allocations"] == 0
    state = 200 * 8
    assert used[None] >= 128 * 199 * 8
    # 4 snapshots, working u and du, du and its shadow, two step tapes, positions
    assert used[4] <= 12 * state


@pytest.mark.parametrize("kwargs,error,match", [
    ({"snapshots": 0}, ValueError, "snapshots=0 holds no state"),
    ({"snapshots": -2}, ValueError, "at least 1"),
    ({"snapshots": True}, TypeError, "snapshots must be an int"),
    ({"snapshots": "4"}, TypeError, "snapshots must be an int"),
    ({"schedule": "binomial"}, ValueError, "schedule must be 'auto', 'sqrt' or 'revolve'"),
    ({"schedule": "auto", "snapshots": 4}, ValueError, "snapshots= is revolve's budget"),
    ({"schedule": "sqrt", "snapshots": 4}, ValueError, "snapshots= is revolve's budget"),
    ({"schedule": "revolve"}, ValueError, "needs a budget"),
])
def test_bad_budgets_are_rejected_clearly(kwargs, error, match):
    with pytest.raises(error, match=match):
        adpasses.grad(euler, **kwargs)
    with pytest.raises(error, match=match.replace("memory_limit", "tape_limit")):
        adpasses.jit(euler, **kwargs)


def test_pass_options_are_checked():
    from adpasses.transforms.checkpoint_loops import CheckpointLoopsPass

    with pytest.raises(ValueError, match="schedule must be one of auto, sqrt, revolve"):
        CheckpointLoopsPass(0, "binomial")
    with pytest.raises(ValueError, match="snapshots must be >= 1"):
        CheckpointLoopsPass(-1, "revolve", -1)
    with pytest.raises(ValueError, match="snapshots needs schedule=revolve"):
        CheckpointLoopsPass(0, "sqrt", 4)


def test_checkpointed_call_on_overlapping_arrays_names_the_python_variables():
    """An explicit checkpoint(g) given an array and a view of it: the error
    names the Python variables and where they are defined, not SSA values."""
    from revolve_kernels import checkpoint_with_a_view

    with pytest.raises(adpasses.CompileError) as err:
        adpasses.grad(checkpoint_with_a_view)(np.ones(4))
    import inspect

    lines, first = inspect.getsourcelines(checkpoint_with_a_view)
    h_line = first + next(k for k, text in enumerate(lines) if "h = np.zeros" in text)
    tail_line = first + next(k for k, text in enumerate(lines) if "tail = h[1:]" in text)
    message = str(err.value)
    assert "%" not in message.split("error:")[1]
    assert f"arrays h (" in message and f"revolve_kernels.py:{h_line}) and tail (" in message
    assert f"revolve_kernels.py:{tail_line}) may share memory" in message
    assert "pass the array once" in message


@pytest.mark.parametrize("outer,inner,snaps", [(4, 3, 2), (1, 1, 3), (0, 4, 2), (5, 0, 2)])
def test_nested_time_loops(outer, inner, snaps):
    from revolve_kernels import nested_time_loops

    u = np.random.default_rng(outer * 7 + inner).uniform(-0.5, 0.5, 5)
    check(nested_time_loops, (u, outer, inner), (0,), snapshots=snaps)


@pytest.mark.parametrize("steps,snaps", [(0, 2), (1, 2), (7, 3)])
def test_a_view_of_the_state_used_in_the_loop(steps, snaps):
    from revolve_kernels import slice_copy_state

    rng = np.random.default_rng(40 + steps)
    check(slice_copy_state, (rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6), steps), (0, 1), snapshots=snaps)
