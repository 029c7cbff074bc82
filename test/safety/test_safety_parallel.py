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
