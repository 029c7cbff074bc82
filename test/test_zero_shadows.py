"""grad(f) of a function that runs parallel loops zeroes the shadows it
allocates inside the compiled gradient, on the worker pool (`ad-zero-shadows`,
adpasses/transforms/private_copies.py `zero_shadows_inside`): the fast path
passes `np.empty` shadows, and no serial memset runs before the call.

Each case: the gradient matches central finite differences of the plain
Python function on random inputs and is bit-identical for a given thread
count (rank 2 through a flat view, rank 1 fused into a loop over the same
range, rank 1 fitted to a loop by step 2 or 3 and fused); the compiled gradient called directly with shadows full of garbage
(NaN) gives the same numbers (so the fill really runs inside it); empty and
odd sizes; a bounds error raised in a worker thread reaches the caller with
the user's line; vmap(grad, parallel=True) zero-fills its batched output
on the pool (batch_loops ZEROED)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects import scf

import adpasses
from adpasses import prange
from adpasses.dialects.ad import PARALLEL_ATTR
from adpasses.native import runtime
from finite_diff import central_fd


def rows(V, W):
    # kernel 3's batch: rank-2 shadows, zeroed through a flat view
    s = 0.0
    for k in prange(V.shape[0]):
        s += V[k, 0] * V[k, 1] * math.sin(W[k, 0]) + math.exp(0.1 * V[k, 2]) * W[k, 1]
    return s


def weighted(x, w):
    # rank-1: x's shadow fill fuses into the loop over the same range
    s = 0.0
    for i in prange(len(x)):
        s += w[i] * math.sin(x[i]) * x[i]
    return s


def strided_pairs(x):
    # a loop over another range (step 2): the fill stays a loop of its own
    s = 0.0
    for i in prange(0, len(x) - 1, 2):
        d = x[i + 1] - x[i]
        s += d * d
    return s


def triples(x, w):
    # step 3 up to len(x) - 2: the fill fitted to the loop (x[i .. i + 2] in
    # iteration i) and fused; the last elements zeroed by a loop of their own
    s = 0.0
    for i in prange(0, len(x) - 2, 3):
        d = x[i + 2] * w[i] - x[i] * x[i + 1]
        s += d * d
    return s


def gather(x, idx):
    s = 0.0
    for i in prange(len(idx)):
        s += x[idx[i]] * x[idx[i]]
    return s


def serial_rows(V, W):
    s = 0.0
    for k in range(V.shape[0]):
        s += V[k, 0] * V[k, 1] * math.sin(W[k, 0]) + math.exp(0.1 * V[k, 2]) * W[k, 1]
    return s


@pytest.fixture(autouse=True)
def settings():
    threads, work = adpasses.get_num_threads(), runtime.get_parallel_min_work()
    runtime.set_parallel_min_work(1)  # small arrays on the pool too
    yield
    adpasses.set_num_threads(threads)
    runtime.set_parallel_min_work(work)




def loaded(g, args):
    """The compiled gradient grad's fast path calls, after a first call."""
    g(*args)
    (plan,) = g._plans.values()
    return plan.variants[True]


CASES = {
    "rank 2": (rows, lambda rng, n: (rng.uniform(-1, 1, (n, 3)), rng.uniform(-1, 1, (n, 2)))),
    "rank 1, fused": (weighted, lambda rng, n: (rng.uniform(-1, 1, n), rng.uniform(-1, 1, n))),
    "step 2, fitted": (strided_pairs, lambda rng, n: (rng.uniform(-1, 1, n),)),
    "step 3, fitted": (triples, lambda rng, n: (rng.uniform(-1, 1, n), rng.uniform(-1, 1, n))),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("n", [1, 2, 3, 7, 61])
def test_zeroed_shadows_match_finite_differences_and_thread_counts(name, n):
    f, make = CASES[name]
    args = make(np.random.default_rng(n), n)
    jf = adpasses.jit(f)
    nums = tuple(range(len(args)))
    g = adpasses.grad(jf, nums)
    assert loaded(g, args).zeroed == frozenset(nums)  # every shadow zeroed inside
    results = []
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        first = g(*args)
        again = g(*args)  # np.empty shadows (the fast path): possibly the last call's memory
        assert all(np.array_equal(a, b) for a, b in zip(first, again)), (name, threads)
        results.append(first)
    for k in nums:
        fd = central_fd(f, list(args), k)
        for threads, r in zip((1, 2, 3), results):
            np.testing.assert_allclose(r[k], fd, rtol=1e-6, atol=1e-8, err_msg=f"{name}, {threads} threads")


@pytest.mark.parametrize("name", list(CASES))
def test_compiled_gradient_zeroes_garbage_shadows_itself(name):
    f, make = CASES[name]
    args = make(np.random.default_rng(5), 33)
    jf = adpasses.jit(f)
    g = adpasses.grad(jf, tuple(range(len(args))))
    want = g(*args)
    lg = loaded(g, args)
    for threads in (1, 2):
        adpasses.set_num_threads(threads)
        shadows = [np.full_like(a, np.nan) for a in args]
        call = [v for a, s in zip(args, shadows) for v in (a, s)]
        lg.call(*call, 1.0)
        for s, w in zip(shadows, want):
            assert np.array_equal(s, w), (name, threads)


def test_fitted_fill_is_fused_into_the_users_loop():
    """Kernel 1's gradient: the fill of dx is in the loop (one parallel
    loop for the function, and the small one for the last element)."""
    from adpasses.api.functions import function_named
    from xdsl.dialects import scf

    jf = adpasses.jit(strided_pairs)
    g = adpasses.grad(jf)
    lg = loaded(g, (np.random.default_rng(1).uniform(-1, 1, 9),))
    body = function_named(lg.module, lg.gradient_name).body.block
    loops = [op for op in body.ops if isinstance(op, scf.ForOp)]
    assert len(loops) == 2  # the tail's fill, then the user's loop with the fill inside
    assert [str(op.attributes.get("ad.parallel")) for op in loops] == ['"zero"', '"prange"']


def test_empty_arrays():
    jf = adpasses.jit(rows)
    V, W = np.zeros((0, 3)), np.zeros((0, 2))
    adpasses.set_num_threads(2)
    dV, dW = adpasses.grad(jf, (0, 1))(V, W)
    dV, dW = adpasses.grad(jf, (0, 1))(V, W)
    assert dV.shape == (0, 3) and dW.shape == (0, 2)


def test_serial_gradients_zero_their_shadows_serially():
    # a serial function with a loop: zeroed inside too, by loops not on the
    # pool (test_zero_shadows_serial.py: the GIL is released during them)
    jf = adpasses.jit(serial_rows)
    rng = np.random.default_rng(3)
    args = (rng.uniform(-1, 1, (9, 3)), rng.uniform(-1, 1, (9, 2)))
    g = adpasses.grad(jf, (0, 1))
    lg = loaded(g, args)
    assert lg.zeroed == frozenset({0, 1})
    assert not any(isinstance(op, scf.ForOp) and PARALLEL_ATTR in op.attributes for op in lg.module.walk())
    for k in (0, 1):
        np.testing.assert_allclose(g(*args)[k], central_fd(serial_rows, list(args), k), rtol=1e-6, atol=1e-8)


def test_bounds_error_in_a_worker_reaches_the_caller():
    jf = adpasses.jit(gather)
    x = np.random.default_rng(7).uniform(-1, 1, 40)
    idx = np.arange(40)
    g = adpasses.grad(jf, 0)
    np.testing.assert_allclose(g(x, idx), 2 * x, rtol=1e-14)
    assert loaded(g, (x, idx)).zeroed == frozenset({0})
    bad = idx.copy()
    bad[37] = 40  # in the last chunk: a worker thread's
    adpasses.set_num_threads(3)
    for _ in range(2):  # the slow path, then the fast path
        with pytest.raises(IndexError) as err:
            g(x, bad)
        assert "test_zero_shadows.py" in str(err.value) or any(
            "test_zero_shadows.py" in str(t.path) for t in err.traceback)
    np.testing.assert_allclose(g(x, idx), 2 * x, rtol=1e-14)  # and it still works


def test_autodiff_still_accumulates_into_the_callers_shadows():
    # autodiff's gradient is not the one grad compiles: it must not zero
    jf = adpasses.jit(weighted)
    rng = np.random.default_rng(11)
    x, w = rng.uniform(-1, 1, 17), rng.uniform(-1, 1, 17)
    dx, dw = np.ones(17), np.ones(17)
    adpasses.autodiff(jf, adpasses.Duplicated(x, dx), adpasses.Duplicated(w, dw))
    gx, gw = adpasses.grad(jf, (0, 1))(x, w)
    np.testing.assert_allclose(dx, 1.0 + gx, rtol=1e-14)
    np.testing.assert_allclose(dw, 1.0 + gw, rtol=1e-14)


def logistic(x, w, y):
    z = 0.0
    for i in range(len(x)):
        z += x[i] * w[i]
    return math.log(1.0 + math.exp(-y * z))


@pytest.mark.parametrize("B", [0, 1, 5, 40])
def test_vmap_parallel_grad_zero_fills_its_output_on_the_pool(B):
    rng = np.random.default_rng(B)
    d = 7
    X, w, Y = rng.normal(size=(B, d)), rng.normal(size=d), np.sign(rng.normal(size=B))
    serial = adpasses.vmap(adpasses.grad(logistic, 1), in_axes=(0, None, 0))
    mapped = adpasses.vmap(adpasses.grad(logistic, 1), in_axes=(0, None, 0), parallel=True)
    want = serial(X, w, Y)
    z = X @ w
    hand = (-Y * np.exp(-Y * z) / (1.0 + np.exp(-Y * z)))[:, None] * X
    np.testing.assert_allclose(want, hand, rtol=1e-12, atol=1e-14)
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        for _ in range(2):  # the second call's output may be the first's memory (np.empty)
            G = mapped(X, w, Y)
            assert G.shape == (B, d)
            assert np.array_equal(G, want), threads
    fills = [loop for loop in mapped.parallel_loops if loop.mark == "zero-fill of the results"]
    assert len(fills) == 1 and fills[0].parallel
