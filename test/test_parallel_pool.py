"""The worker pool of parallel loops (issue 17; docs/parallel.md, "The
runtime"): made once per process and reused, grown with the thread count,
loops too small for a second thread run as one chunk on the caller, and
many Python threads calling parallel functions at once get the results
of one thread, bit for bit (a loop that finds the pool taken runs its
chunks on its own thread). Fork: test/safety/test_safety_parallel.py."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import adpasses
from adpasses.core import parallel as core_parallel
from adpasses.lowering import thread_state
from adpasses.native import runtime

import parallel_kernels as pk


@pytest.fixture(autouse=True)
def settings():
    threads, work, spin = adpasses.get_num_threads(), runtime.get_parallel_min_work(), runtime.get_parallel_spin()
    yield
    adpasses.set_num_threads(threads)
    runtime.set_parallel_min_work(work)
    runtime.set_parallel_spin(spin)


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


def test_spin_setting_is_checked():
    for bad in (-1, 1_000_001, 1.5, True, "10"):
        with pytest.raises(ValueError, match="from 0 to 1000000"):
            runtime.set_parallel_spin(bad)  # type: ignore[arg-type]
    before = runtime.set_parallel_spin(np.int64(0))  # type: ignore[arg-type]
    assert runtime.get_parallel_spin() == 0
    assert runtime.set_parallel_spin(250) == 0
    assert runtime.SPIN_NS[0] == 250_000  # what the runtime reads, in ns
    runtime.set_parallel_spin(before)


def _cpu_while_idle(spin_us: int) -> tuple[float, list[float]]:
    """Process CPU time (every thread) during 0.3 s of sleep in Python
    right after a 2-chunk parallel loop, and the results of 20 loops."""
    runtime.set_parallel_spin(spin_us)
    x = np.random.default_rng(5).random(4000)
    y = np.zeros_like(x)
    sums = [pk.scale_sum(x, y) for _ in range(20)]
    before = time.process_time()
    time.sleep(0.3)
    return time.process_time() - before, sums


def test_pool_threads_wait_actively_for_the_spin_time_then_sleep():
    """After its chunk a pool thread waits actively for the next loop's
    job (`set_parallel_spin`), yielding the core on each try: with a 250 ms
    spin the process keeps using CPU while Python sleeps; with no spin it
    sleeps at once and uses (almost) none. The results are the same bits
    either way (the chunks do not depend on who runs them)."""
    adpasses.set_num_threads(2)
    runtime.set_parallel_min_work(1)
    x = np.random.default_rng(5).random(4000)
    expected = pk.serial_sum(x[:2000]) + pk.serial_sum(x[2000:])
    asleep, sums_asleep = _cpu_while_idle(0)
    spinning, sums_spinning = _cpu_while_idle(250_000)
    runtime.set_parallel_spin(0)
    time.sleep(0.3)  # the worker stops spinning (its 250 ms), and sleeps from now on
    asleep_again, _ = _cpu_while_idle(0)
    assert sums_asleep == sums_spinning == [expected] * 20
    assert spinning > 0.002, spinning
    assert spinning > 4 * max(asleep, asleep_again), (spinning, asleep, asleep_again)


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
