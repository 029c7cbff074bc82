"""Tapes of parallel loops (issue 17, docs/parallel.md "Tapes and parallel
loops"): when every iteration of a loop marked parallel tapes a fixed
number k of values, the tape is an (iterations, k) buffer written by row
(transforms/tape_layout.py), so the forward loop and its reverse loop both
run on the pool. Gradients against central finite differences on 1, 2 and
3 threads; bits across thread counts; loops whose tape has no fixed layout,
or whose iterations depend on each other, stay serial and right."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects import func

import adpasses
from adpasses import prange
from adpasses.native import runtime
from adpasses.transforms.parallelize import parallel_report
from benchmarks.kernels.parallel import taped_softplus
from finite_diff import central_fd


@pytest.fixture(autouse=True)
def threads():
    before = adpasses.get_num_threads()
    work = runtime.set_parallel_min_work(1)  # one chunk per thread for these small arrays
    yield
    adpasses.set_num_threads(before)
    runtime.set_parallel_min_work(work)


# The benchmark's taped prange loop: x[i] is overwritten, so exp(x[i]) is
# taped (one value per iteration); the sum is used after the loop, so the
# reverse is a loop of its own.
taped_sum = adpasses.jit(taped_softplus)


@adpasses.jit
def taped_two(x, y, w):
    """Two arrays overwritten in each iteration: two values taped per iteration."""
    s = 0.0
    for i in prange(len(x)):
        a = x[i]
        x[i] = math.sin(a)
        b = y[i]
        y[i] = math.exp(b * x[i])
        s += w[i] * y[i] * a * b
    return s * s


@adpasses.jit
def taped_rows(x, y):
    """No sum in the parallel loop: each gradient element is computed by
    one iteration, so its bits do not depend on the thread count."""
    for i in prange(len(x)):
        t = math.exp(x[i])
        x[i] = math.log(1.0 + t)
        y[i] = x[i] * t
    s = 0.0
    for i in range(len(y)):
        s += y[i] * y[i]
    return s


@adpasses.jit
def taped_inner(X, w):
    """A product recurrence in an inner loop of m = X.shape[1] iterations:
    m values taped per row, m known when the prange loop starts."""
    s = 0.0
    for i in prange(X.shape[0]):
        t = 1.0
        for j in range(X.shape[1]):
            t = t * X[i, j]
        s += t * w[i]
    return s * s


@adpasses.jit(parallel=True)
def taped_triangle(X, w):
    """The inner loop runs i times: no fixed count per row."""
    s = 0.0
    for i in range(X.shape[0]):
        t = 1.0
        for j in range(i):
            t = t * X[i, j]
        s += t * w[i]
    return s * s


@adpasses.jit(parallel=True)
def taped_branch(x, w):
    """Tapes only where w[i] > 0: a slot per iteration, used or not."""
    s = 0.0
    for i in range(len(x)):
        if w[i] > 0.0:
            t = math.exp(x[i])
            x[i] = math.log(1.0 + t)
            s += w[i] * x[i] * t
    return s * s


@adpasses.jit(parallel=True)
def taped_carried(x, w):
    """Iteration i reads what iteration i - 1 wrote."""
    s = 0.0
    for i in range(1, len(x)):
        t = math.exp(x[i - 1])
        x[i] = math.log(1.0 + t) * w[i] + x[i]
        s += x[i] * t
    return s * s




def gradient_loops(jf, args):
    """(location, problem) of each loop marked parallel in the gradient."""
    g = jf.gradient(list(args), ("dup",) * len(args), False, True)
    f = next(op for op in g.module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == g.gradient_name)
    return parallel_report(f)


def zero_fills(jf, args):
    """How many shadows grad's gradient of `jf` zeroes on the pool itself
    (those of the arrays it does not copy: private_copies.zero_shadows_inside):
    one loop of the pool each, besides the function's own."""
    g = adpasses.grad(jf, tuple(range(len(args))))
    g(*[a.copy() for a in args])
    (plan,) = g._plans.values()
    return len(plan.variants[True].zeroed)


def _inputs(n, count, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(n) * 0.7 for _ in range(count)]


@pytest.mark.parametrize("kernel, count", [(taped_sum, 2), (taped_two, 3)], ids=["k1", "k2"])
def test_taped_parallel_loop_gradient_matches_finite_differences_on_the_pool(kernel, count):
    args = _inputs(97, count, 11)
    argnums = tuple(range(count))
    fills = zero_fills(kernel, args)
    assert fills == 1  # w's shadow (x, and y, are copied by the gradient, which zero-fills their shadows there)
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        before = runtime.pool_stats()["pooled_loops"]
        grads = adpasses.grad(kernel, argnums)(*[a.copy() for a in args])
        pooled = runtime.pool_stats()["pooled_loops"] - before
        # forward and reverse loop on the pool, and the zero-fill, except with one thread
        assert pooled == (0 if threads == 1 else 2 + fills), (threads, pooled)
        for k, g in enumerate(grads):
            fd = central_fd(kernel, args, k)
            assert np.allclose(g, fd, rtol=1e-6, atol=1e-7 * np.abs(fd).max()), (threads, k)
        again = adpasses.grad(kernel, argnums)(*[a.copy() for a in args])
        assert all(np.array_equal(a, b) for a, b in zip(grads, again))  # same bits for a thread count
    problems = gradient_loops(kernel, args)
    assert len(problems) == 2 and all(p is None for _, p in problems), problems


def test_fixed_layout_is_one_row_per_iteration_and_no_counter():
    """The lowered gradient's tapes: (n, 1) buffers (the builder makes a
    tape per taped value; several values of one tape per iteration are in
    test/lit/pipeline/lower_tapes_parallel.mlir), no stack counter."""
    for kernel, count, tapes in ((taped_sum, 2, 1), (taped_two, 3, 2)):
        args = _inputs(5, count, 3)
        g = kernel.gradient(list(args), ("dup",) * count, False, True)
        text = str(g.module)
        assert text.count("ad.tape_layout = 1 : index") == tapes and "memref<?x1xf64>" in text
        assert "memref<1xindex>" not in text  # no stack counter


def test_bits_do_not_depend_on_the_thread_count_without_sums():
    x, y = _inputs(101, 2, 7)
    results = []
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        results.append(adpasses.grad(taped_rows, (0, 1))(x.copy(), y.copy()))
    for gx, gy in results[1:]:
        assert np.array_equal(gx, results[0][0]) and np.array_equal(gy, results[0][1])
    fd = central_fd(taped_rows, [x, y], 0)
    assert np.allclose(results[0][0], fd, rtol=1e-6, atol=1e-7 * np.abs(fd).max())
    problems = [p for _, p in gradient_loops(taped_rows, [x, y])]
    assert problems == [None, None], problems


def test_tape_pushed_in_a_branch_has_a_slot_per_iteration_and_runs_on_the_pool():
    """The branch runs at most once per iteration and the reverse takes it
    in the same iterations: row q is written and read only then."""
    x, w = _inputs(41, 2, 13)
    problems = [p for _, p in gradient_loops(taped_branch, [x, w])]
    assert problems == [None, None], problems
    fills = zero_fills(taped_branch, [x, w])
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        before = runtime.pool_stats()["pooled_loops"]
        gx, gw = adpasses.grad(taped_branch, (0, 1))(x.copy(), w.copy())
        assert runtime.pool_stats()["pooled_loops"] - before == (0 if threads == 1 else 2 + fills)
        assert np.allclose(gx, central_fd(taped_branch, [x, w], 0), rtol=1e-6, atol=1e-8)
        assert np.allclose(gw, central_fd(taped_branch, [x, w], 1), rtol=1e-6, atol=1e-8)


def test_loop_with_a_carried_dependence_stays_serial():
    x, w = _inputs(23, 2, 17)
    problems = [p for _, p in gradient_loops(taped_carried, [x, w])]
    assert problems and all(p is not None and "depend on each other" in p for p in problems), problems
    fills = zero_fills(taped_carried, [x, w])  # the zero-fill of a shadow still runs on the pool
    adpasses.set_num_threads(3)
    before = runtime.pool_stats()["pooled_loops"]
    gx, gw = adpasses.grad(taped_carried, (0, 1))(x.copy(), w.copy())
    assert runtime.pool_stats()["pooled_loops"] == before + fills
    assert np.allclose(gx, central_fd(taped_carried, [x, w], 0), rtol=1e-6, atol=1e-8)
    assert np.allclose(gw, central_fd(taped_carried, [x, w], 1), rtol=1e-6, atol=1e-8)


def test_split_mode_hands_the_fixed_layout_tape_to_a_parallel_reverse():
    x, w = _inputs(33, 2, 19)
    adpasses.set_num_threads(3)
    fwd, rev = adpasses.split(taped_sum)
    out, tape = fwd(x, w)
    assert out == pytest.approx(taped_sum(x.copy(), w.copy()), rel=1e-12)
    before = runtime.pool_stats()["pooled_loops"]
    gx, gw = rev(tape, 1.0)
    assert runtime.pool_stats()["pooled_loops"] - before == 1  # the reverse loop
    assert np.allclose(gx, central_fd(taped_sum, [x, w], 0), rtol=1e-6)
    assert np.allclose(gw, central_fd(taped_sum, [x, w], 1), rtol=1e-6)


def test_inner_counted_loop_tapes_a_row_of_m_values_per_iteration():
    rng = np.random.default_rng(23)
    X, w = rng.uniform(0.5, 1.5, (19, 4)), rng.standard_normal(19)
    g = taped_inner.gradient([X, w], ("dup", "dup"), False, True)
    assert "memref<?x?x1xf64>" in str(g.module) and "memref<1xindex>" not in str(g.module)
    problems = [p for _, p in gradient_loops(taped_inner, [X, w])]
    assert problems == [None, None], problems
    fills = zero_fills(taped_inner, [X, w])
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        before = runtime.pool_stats()["pooled_loops"]
        gX, gw = adpasses.grad(taped_inner, (0, 1))(X.copy(), w.copy())
        assert runtime.pool_stats()["pooled_loops"] - before == (0 if threads == 1 else 2 + fills)
        fd = central_fd(taped_inner, [X, w], 0)
        assert np.allclose(gX, fd, rtol=1e-6, atol=1e-7 * np.abs(fd).max()), threads
        fd = central_fd(taped_inner, [X, w], 1)
        assert np.allclose(gw, fd, rtol=1e-6, atol=1e-7 * np.abs(fd).max()), threads


def test_inner_loop_of_varying_length_stays_serial_and_says_why():
    rng = np.random.default_rng(29)
    X, w = rng.uniform(0.5, 1.5, (9, 9)), rng.standard_normal(9)
    problems = [p for _, p in gradient_loops(taped_triangle, [X, w])]
    assert len(problems) == 2
    for p in problems:
        # a tape that grows (no capacity), or one whose inner loop's count is unknown at the start
        assert p is not None and ("one that grows as it is pushed" in p
                                  or "trip count is not known before the parallel loop starts" in p), p
    adpasses.set_num_threads(3)
    gX, gw = adpasses.grad(taped_triangle, (0, 1))(X.copy(), w.copy())
    fd = central_fd(taped_triangle, [X, w], 0)
    assert np.allclose(gX, fd, rtol=1e-6, atol=1e-7 * np.abs(fd).max())
    assert np.allclose(gw, central_fd(taped_triangle, [X, w], 1), rtol=1e-6)


def test_hessian_through_the_fixed_layout_matches_differences_of_gradients():
    """Forward over reverse: the tangent sweep differentiates the buffer's
    stores and loads like any memory."""
    adpasses.set_num_threads(3)
    x, w = _inputs(6, 2, 31)
    H = adpasses.hessian(taped_sum, 0)(x.copy(), w.copy())
    eps = 1e-5
    fd = np.array([(adpasses.grad(taped_sum, 0)(x + eps * e, w.copy())
                    - adpasses.grad(taped_sum, 0)(x - eps * e, w.copy())) / (2 * eps) for e in np.eye(6)])
    assert np.allclose(H, fd, rtol=1e-6, atol=1e-7 * np.abs(fd).max())


def test_cache_report_names_the_fixed_layout_and_the_stack_reason():
    x, w = _inputs(9, 2, 37)
    report = adpasses.cache_report(taped_sum, x.copy(), w.copy(), argnums=(0, 1))
    gradient = [p for p in report.parallel_loops if p.sweep.startswith("gradient")]
    assert [p.sweep for p in gradient] == ["gradient", "gradient, reverse loop"]
    assert all(p.parallel and "tape tape_t in a fixed layout: 1 value per iteration" in p.reason for p in gradient)
    assert "written by this forward loop" in gradient[0].reason
    assert "read by this reverse loop" in gradient[1].reason
    assert "fixed layout" in str(report)
    X = np.random.default_rng(41).uniform(0.5, 1.5, (5, 5))
    report = adpasses.cache_report(taped_triangle, X, w[:5].copy(), argnums=(0, 1))
    gradient = [p for p in report.parallel_loops if p.sweep.startswith("gradient")]
    assert gradient and all(not p.parallel and "one that grows as it is pushed" in p.reason for p in gradient)
