"""The worker pool of parallel loops (issue 17; docs/parallel.md, "The
runtime"): made once per process and reused, grown with the thread count,
loops too small for a second thread run as one chunk on the caller, and
many Python threads calling parallel functions at once get the results
of one thread, bit for bit (a loop that finds the pool taken runs its
chunks on its own thread). Fork: test/safety/test_safety_parallel.py."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import adpasses
from adpasses.core import parallel as core_parallel
from adpasses.lowering import thread_state
from adpasses.native import runtime

import parallel_kernels as pk


@pytest.fixture(autouse=True)
def settings():
    threads, work = adpasses.get_num_threads(), runtime.get_parallel_min_work()
    yield
    adpasses.set_num_threads(threads)
    runtime.set_parallel_min_work(work)


def test_pool_state_layout_is_the_one_the_runtime_uses():
    assert runtime.POOL_WORDS == thread_state.POOL_WORDS
    assert core_parallel.POOL_FIELDS == {"workers": thread_state.POOL_STARTED,
                                         "pooled_loops": thread_state.POOL_JOBS,
                                         "busy_serial_loops": thread_state.POOL_SERIAL}
    assert thread_state.POOL_DONE + thread_state.SYNC_WORDS <= thread_state.POOL_WORDS
    assert thread_state.MAX_WORKERS == core_parallel.MAX_THREADS - 1


def test_pool_is_made_once_reused_and_grows_with_the_thread_count():
    x = np.random.default_rng(0).random(1000)
    y = np.zeros_like(x)
    runtime.set_parallel_min_work(1)
    adpasses.set_num_threads(3)
    pk.scale_sum(x, y)
    before = runtime.pool_stats()
    assert before["workers"] >= 2
    for _ in range(25):
        assert pk.scale_sum(x, y) == pk.scale_sum(x, y)
    after = runtime.pool_stats()
    assert after["workers"] == before["workers"]  # no thread made per loop
    assert after["pooled_loops"] - before["pooled_loops"] == 50
    adpasses.set_num_threads(5)
    pk.scale_sum(x, y)
    assert runtime.pool_stats()["workers"] >= 4
    adpasses.set_num_threads(2)  # fewer chunks than workers: the idle ones wait
    s = pk.scale_sum(x, y)
    half = len(x) // 2
    assert s == pk.serial_sum(x[:half]) + pk.serial_sum(x[half:])
    assert np.array_equal(y, 2 * x)


def test_small_loops_run_as_one_chunk_on_the_caller():
    adpasses.set_num_threads(3)
    runtime.set_parallel_min_work(core_parallel.DEFAULT_MIN_WORK)
    x = np.random.default_rng(1).random(50) * 1e3
    y = np.zeros_like(x)
    before = runtime.pool_stats()["pooled_loops"]
    for _ in range(10):
        assert pk.scale_sum(x, y) == pk.serial_sum(x)  # one chunk: the serial order, bit for bit
    assert np.array_equal(y, 2 * x)
    assert runtime.pool_stats()["pooled_loops"] == before
    # Enough iterations for every thread: the pool runs it, in 3 chunks.
    big = np.random.default_rng(2).random(300_000)
    y = np.zeros_like(big)
    s = pk.scale_sum(big, y)
    assert runtime.pool_stats()["pooled_loops"] == before + 1
    bounds = [t * (len(big) // 3) + min(t, len(big) % 3) for t in range(4)]
    expected = 0.0
    for t in range(3):
        expected += pk.serial_sum(big[bounds[t]:bounds[t + 1]])
    assert s == expected
    assert np.array_equal(y, 2 * big)


def test_min_work_setting_is_checked():
    for bad in (0, -1, 1.5, True, "10"):
        with pytest.raises(ValueError, match="positive integer"):
            runtime.set_parallel_min_work(bad)  # type: ignore[arg-type]
    before = runtime.set_parallel_min_work(np.int64(7))  # type: ignore[arg-type]
    assert runtime.get_parallel_min_work() == 7
    runtime.set_parallel_min_work(before)


def test_many_python_threads_share_the_pool_and_get_one_threads_bits():
    """8 Python threads call parallel functions (a primal and a gradient)
    at once: each loop either gets the pool or runs its chunks on its own
    thread; the chunks are the same either way, so every result is the
    one a lone caller gets, and no call waits forever."""
    adpasses.set_num_threads(3)
    runtime.set_parallel_min_work(1)
    rng = np.random.default_rng(3)
    data = [(rng.standard_normal(2_000), rng.standard_normal(2_000)) for _ in range(8)]
    grad = adpasses.grad(pk.loss_squared, (0, 1))
    expected = [(pk.loss(x, w), *grad(x, w)) for x, w in data]
    before = runtime.pool_stats()
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(k: int) -> None:
        try:
            start.wait()
            for _ in range(40):
                value = pk.loss(*data[k])
                gx, gw = grad(*data[k])
                assert value == expected[k][0]
                assert np.array_equal(gx, expected[k][1]) and np.array_equal(gw, expected[k][2])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    after = runtime.pool_stats()
    loops = (after["pooled_loops"] - before["pooled_loops"]) + (after["busy_serial_loops"]
                                                               - before["busy_serial_loops"])
    assert loops >= 8 * 40 * 2  # the primal's loop, the gradient's loop(s): each one pooled or serial
