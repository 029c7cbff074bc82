"""Parallel loops (issue 17 item 2; docs/parallel.md) never crash the
process or lose an error: a bounds error inside any chunk of a prange loop
(on the calling thread or a worker thread) is raised from the call with
the index a serial loop would have reported and the user's line; the
process goes on, and later calls are right. Errors from workers while
several Python threads call the same parallel function reach each caller.
Run in a fresh process (`run_isolated`): a regression would be a crash."""

from __future__ import annotations

import os

from isolate import run_isolated

TEST_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CODE = """
import sys, threading
sys.path.insert(0, %r)
import numpy as np
import adpasses
import parallel_kernels as pk

adpasses.set_num_threads(4)
from adpasses.native.runtime import set_parallel_min_work
set_parallel_min_work(1)  # one chunk per thread: errors from every chunk
x = np.random.default_rng(0).random(1000)
# y shorter than x: every chunk past len(y) stops; the first one's index is
# the serial loop's (len(y)), whichever thread gets there first.
for short in (999, 750, 500, 251, 3, 0):
    y = np.zeros(short)
    try:
        pk.write_out_of_bounds(x, y)
    except IndexError as e:
        text = str(e)
        assert f"index {short} is out of bounds" in text, text
        assert "parallel_kernels.py:" in text, text
    else:
        raise SystemExit(f"no IndexError for {short}")
    assert np.array_equal(y, x[:short] + 1.0)  # iterations before the stop ran
y = np.zeros(1000)
pk.write_out_of_bounds(x, y)
assert np.array_equal(y, x + 1.0)

errors = []
def work(k):
    try:
        for r in range(30):
            short = 100 + 37 * k + r
            try:
                pk.write_out_of_bounds(x, np.zeros(short))
            except IndexError as e:
                assert f"index {short} is out of bounds" in str(e), str(e)
            else:
                raise AssertionError("no IndexError")
            out = np.zeros(1000)
            pk.write_out_of_bounds(x, out)
            assert np.array_equal(out, x + 1.0)
    except BaseException as e:
        errors.append(e)
threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
for t in threads: t.start()
for t in threads: t.join()
assert not errors, errors[0]
print("ok")
""" % TEST_DIR


def test_bounds_errors_in_parallel_chunks_are_raised_with_the_serial_index():
    result = run_isolated(CODE, timeout=300)
    assert not result.crashed, str(result)
    assert result.returncode == 0 and "ok" in result.stdout, str(result)


FORK = """
import ctypes, faulthandler, os, sys
sys.path.insert(0, %r)
import numpy as np
import adpasses
import parallel_kernels as pk
from adpasses.lowering import thread_state as ts
from adpasses.native import runtime

adpasses.set_num_threads(3)
runtime.set_parallel_min_work(1)  # one chunk per thread: the pool runs the loops
x = np.random.default_rng(0).random(3000)
y = np.zeros_like(x)
expected = pk.scale_sum(x, y)

def check_in_child(body):
    pid = os.fork()
    if pid == 0:
        code = 5
        try:
            faulthandler.dump_traceback_later(60, exit=True)  # a hang: exit 1, with the stacks
            code = body()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)

def child_runs_on_its_own_pool():
    if runtime.pool_stats() != {"workers": 0, "pooled_loops": 0, "busy_serial_loops": 0}:
        return 2  # the parent's pool came with the fork
    out = np.zeros_like(x)
    if pk.scale_sum(x, out) != expected or not np.array_equal(out, 2 * x):
        return 3
    stats = runtime.pool_stats()
    return 0 if stats["workers"] == 2 and stats["pooled_loops"] == 1 else 4
""" % TEST_DIR


def test_forked_child_makes_its_own_pool():
    """The parent's pool threads do not exist in a forked child: the child
    makes a pool of its own on its first parallel loop, whose results are
    the parent's."""
    code = FORK + """
assert runtime.pool_stats()["workers"] == 2
assert check_in_child(child_runs_on_its_own_pool) == 0
assert pk.scale_sum(x, y) == expected  # the parent's pool still works
print("ok")
"""
    result = run_isolated(code, timeout=300)
    assert result.returncode == 0 and "ok" in result.stdout, str(result)


def test_fork_while_a_loop_holds_the_pool():
    """A fork while another thread's loop holds the pool (here: the pool's
    busy word set, as that loop sets it): the child, which does not have
    that thread, still gets a pool. Set by hand so that the fork happens
    at that moment every time."""
    code = FORK + """
runtime.POOL[ts.POOL_BUSY] = 1
status = check_in_child(child_runs_on_its_own_pool)
runtime.POOL[ts.POOL_BUSY] = 0
assert status == 0, status
print("ok")
"""
    result = run_isolated(code, timeout=300)
    assert result.returncode == 0 and "ok" in result.stdout, str(result)


def test_pool_of_another_process_is_made_again():
    """A fork that bypasses Python's at-fork handlers (a C library's fork)
    leaves the parent's pool state in the child: another pid, workers that
    do not exist, a mutex that a parent's thread held. The runtime sees the
    pid and makes the pool again instead of waiting on that mutex. Made by
    hand in a process that never made a pool."""
    code = '''
import ctypes, faulthandler, os, sys
sys.path.insert(0, %r)
import numpy as np
import adpasses
import parallel_kernels as pk
from adpasses.lowering import thread_state as ts
from adpasses.native import runtime

faulthandler.dump_traceback_later(60, exit=True)
adpasses.set_num_threads(3)
runtime.set_parallel_min_work(1)
x = np.random.default_rng(0).random(3000)
y = np.zeros_like(x)
pk.scale_sum(x[:0], y[:0])  # compiled and loaded; no pool (one chunk)
assert runtime.pool_stats()["workers"] == 0
runtime.POOL[ts.POOL_PID] = os.getpid() + 1
runtime.POOL[ts.POOL_STARTED] = 7
libc = ctypes.CDLL(None)
mutex = ctypes.addressof(runtime.POOL) + 8 * ts.POOL_MUTEX
assert libc.pthread_mutex_lock(ctypes.c_void_p(mutex)) == 0  # held "by the parent's thread"
s = pk.scale_sum(x, y)
half = [0, 1000, 2000, 3000]
assert s == sum(pk.serial_sum(x[a:b]) for a, b in zip(half, half[1:])), s
assert np.array_equal(y, 2 * x)
stats = runtime.pool_stats()
assert stats["workers"] == 2 and stats["pooled_loops"] == 1, stats
assert runtime.POOL[ts.POOL_PID] == os.getpid()
print("ok")
''' % TEST_DIR
    result = run_isolated(code, timeout=300)
    assert result.returncode == 0 and "ok" in result.stdout, str(result)
