"""A prange loop reading an array a callee returned as a view of its
argument (`t = flip(x)`, `return x[::-1]`). Found by the array fuzzer
(`--mode arrays`, seed 100145): the loop is rejected with "this prange
loop cannot run in parallel: ... ? (unknown origin: func.call ...) may
address allocation ?" (the reduction's accumulator slot), while the same
loop reading `x[::-1]` directly is proven independent. The proof now
follows a call's result to the argument it views (the callee's summary,
`analysis/returned_views.py`); loops whose iterations really depend on
each other through the view, or through a helper writing it, stay refused.
The alias oracle's random programs with such calls:
test/test_alias_oracle.py."""

from __future__ import annotations

import numpy as np
import pytest

import math

import adpasses
from adpasses import prange
from adpasses.native import runtime
from finite_diff import central_fd


@pytest.fixture(autouse=True)
def threads():  # type: ignore[no-untyped-def]
    before = adpasses.get_num_threads()
    work = runtime.set_parallel_min_work(1)  # one chunk per thread for these small arrays
    yield
    adpasses.set_num_threads(before)
    runtime.set_parallel_min_work(work)


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


def test_a_prange_sum_reading_a_returned_view_is_proven_independent() -> None:
    a1, a2 = _inputs()
    assert adpasses.jit(via_call)(a1, a2) == pytest.approx(via_call(a1, a2), rel=1e-12)




def _pooled(call):  # type: ignore[no-untyped-def]
    before = runtime.pool_stats()["pooled_loops"]
    result = call()
    return result, runtime.pool_stats()["pooled_loops"] - before


def _gradient(jf, args):  # type: ignore[no-untyped-def]
    """(gradients, pooled loops) of one `autodiff` call into zeroed shadows
    (grad would also zero its shadows on the pool: loops of its own)."""
    shadows = [np.zeros_like(a) for a in args]
    _, pooled = _pooled(lambda: adpasses.autodiff(jf, *[adpasses.Duplicated(a.copy(), d)
                                                         for a, d in zip(args, shadows)]))
    return shadows, pooled


def test_the_loop_and_its_gradient_run_on_the_pool_and_match_differences() -> None:
    """The seed's loop (64 rows) on 1, 2, 3 threads: on the pool but with
    one thread, the value Python's. Its gradient adds every row's terms into
    all of da1 through the reversed view of the shadow: accumulations into
    private copies of da1 (transforms/privatize.py, through views built in
    the loop), so it runs on the pool too, with the same bits on every
    thread count (fixed chunks), against central differences."""
    rng = np.random.default_rng(7)
    a1, a2 = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, (64, 3))
    jf = adpasses.jit(via_call)
    grads = {}
    for count in (1, 2, 3):
        adpasses.set_num_threads(count)
        value, pooled = _pooled(lambda: jf(a1, a2))
        assert pooled == (0 if count == 1 else 1)
        assert value == pytest.approx(via_call(a1, a2), rel=1e-12)
        grads[count], pooled = _gradient(jf, [a1, a2])
        assert pooled == (0 if count == 1 else 1), (count, pooled)
        for k in (0, 1):
            fd = central_fd(via_call, [a1, a2], k)
            assert np.allclose(grads[count][k], fd, rtol=1e-6, atol=1e-8), (count, k)
    assert all(np.array_equal(a, b) for c in (2, 3) for a, b in zip(grads[1], grads[c]))
    report = adpasses.cache_report(jf, a1, a2, argnums=(0, 1))
    assert [(p.sweep, p.parallel) for p in report.parallel_loops] == [("primal", True), ("gradient", True)]


def flip_sum(x, w):  # type: ignore[no-untyped-def]
    t = flip(x)
    s = 0.0
    for i in prange(w.shape[0]):
        s += w[i] * math.sin(t[i])
    return s


def test_elementwise_reads_of_a_returned_view_run_in_parallel_forward_and_reverse() -> None:
    """`s += w[i] * sin(t[i])`, t = flip(x): iteration i reads x[n-1-i] and
    its reverse adds into dx[n-1-i] through the shadow's reversed view, built
    in the loop from dx's own metadata (an identity layout: stride -1, an
    affine view): both loops on the pool, gradient against differences."""
    rng = np.random.default_rng(8)
    x, w = rng.uniform(-1, 1, 31), rng.uniform(-1, 1, 31)
    jf = adpasses.jit(flip_sum)
    grads = {}
    for count in (1, 2, 3):
        adpasses.set_num_threads(count)
        value, pooled = _pooled(lambda: jf(x, w))
        assert pooled == (0 if count == 1 else 1)
        assert value == pytest.approx(flip_sum(x, w), rel=1e-12)
        grads[count], pooled = _gradient(jf, [x, w])
        assert pooled == (0 if count == 1 else 1), count  # loop-local reverse: one loop
        for k in (0, 1):
            fd = central_fd(flip_sum, [x, w], k)
            assert np.allclose(grads[count][k], fd, rtol=1e-6, atol=1e-8), (count, k)
    # no sum across iterations into a shadow: the same bits on any thread count
    assert all(np.array_equal(a, b) for a, b in zip(grads[1], grads[3]))
    report = adpasses.cache_report(jf, x, w, argnums=(0, 1))
    assert [(p.sweep, p.parallel) for p in report.parallel_loops] == [("primal", True), ("gradient", True)]


def overlapping(x):  # type: ignore[no-untyped-def]
    t = flip(x)
    for i in prange(x.shape[0]):
        x[i] = t[i] * 2.0  # reads x[n-1-i], which iteration n-1-i writes
    return x[0]


def halve_last(x):  # type: ignore[no-untyped-def]
    v = x[::-1]
    v[0] = v[0] * 0.5  # writes x[n-1] through the view
    return v


def writes_through_view(x, w):  # type: ignore[no-untyped-def]
    s = 0.0
    for i in prange(w.shape[0]):
        t = halve_last(x)
        s += t[i] * w[i]
    return s


def view_written(x, y):  # type: ignore[no-untyped-def]
    t = flip(x)
    for i in prange(x.shape[0]):
        t[i] = y[i] + x[i]  # writes x[n-1-i], read by iteration n-1-i
    return x[0]


@pytest.mark.parametrize("fn, where", [
    (overlapping, "the assignment at"),
    (writes_through_view, "the call of halve_last"),
    (view_written, "the assignment at"),
], ids=["overlaps-another-iterations-write", "helper-writes-through-view", "write-through-returned-view"])
def test_dependent_iterations_through_a_returned_view_stay_refused(fn, where) -> None:  # type: ignore[no-untyped-def]
    x = np.linspace(0.1, 1.0, 7)
    args = (x,) if fn is overlapping else (x, x + 1.0)
    with pytest.raises(adpasses.CompileError, match="this prange loop cannot run in parallel") as info:
        adpasses.jit(fn)(*[a.copy() for a in args])
    assert where in str(info.value) and "use range" in str(info.value)
