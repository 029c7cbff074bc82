"""Binomial checkpointing (revolve; Griewank 1992, Griewank & Walther 2000):
the schedule that reverses a time loop of `steps` iterations holding at
most `snaps` states, with the fewest step recomputations.

Terms. A *snapshot* is a copy of the loop's state (its carried values and
the memory its steps overwrite) at a step boundary; snapshot 0 holds the
state the loop starts from, so `snaps` >= 1 counts it. To *advance* is to
run steps without taping them; the *adjoint step* j reruns step j taping
it, then reverses it. With c snapshots and r repetitions (each step run
forward at most r times besides its taped run) at most beta(c, r) =
C(c + r, c) steps can be reversed, and reversing l steps needs

    F(l, c) = r*l - beta(c + 1, r - 1)   advances (l >= 2; r the least
                                          integer with beta(c, r) >= l)

which is optimal (`min_advances`; tests check it against the recursion
F(l, c) = min_m m + F(l - m, c - 1) + F(m, c)). Revolve's first advance
from a snapshot over a range of l steps with c snapshots free (counting
the one at the range's start) goes m = min(beta(c, r - 1), l - beta(c - 1,
r - 1)) steps, an optimal split (`first_advance`).

How the compiler runs it (`ad-checkpoint-loops{schedule=revolve}`,
adpasses/reverse/rules/revolve.py): the forward sweep is revolve's first
descent (snapshot 0, then advance and snapshot down to the end) and runs
the last step taped, as a plain loop iteration; the reverse sweep reverses
that step from its tape, then the rest in the order of `schedule`. The
forward sweep advances steps - 1 steps (it must compute the loop's result
anyway), so the reverse sweep recomputes

    F(steps, snaps) - (steps - 1)   steps  (`reverse_advances`)

besides one taped rerun of each step but the last. The state machine
below (`schedule`) is the one the generated code runs; both use the same
first-advance rule, so the counts the tests check are the generated code's.
"""

from __future__ import annotations

from dataclasses import dataclass


def beta(c: int, r: int) -> int:
    """C(c + r, c): the most steps c snapshots reverse with r repetitions."""
    if r < 0 or c < 0:
        return 0
    value = 1
    for k in range(1, r + 1):
        value = value * (c + k) // k
    return value


def repetitions(steps: int, snaps: int) -> int:
    """The least r with beta(snaps, r) >= steps."""
    r, reach = 0, 1
    while reach < steps:
        r += 1
        reach = reach * (snaps + r) // r
    return r


def min_advances(steps: int, snaps: int) -> int:
    """The fewest untaped step runs that reverse `steps` steps starting
    from one held state with `snaps` snapshots (revolve's count; the last
    step's state reached by advancing, every step taped once besides)."""
    _check(steps, snaps)
    if steps <= 1:
        return 0
    r = repetitions(steps, snaps)
    return r * steps - beta(snaps + 1, r - 1)


def first_advance(steps: int, snaps: int) -> int:
    """How far revolve advances from a snapshot over `steps` >= 2 steps
    with `snaps` >= 2 snapshots free (the one at the start included)."""
    r = repetitions(steps, snaps)
    return max(1, min(beta(snaps, r - 1), steps - beta(snaps - 1, r - 1)))


def reverse_advances(steps: int, snaps: int) -> int:
    """The untaped step runs of the compiler's reverse sweep (the forward
    sweep has done revolve's first descent and taped the last step)."""
    return min_advances(steps, snaps) - (steps - 1) if steps else 0


@dataclass(frozen=True)
class Action:
    """One action of the schedule: `advance` (steps [start, stop) untaped),
    `snapshot` (save the state at `start` in `slot`), `restore` (the state
    at `start` from `slot`), `taped` (the last step, run taped in the
    forward sweep), `adjoint` (step `start` rerun taped and reversed)."""

    kind: str
    start: int
    stop: int = 0
    slot: int = 0
    sweep: str = "reverse"


def schedule(steps: int, snaps: int) -> list[Action]:
    """The actions, in order, that the generated code performs for a loop
    of `steps` iterations and `snaps` snapshots."""
    _check(steps, snaps)
    actions: list[Action] = []
    if steps == 0:
        return actions
    snaps = min(snaps, steps)  # more snapshots than steps are never used
    positions = [0]
    actions.append(Action("snapshot", 0, slot=0, sweep="forward"))
    top = 0
    # A snapshot at steps - 1 would be of no use: the forward sweep's state
    # is there when it tapes the last step.
    while len(positions) < snaps and steps - top > 2:
        m = first_advance(steps - top, snaps - len(positions) + 1)
        actions.append(Action("advance", top, top + m, sweep="forward"))
        top += m
        positions.append(top)
        actions.append(Action("snapshot", top, slot=len(positions) - 1, sweep="forward"))
    if top < steps - 1:
        actions.append(Action("advance", top, steps - 1, sweep="forward"))
    actions.append(Action("taped", steps - 1, sweep="forward"))
    actions.append(Action("adjoint", steps - 1))
    hi, current = steps - 1, -1  # steps [0, hi) remain; `current`: the working state's position
    while hi > 0:
        k = len(positions) - 1
        top = positions[k]
        assert top < hi, "a snapshot at or after the steps left"
        if current != top:
            actions.append(Action("restore", top, slot=k))
            current = top
        if hi - top == 1 or len(positions) == snaps:
            if top < hi - 1:
                actions.append(Action("advance", top, hi - 1))
            actions.append(Action("adjoint", hi - 1))
            hi, current = hi - 1, -1
            if hi == top and k > 0:
                positions.pop()
        else:
            m = first_advance(hi - top, snaps - k)
            actions.append(Action("advance", top, top + m))
            positions.append(top + m)
            actions.append(Action("snapshot", top + m, slot=k + 1))
            current = top + m
    return actions


def count_advanced(actions: list[Action], sweep: str = "reverse") -> int:
    return sum(a.stop - a.start for a in actions if a.kind == "advance" and a.sweep == sweep)


def _check(steps: int, snaps: int) -> None:
    if not isinstance(snaps, int) or isinstance(snaps, bool) or snaps < 1:
        raise ValueError(f"revolve needs at least 1 snapshot (the loop's initial state), got {snaps!r}")
    if steps < 0:
        raise ValueError(f"a loop runs 0 or more steps, got {steps!r}")
