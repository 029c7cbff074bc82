"""Parallel loops as the user sees them (issue 17; docs/parallel.md):

- a prange function called with strided arrays (a stride of 0 from
  np.broadcast_to included) runs, serially for the arrays it writes,
  instead of raising "cannot run in parallel": the loop is right, the
  arrays' layout is not known when compiling; a read-only broadcast array
  it writes gets the usual read-only error;
- the errors of prange loops that cannot run in parallel name the Python
  variables (`x[i - 1]`, `acc[0]`, `p`) and the file:line of each access,
  never IR names (`%x[%i]`, `%s`);
- the cache report lists each marked loop of the primal and the gradient,
  its file:line, parallel or serial and why."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import adpasses
from adpasses.native import runtime

import parallel_report_kernels as rk

KERNELS = os.path.basename(rk.__file__)


@pytest.fixture(autouse=True)
def threads():
    before, work = adpasses.get_num_threads(), runtime.set_parallel_min_work(1)
    adpasses.set_num_threads(3)
    yield
    adpasses.set_num_threads(before)
    runtime.set_parallel_min_work(work)


# -- strided arrays -----------------------------------------------------------------------


@pytest.mark.parametrize("make_out", [
    lambda n: np.zeros(2 * n)[::2],
    lambda n: np.zeros(3 * n)[::-3],
    lambda n: np.zeros((n, 2))[:, 1],
], ids=["step 2", "step -3", "column"])
def test_prange_writing_a_strided_array_runs(make_out):
    x = np.random.default_rng(0).random(1000)
    y = make_out(len(x))
    assert rk.double_into(x, y) is None
    assert np.array_equal(y, 2.0 * x)


def test_writable_stride_0_array_gets_the_serial_loops_result():
    """Every element of w is one cell: the serial loop leaves the last
    iteration's value there (a parallel run could leave any)."""
    x = np.arange(1000.0)
    cell = np.zeros(1)
    w = np.lib.stride_tricks.as_strided(cell, (1000,), (0,))
    rk.double_into(x, w)
    assert cell[0] == 2.0 * 999


def test_read_only_broadcast_array_written_gets_the_read_only_error():
    x = np.ones(10)
    with pytest.raises(ValueError, match=r"argument 1 \('y'\) is read-only, but the function writes to it"):
        rk.double_into(x, np.broadcast_to(np.zeros(1), (10,)))


def test_broadcast_array_read_by_a_prange_loop_runs_and_its_gradient_too():
    x = np.broadcast_to(np.array([3.0]), (1000,))
    w = np.random.default_rng(1).random(1000)
    assert rk.weighted_sum(x, w) == pytest.approx(9.0 * w.sum(), rel=1e-12)
    gw = adpasses.grad(rk.weighted_sum, 1)(x, w)
    assert np.allclose(gw, 9.0)
    gx = adpasses.grad(rk.weighted_sum, 0)(np.ascontiguousarray(x), w)
    assert np.allclose(gx, 2 * 3.0 * w)


def test_report_says_why_a_loop_writing_a_strided_array_is_serial():
    x, y = np.ones(100), np.zeros(200)[::2]
    report = adpasses.cache_report(rk.weighted_sum, x, w := np.ones(100))
    assert all(p.parallel for p in report.parallel_loops)
    from adpasses.api.functions import function_named
    from adpasses.transforms.parallelize import parallel_report

    module, name = rk.double_into.build([x, y], noalias=True)
    [(where, problem)] = parallel_report(function_named(module, name))
    assert where.endswith(f"{KERNELS}:{rk.line_of(rk.double_into, 'for i')}:5")
    assert "only because of the layout of the strided arrays it writes" in problem
    assert "in parallel for contiguous arrays" in problem
    module, name = rk.double_into.build([x, np.zeros(100)], noalias=True)
    assert parallel_report(function_named(module, name))[0][1] is None
    del w


# -- messages in the user's names ---------------------------------------------------------


@pytest.mark.parametrize("kernel, args, access, words", [
    (rk.shifted, lambda: (np.ones(10),), "x[i] = x[i] * x[i - 1]", "writes x[i], which may be x[i - 1]"),
    (rk.scattered, lambda: (np.ones(10), np.arange(10)), "x[j] = x[i]", "writes x[j], which may be x[i]"),
    (rk.shared_slot, lambda: (np.ones(10), np.zeros(1)), "acc[0] = acc[0]", "writes the same element acc[0]"),
    (rk.product, lambda: (np.ones(10),), None, "the loop-carried value p is not a sum reduction"),
], ids=["shift", "scatter", "slot", "product"])
def test_prange_errors_name_python_variables_and_lines(kernel, args, access, words):
    with pytest.raises(adpasses.CompileError) as err:
        kernel(*args())
    text = str(err.value)
    assert words in text, text
    assert not re.search(r"%\w", text), text  # no IR value names
    loop_line = rk.line_of(kernel, "for i in prange")
    assert f"{KERNELS}:{loop_line}:5: error" in text, text
    if access is not None:
        line = rk.line_of(kernel, access)
        assert re.search(rf"the assignment at \S*{KERNELS}:{line}:\d+", text), text
        assert "memref." not in text and "store at" not in text, text


# -- the cache report's section on parallel loops ------------------------------------------


def test_cache_report_lists_each_parallel_loop_with_its_line_and_decision():
    x, w = np.random.default_rng(2).random(50), np.ones(50)
    report = adpasses.cache_report(rk.weighted_sum, x, w, argnums=(0, 1))
    loop_line = rk.line_of(rk.weighted_sum, "for i in prange")
    loops = report.parallel_loops
    assert [p.sweep for p in loops][0] == "primal" and all(p.mark == "prange" for p in loops)
    assert {p.sweep for p in loops[1:]} <= {"gradient", "gradient, reverse loop"} and len(loops) >= 2
    assert all(p.location.endswith(f"{KERNELS}:{loop_line}:5") and p.parallel for p in loops)
    assert "chunks of at least 1 iterations" in loops[0].reason  # min work 1 (the fixture)
    text = str(report)
    assert "  parallel loops:" in text
    assert f"    primal: prange loop at {loops[0].location}: parallel: iterations proven independent" in text
    as_dict = report.to_dict()["parallel_loops"]
    assert as_dict[0] == {"sweep": "primal", "location": loops[0].location, "mark": "prange", "parallel": True,
                          "reason": loops[0].reason}


def test_cache_report_of_parallel_true_names_serial_loops_and_why():
    f = adpasses.jit(rk.auto_two_loops, parallel=True)
    x, y = np.random.default_rng(3).random(40), np.zeros(40)
    report = adpasses.cache_report(f, x, y)
    primal = [p for p in report.parallel_loops if p.sweep == "primal"]
    assert [p.mark for p in primal] == ["jit(parallel=True)"] * 3
    assert [p.parallel for p in primal] == [True, False, True]
    dependent = rk.line_of(rk.auto_two_loops, "for i in range(1, len(x))")
    assert primal[1].location.endswith(f"{KERNELS}:{dependent}:5")
    assert "writes x[i], which may be x[i - 1]" in primal[1].reason
    assert f"serial: its iterations may depend on each other" in str(report)
    # The numbers are those of the serial program.
    s = f(x.copy(), y)
    xs = np.cumsum(x)
    assert s == pytest.approx(float(np.sum(x * x * xs)), rel=1e-12)


def test_cache_report_lists_the_gradients_loops_of_a_gather():
    """The gather's reverse adds into dx[idx[i]] (private copies per chunk,
    transforms/privatize.py): listed for the gradient, with its line."""
    x, idx, w = np.ones(8), np.array([0, 3, 3, 1]), np.ones(4)
    import parallel_kernels as pk

    report = adpasses.cache_report(pk.gather, x, idx, w)
    sweeps = [p.sweep for p in report.parallel_loops]
    assert sweeps[0] == "primal" and any(s.startswith("gradient") for s in sweeps[1:])
    line = rk.line_of(pk.gather, "for i in prange")
    assert all(p.location.endswith(f"parallel_kernels.py:{line}:5") for p in report.parallel_loops)
    assert all("%" not in p.reason for p in report.parallel_loops)
