"""prange loops by a step other than 1 (and counting down) whose gradient
tapes values: the tape gets the fixed layout (`transforms/tape_layout.py`:
forward iteration i's row is `(i - lb) / step`), so the forward and the
reverse loop both run on the pool (docs/parallel.md, "Tapes of parallel
loops"). Before, a step other than 1 kept the tape a stack and both loops
serial. Checked: the gradient against central differences on 1, 2 and 3
threads, the same bits on every thread count and as the serial reverse
(the same function with `range`: the stack), and the loops on the pool."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects import func

import adpasses
from adpasses import prange
from adpasses.native import runtime
from adpasses.transforms.parallelize import parallel_report
from finite_diff import central_fd


@pytest.fixture(autouse=True)
def threads():  # type: ignore[no-untyped-def]
    before = adpasses.get_num_threads()
    work = runtime.set_parallel_min_work(1)  # one chunk per thread for these small arrays
    yield
    adpasses.set_num_threads(before)
    runtime.set_parallel_min_work(work)


# x[i] is overwritten, so exp(x[i]) is taped; y is used after the loop, so
# the loop's reverse is a loop of its own, reading the tape. No sum crosses
# iterations: the bits cannot depend on the chunks.
def by_two(x, w, y):  # type: ignore[no-untyped-def]
    for i in prange(1, x.shape[0], 2):
        t = math.exp(x[i])
        x[i] = math.log(1.0 + t)
        y[i] = w[i] * x[i] * t
    s = 0.0
    for i in range(x.shape[0]):
        s += y[i] * y[i] + x[i]
    return s


def by_two_serial(x, w, y):  # type: ignore[no-untyped-def]
    for i in range(1, x.shape[0], 2):
        t = math.exp(x[i])
        x[i] = math.log(1.0 + t)
        y[i] = w[i] * x[i] * t
    s = 0.0
    for i in range(x.shape[0]):
        s += y[i] * y[i] + x[i]
    return s


def by_three_down(x, w, y):  # type: ignore[no-untyped-def]
    for i in prange(x.shape[0] - 1, 0, -3):
        t = math.exp(x[i])
        x[i] = math.log(1.0 + t)
        y[i] = w[i] * x[i] * t
    s = 0.0
    for i in range(x.shape[0]):
        s += y[i] * y[i] + x[i]
    return s


def by_three_down_serial(x, w, y):  # type: ignore[no-untyped-def]
    for i in range(x.shape[0] - 1, 0, -3):
        t = math.exp(x[i])
        x[i] = math.log(1.0 + t)
        y[i] = w[i] * x[i] * t
    s = 0.0
    for i in range(x.shape[0]):
        s += y[i] * y[i] + x[i]
    return s


# an inner loop by 2 tapes its values in a row per iteration: (T, m, 1)
def rows_by_two(X, w):  # type: ignore[no-untyped-def]
    s = 0.0
    for i in prange(0, X.shape[0], 2):
        t = 1.0
        for j in range(1, X.shape[1], 2):
            t = t * X[i, j]
        s += w[i] * t
    return s * s




def _gradient(jf, args, active):  # type: ignore[no-untyped-def]
    """(gradients of the first `active` arguments, pooled loops) of one
    `autodiff` call into zeroed shadows (grad would also zero its shadows
    on the pool: loops of its own), on copies of the arguments."""
    before = runtime.pool_stats()["pooled_loops"]
    shadows = [np.zeros_like(a) for a in args[:active]]
    adpasses.autodiff(jf, *[adpasses.Duplicated(a.copy(), d) for a, d in zip(args, shadows)],
                      *[a.copy() for a in args[active:]])
    return shadows, runtime.pool_stats()["pooled_loops"] - before


def _gradient_report(jf, args):  # type: ignore[no-untyped-def]
    g = jf.gradient(list(args), ("dup",) * len(args), False, True)
    f = next(op for op in g.module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == g.gradient_name)
    return parallel_report(f)


@pytest.mark.parametrize("kernel, serial", [(by_two, by_two_serial), (by_three_down, by_three_down_serial)],
                         ids=["step2", "step-3"])
def test_stepped_loop_reverses_on_the_pool_with_the_serial_reverse_bits(kernel, serial) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    n = 41
    args = [rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), np.zeros(n)]
    jf, js = adpasses.jit(kernel), adpasses.jit(serial)
    reference = adpasses.grad(js, (0, 1))(*[a.copy() for a in args])  # the stack, serial
    for k in (0, 1):
        fd = central_fd(serial, args, k)
        assert np.allclose(reference[k], fd, rtol=1e-6, atol=1e-8), k
    for count in (1, 2, 3):
        adpasses.set_num_threads(count)
        grads, pooled = _gradient(jf, args, 3)  # y too: its shadow carries the loop's derivatives
        assert pooled == (0 if count == 1 else 2), (count, pooled)  # forward and reverse loop
        for k in (0, 1):
            assert np.array_equal(grads[k], reference[k]), (count, k)
    problems = _gradient_report(jf, args)
    assert len(problems) == 2 and all(p is None for _, p in problems), problems
    report = adpasses.cache_report(jf, *[a.copy() for a in args], argnums=(0, 1))
    gradient = [p for p in report.parallel_loops if p.sweep.startswith("gradient")]
    assert gradient and all(p.parallel and "fixed layout" in p.reason for p in gradient), gradient


def test_inner_loop_by_two_tapes_a_row_per_iteration_on_the_pool() -> None:
    X = np.random.default_rng(5).uniform(0.5, 1.5, (9, 7))
    w = np.random.default_rng(6).uniform(-1, 1, 9)
    jf = adpasses.jit(rows_by_two)
    for count in (1, 2, 3):
        adpasses.set_num_threads(count)
        (gX, gw), pooled = _gradient(jf, [X, w], 2)
        assert pooled == (0 if count == 1 else 2), count
        assert np.allclose(gX, central_fd(rows_by_two, [X, w], 0), rtol=1e-6, atol=1e-8), count
        assert np.allclose(gw, central_fd(rows_by_two, [X, w], 1), rtol=1e-6, atol=1e-8), count
    problems = _gradient_report(jf, [X, w])
    assert len(problems) == 2 and all(p is None for _, p in problems), problems
