"""Loop-carried values nothing reads are dropped before a parallel loop is
outlined (adpasses/transforms/dead_carried.py, docs/parallel.md): the
gradient of kernel 3's prange batch no longer sums the primal in every
chunk. Gradients stay bit-identical to the serial loop's and match central
finite differences; a sum that is used is kept; a bounds-checked load that
only the dropped sum read still raises IndexError at its line."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from xdsl.dialects import func

import adpasses
from adpasses.transforms.parallelize import with_parallel_loops
from benchmarks import ours
from benchmarks.kernels import parallel as par
from benchmarks.kernels import small

import parallel_kernels as pk


@pytest.fixture(autouse=True)
def threads():
    before = adpasses.get_num_threads()
    work = adpasses.native.runtime.set_parallel_min_work(1)
    yield
    adpasses.set_num_threads(before)
    adpasses.native.runtime.set_parallel_min_work(work)


def _central_fd(f, args, k, eps=1e-6):
    x = args[k]
    g = np.zeros_like(x)
    for j in range(x.size):
        plus = [a.copy() for a in args]
        minus = [a.copy() for a in args]
        plus[k].flat[j] += eps
        minus[k].flat[j] -= eps
        g.flat[j] = (f(*plus) - f(*minus)) / (2 * eps)
    return g


def _batch_gradient(jb, V, W, return_primal=False):
    dV, dW = np.zeros_like(V), np.zeros_like(W)
    out = adpasses.autodiff(jb, adpasses.Duplicated(V, dV), adpasses.Duplicated(W, dW),
                            return_primal=return_primal)
    return dV, dW, out


def test_prange_batch_gradient_carries_no_primal_sum_and_matches_serial_and_fd():
    rng = np.random.default_rng(31)
    V, W = rng.uniform(-1.0, 1.0, (37, 3)), rng.uniform(-1.0, 1.0, (37, 2))
    parallel = adpasses.jit(ours.fresh_copy(par._batch))  # the benchmark's prange batch
    serial = adpasses.jit(ours.fresh_copy(small.batch))
    sV, sW, _ = _batch_gradient(serial, V, W)
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        dV, dW, _ = _batch_gradient(parallel, V, W)
        # each row's gradient is computed by the same code in any chunk
        assert np.array_equal(dV, sV) and np.array_equal(dW, sW)
    assert np.allclose(sV, _central_fd(serial, [V, W], 0), rtol=1e-6, atol=1e-8)
    assert np.allclose(sW, _central_fd(serial, [V, W], 1), rtol=1e-6, atol=1e-8)
    # The outlined chunk of the gradient returns nothing: the primal's sum,
    # which the gradient does not return, is not computed per chunk.
    g = parallel.gradient([V, W], ("dup", "dup"), False, True)
    lowered = with_parallel_loops(g.module)
    chunks = [op for op in lowered.ops if isinstance(op, func.FuncOp)
              and op.sym_name.data.startswith(g.gradient_name + ".par")]
    assert len(chunks) == 1
    assert list(chunks[0].function_type.outputs) == []


def test_a_used_sum_is_kept_in_the_parallel_loop():
    rng = np.random.default_rng(32)
    V, W = rng.uniform(-1.0, 1.0, (41, 3)), rng.uniform(-1.0, 1.0, (41, 2))
    parallel = adpasses.jit(ours.fresh_copy(par._batch))
    want = sum(small.small3(V[k], W[k]) for k in range(len(V)))
    adpasses.set_num_threads(3)
    assert parallel(V, W) == pytest.approx(want, rel=1e-13)
    dV, dW, (_, value) = _batch_gradient(parallel, V, W, return_primal=True)
    assert value == pytest.approx(want, rel=1e-13)
    sV, sW, _ = _batch_gradient(adpasses.jit(ours.fresh_copy(small.batch)), V, W)
    assert np.array_equal(dV, sV) and np.array_equal(dW, sW)
    g = parallel.gradient([V, W], ("dup", "dup"), True, True)
    chunks = [op for op in with_parallel_loops(g.module).ops if isinstance(op, func.FuncOp)
              and op.sym_name.data.startswith(g.gradient_name + ".par")]
    assert [len(c.function_type.outputs) for c in chunks] == [1]


def test_a_checked_load_only_the_dropped_sum_read_still_raises_at_its_line():
    lines = inspect.getsource(pk).splitlines()
    line = lines.index("        s += x[i + 1]") + 1
    x = np.arange(9.0)
    for threads in (1, 3):
        adpasses.set_num_threads(threads)
        y = np.zeros(8)
        pk.copy_with_dead_sum(x, y)
        assert np.array_equal(y, x[:8])
        with pytest.raises(IndexError) as err:
            pk.copy_with_dead_sum(x[:8].copy(), np.zeros(8))
        assert f"parallel_kernels.py:{line}:" in str(err.value)
