"""Activity across calls (issue 18, item 5): an array the function passes to
a helper that only reads it carries no derivative, as when the helper is
inlined by hand. `grad` gives the arrays a function may write a throwaway
shadow (derivatives may flow through their memory); which arrays a call
writes is judged from the callee's body (`memory_writes.WriteEffects`), not
"every array passed to a call" (which made such an array `dup`, computed its
derivative and threw it away, and doubled the tape of `exp_weights` below).

Each helper version is compared with its inlined twin: the activities of
the arguments, the cache report (decisions and taped bytes) and the
gradient, which is also checked against central finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from finite_diff import assert_matches, copy_args, finite_differences

import adpasses

N = 64


# -- helpers -----------------------------------------------------------------


def exp_into(src, dst):
    for i in range(src.shape[0]):
        dst[i] = math.exp(src[i])


def exp_into_np(src, dst):
    dst[:] = np.exp(src)


def exp_via(src, dst):  # a helper calling a helper
    exp_into(src, dst)


def scale_in_place(c, k):
    for i in range(c.shape[0]):
        c[i] = c[i] * k


# -- functions with a helper call, and their hand-inlined twins -------------
# Each returns s * s: the sum's loop is then not the last thing differentiated,
# so it is reversed after its forward (not iteration by iteration, which
# tapes nothing), and what it tapes shows which arrays are active.


def exp_weights(x, c):
    w = np.zeros(c.shape[0])
    exp_into(c, w)
    s = 0.0
    for i in range(x.shape[0]):
        s += math.exp(x[i]) * w[i]
    return s * s


def exp_weights_inlined(x, c):
    w = np.zeros(c.shape[0])
    for i in range(c.shape[0]):
        w[i] = math.exp(c[i])
    s = 0.0
    for i in range(x.shape[0]):
        s += math.exp(x[i]) * w[i]
    return s * s


def exp_weights_np(x, c):
    w = np.zeros(c.shape[0])
    exp_into_np(c, w)
    s = 0.0
    for i in range(x.shape[0]):
        s += math.exp(x[i]) * w[i]
    return s * s


def exp_weights_np_inlined(x, c):
    w = np.zeros(c.shape[0])
    w[:] = np.exp(c)
    s = 0.0
    for i in range(x.shape[0]):
        s += math.exp(x[i]) * w[i]
    return s * s


def exp_weights_nested(x, c):
    w = np.zeros(c.shape[0])
    exp_via(c, w)
    s = 0.0
    for i in range(x.shape[0]):
        s += math.exp(x[i]) * w[i]
    return s * s


def both_through_helper(x, c):
    """x goes through the same helper: its call stays differentiated."""
    wx = np.zeros(x.shape[0])
    exp_into(x, wx)
    wc = np.zeros(c.shape[0])
    exp_into(c, wc)
    s = 0.0
    for i in range(x.shape[0]):
        s += wx[i] * wc[i]
    return s * s


def both_inlined(x, c):
    wx = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        wx[i] = math.exp(x[i])
    wc = np.zeros(c.shape[0])
    for i in range(c.shape[0]):
        wc[i] = math.exp(c[i])
    s = 0.0
    for i in range(x.shape[0]):
        s += wx[i] * wc[i]
    return s * s


def writes_c(x, c):
    """A helper that writes c: c may carry derivatives (a throwaway shadow)."""
    scale_in_place(c, 2.0)
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * c[i]
    return s * s


def writes_c_inlined(x, c):
    for i in range(c.shape[0]):
        c[i] = c[i] * 2.0
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * c[i]
    return s * s


PAIRS = [
    (exp_weights, exp_weights_inlined),
    (exp_weights_np, exp_weights_np_inlined),
    (exp_weights_nested, exp_weights_inlined),
    (both_through_helper, both_inlined),
    (writes_c, writes_c_inlined),
]


def arg_activities(f, args) -> str:
    """`(args: dup, const; ...)` of the activity report of grad(f, 0)."""
    first = adpasses.inspect(adpasses.jit(f), *args, argnums=0).activity.splitlines()[0]
    return first[first.index("(args:"):]


def decisions(report) -> list[tuple[str, str, int | None]]:
    return sorted((e.decision, e.dtype, e.bytes) for e in report.entries
                  if e.decision in ("tape", "reload"))


@pytest.fixture
def args():
    rng = np.random.default_rng(2026_11_26)
    return [rng.uniform(-1.0, 1.0, N), rng.uniform(-1.0, 1.0, N)]


@pytest.mark.parametrize("called, inlined", PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_helper_call_and_inlined_twin_agree(called, inlined, args) -> None:
    assert arg_activities(called, args) == arg_activities(inlined, args)
    rc = adpasses.cache_report(adpasses.jit(called), *args, argnums=0)
    ri = adpasses.cache_report(adpasses.jit(inlined), *args, argnums=0)
    assert rc.taped_bytes == ri.taped_bytes
    assert decisions(rc) == decisions(ri)
    gc = adpasses.grad(adpasses.jit(called))(*copy_args(args))
    gi = adpasses.grad(adpasses.jit(inlined))(*copy_args(args))
    np.testing.assert_allclose(gc, gi, rtol=1e-13, atol=1e-15)
    (fd,) = finite_differences(called, args, (0,))
    assert_matches(gc, fd, what=called.__name__)


@pytest.mark.parametrize("f", [exp_weights, exp_weights_np, exp_weights_nested])
def test_array_a_helper_only_reads_is_const(f, args) -> None:
    """c is only read (by the helper): const, no shadow; only exp(x[i]) is
    taped (8 bytes per element), not also exp(c[i]) (the doubling)."""
    assert arg_activities(f, args).startswith("(args: dup, const;")
    report = adpasses.cache_report(adpasses.jit(f), *args, argnums=0)
    assert report.taped_bytes == 8 * N


def test_array_a_helper_writes_stays_differentiated(args) -> None:
    assert arg_activities(writes_c, args).startswith("(args: dup, dup;")
    assert adpasses.jit(writes_c).written_arrays(tuple(args)) == {1}


def test_written_arrays_follow_the_callee() -> None:
    x, c = np.ones(3), np.ones(3)
    assert adpasses.jit(exp_weights).written_arrays((x, c)) == set()
    assert adpasses.jit(exp_into).written_arrays((x, c)) == {1}
    assert adpasses.jit(exp_into_np).written_arrays((x, c)) == {1}
    assert adpasses.jit(exp_via).written_arrays((x, c)) == {1}
