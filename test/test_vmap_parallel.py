"""`vmap(f, parallel=True)` (issue 17; docs/parallel.md, "vmap on several
threads"): the loop over the batch runs on the worker pool when the
elements are proven independent, per-example gradients included; the
results are those of the serial vmap and of finite differences on 1, 2
and 3 threads; elements that share written memory stay serial and right.

Whether a call ran on the pool is read from `pool_stats()["pooled_loops"]`
(deterministic: with the minimum work 1 and 3 threads, a loop of 3 or
more iterations is posted to the pool whenever no other loop holds it;
these tests run one loop at a time)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

import adpasses
from adpasses.native import runtime


def logistic(x, w, y):
    z = 0.0
    for i in range(len(x)):
        z += x[i] * w[i]
    return math.log(1.0 + math.exp(-y * z))


def strain_energy(f):
    J = (f[0] * (f[4] * f[8] - f[5] * f[7]) - f[1] * (f[3] * f[8] - f[5] * f[6])
         + f[2] * (f[3] * f[7] - f[4] * f[6]))
    i1 = 0.0
    for k in range(9):
        i1 += f[k] * f[k]
    lnj = math.log(J)
    return 0.5 * (i1 - 3.0) - lnj + 5.0 * lnj * lnj


def smooth_into(x, out):
    for i in range(len(x)):
        out[i] = math.tanh(x[i]) + x[0]


def accumulate_into(x, total):
    """Every element adds into the same (shared) array: not independent."""
    for i in range(len(x)):
        total[i] += x[i] * x[i]
    return total[0]


def energy_with_workspace(x, tmp):
    """Writes its workspace `tmp` (shared by the batch: in_axes None) and
    reads it back, coupling neighbours."""
    for i in range(len(x)):
        tmp[i] = x[i] * x[i] + math.sin(x[i])
    s = 0.0
    for i in range(len(x)):
        s += tmp[i] * tmp[i] * x[(i + 1) % len(x)]
    return s


def out_of_bounds(x, k):
    return x[k] * 2.0


@pytest.fixture(autouse=True)
def settings():
    threads, work = adpasses.get_num_threads(), runtime.get_parallel_min_work()
    runtime.set_parallel_min_work(1)
    yield
    adpasses.set_num_threads(threads)
    runtime.set_parallel_min_work(work)


def pooled() -> int:
    return runtime.pool_stats()["pooled_loops"]


def on_threads(call, threads=(1, 2, 3), loops=1):
    """call() on each thread count: the results, and whether each call
    with more than one thread ran its `loops` loops on the pool (the batch
    loop, and the zero-fill of each output a gradient accumulates into)."""
    results, used_pool = [], []
    for t in threads:
        adpasses.set_num_threads(t)
        before = pooled()
        results.append(call())
        used_pool.append(pooled() - before == loops if t > 1 else pooled() == before)
    return results, used_pool


ZERO_FILL = "zero-fill of the results"


def batch_loops(mapped):
    """The report's lines for the batch loop, after checking those of the
    driver's zero-fills of the outputs (each parallel)."""
    fills = [loop for loop in mapped.parallel_loops if loop.mark == ZERO_FILL]
    assert all(loop.parallel and "iterations proven independent" in loop.reason for loop in fills), fills
    return [loop for loop in mapped.parallel_loops if loop.mark != ZERO_FILL]


def test_per_example_gradients_run_on_the_pool_and_match_finite_differences():
    rng = np.random.default_rng(170)
    B, d = 40, 7
    X, w, Y = rng.normal(size=(B, d)), rng.normal(size=d), np.sign(rng.normal(size=B))
    serial = adpasses.vmap(adpasses.grad(logistic, 1), in_axes=(0, None, 0))(X, w, Y)
    per_example = adpasses.vmap(adpasses.grad(logistic, 1), in_axes=(0, None, 0), parallel=True)
    results, used_pool = on_threads(lambda: per_example(X, w, Y), loops=2)  # the zero-fill of G, the batch
    assert all(used_pool)
    assert len(per_example.parallel_loops) == 2
    [loop] = batch_loops(per_example)  # the report's line for the batch loop
    assert (loop.sweep, loop.mark, loop.parallel) == ("vmap", "vmap(parallel=True) batch", True)
    assert "iterations proven independent" in loop.reason
    for G in results:
        assert G.shape == (B, d)
        assert np.array_equal(G, results[0])  # each element's code is the same on every thread
        assert_matches(G, serial)
    for k in range(0, B, 7):
        [fd] = finite_differences(logistic, (X[k], w, Y[k]), [1])
        assert_matches(results[2][k], fd, what=f"element {k}")


def test_value_and_per_example_gradients_of_the_batched_and_the_shared_argument():
    rng = np.random.default_rng(171)
    B, d = 23, 5
    X, w, Y = rng.normal(size=(B, d)), rng.normal(size=d), np.sign(rng.normal(size=B))
    w_before, X_before = w.copy(), X.copy()
    f = adpasses.value_and_grad(logistic, (0, 1))
    (v0, (dX0, dw0)) = adpasses.vmap(f, in_axes=(0, None, 0))(X, w, Y)
    # the zero-fills of the two gradients' outputs, and the batch loop
    results, used_pool = on_threads(lambda: adpasses.vmap(f, in_axes=(0, None, 0), parallel=True)(X, w, Y),
                                    loops=3)
    assert all(used_pool)
    for v, (dX, dw) in results:
        assert_matches(v, v0)
        assert_matches(dX, dX0)
        assert_matches(dw, dw0)
        assert np.array_equal(dw, results[0][1][1])
    for k in (0, B // 2, B - 1):
        fdx, fdw = finite_differences(logistic, (X[k], w, Y[k]), [0, 1])
        assert_matches(results[2][1][0][k], fdx)
        assert_matches(results[2][1][1][k], fdw)
    assert np.array_equal(w, w_before) and np.array_equal(X, X_before)  # the arguments unchanged


def test_primal_and_an_output_argument_written_per_element():
    rng = np.random.default_rng(172)
    X, w, Y = rng.normal(size=(31, 6)), rng.normal(size=6), np.sign(rng.normal(size=31))
    expected = np.array([logistic(X[k], w, Y[k]) for k in range(31)])
    results, used_pool = on_threads(lambda: adpasses.vmap(logistic, in_axes=(0, None, 0), parallel=True)(X, w, Y))
    assert all(used_pool)
    for r in results:
        np.testing.assert_allclose(r, expected, rtol=1e-13)
    out = np.zeros_like(X)
    adpasses.set_num_threads(3)
    before = pooled()
    adpasses.vmap(smooth_into, parallel=True)(X, out)
    assert pooled() == before + 1
    expected_rows = np.zeros_like(X)
    for k in range(len(X)):
        smooth_into(X[k], expected_rows[k])
    np.testing.assert_allclose(out, expected_rows, rtol=1e-13, atol=1e-15)  # vector tanh: an ulp


def test_a_batch_of_hessians_gets_a_workspace_per_thread():
    rng = np.random.default_rng(173)
    F = np.tile(np.eye(3).reshape(1, 9), (50, 1)) + 0.1 * rng.normal(size=(50, 9))
    serial = adpasses.vmap(adpasses.hessian(strain_energy))(F)
    results, used_pool = on_threads(lambda: adpasses.vmap(adpasses.hessian(strain_energy), parallel=True)(F))
    assert all(used_pool)
    for H in results:
        assert H.shape == (50, 9, 9)
        assert_matches(H, serial)
        assert np.array_equal(H, results[0])
    g = adpasses.grad(strain_energy)
    for k in (3, 41):
        columns = []
        for j in range(9):  # column j: central differences of the gradient along e_j
            h = 1e-6
            plus, minus = F[k].copy(), F[k].copy()
            plus[j] += h
            minus[j] -= h
            columns.append((g(plus) - g(minus)) / (2 * h))
        assert_matches(results[2][k], np.stack(columns, axis=1), what=f"Hessian {k}")


def _central(f, h=1e-6):
    return lambda x, v: (f(x + h * v) - f(x - h * v)) / (2 * h)


def test_hvp_jvp_and_grad_of_a_function_writing_a_shared_array_run_on_the_pool():
    """hvp, jvp and grad of a function that writes an unbatched array: each
    element gets its own copy of it (a row restored from the caller's) and
    its own zeroed tangents and shadows (rows zeroed per element), so the
    batch loop is proven parallel: the same bits on 1, 2 and 3 threads, the
    serial vmap's values, central differences, the caller's array unchanged."""
    rng = np.random.default_rng(175)
    B, d = 26, 5
    X, V = rng.normal(size=(B, d)), rng.normal(size=(B, d))
    tmp = rng.normal(size=d)
    tmp_before = tmp.copy()
    energy = adpasses.jit(energy_with_workspace)
    g = adpasses.grad(energy)
    f = lambda x: energy_with_workspace(x, np.zeros(d))  # noqa: E731 - a fresh workspace per call
    gx = lambda x: g(x, np.zeros(d))  # noqa: E731
    cases = {
        "hvp, v batched": (adpasses.hvp(energy), (0, None, 0), (X, tmp, V), lambda k: _central(gx)(X[k], V[k])),
        "hvp, v shared": (adpasses.hvp(energy), (0, None, None), (X, tmp, V[3]),
                          lambda k: _central(gx)(X[k], V[3])),
        "grad": (adpasses.grad(energy), (0, None), (X, tmp), lambda k: finite_differences(
            energy_with_workspace, (X[k], np.zeros(d)), [0])[0]),
    }
    for name, (fn, axes, args, fd) in cases.items():
        serial = adpasses.vmap(fn, in_axes=axes)(*args)
        mapped = adpasses.vmap(fn, in_axes=axes, parallel=True)
        # hvp: the zero-fill of the tangent of x's shadow (the output); grad: of x's shadow
        results, used_pool = on_threads(lambda: mapped(*args), loops=2)
        assert all(used_pool), name
        [loop] = batch_loops(mapped)
        assert loop.parallel and "iterations proven independent" in loop.reason, (name, loop)
        for r in results:
            assert np.array_equal(r, results[0]), name  # the same code per element on every thread
            assert_matches(r, serial, what=name)
        for k in (0, 11, B - 1):
            assert_matches(results[2][k], fd(k), what=f"{name}, element {k}")
        assert np.array_equal(tmp, tmp_before), name
    mapped = adpasses.vmap(functools.partial(adpasses.jvp, energy), in_axes=((0, None), (0, None)), parallel=True)
    values0, tangents0 = adpasses.vmap(functools.partial(adpasses.jvp, energy),
                                       in_axes=((0, None), (0, None)))((X, tmp), (V, None))
    results, used_pool = on_threads(lambda: mapped((X, tmp), (V, None)))
    assert all(used_pool)
    assert mapped.parallel_loops[0].parallel
    for values, tangents in results:
        assert np.array_equal(values, results[0][0]) and np.array_equal(tangents, results[0][1])
        assert_matches(values, values0)
        assert_matches(tangents, tangents0)
    for k in (0, 11, B - 1):
        assert_matches(results[2][0][k], energy_with_workspace(X[k], tmp.copy()))
        assert_matches(results[2][1][k], _central(f)(X[k], V[k]), what=f"jvp, element {k}")
    assert np.array_equal(tmp, tmp_before)


def test_elements_writing_one_shared_array_stay_serial_and_right():
    rng = np.random.default_rng(174)
    X = rng.normal(size=(12, 4))
    total = np.zeros(4)
    adpasses.set_num_threads(3)
    before = pooled()
    mapped = adpasses.vmap(accumulate_into, in_axes=(0, None), parallel=True)
    firsts = mapped(X, total)
    assert pooled() == before  # every element writes `total`: the loop ran serially
    [loop] = mapped.parallel_loops
    assert not loop.parallel and "may depend on each other" in loop.reason
    np.testing.assert_allclose(total, np.sum(X * X, axis=0), rtol=1e-14)
    np.testing.assert_allclose(firsts, np.cumsum(X[:, 0] ** 2), rtol=1e-14)


def test_a_bounds_error_in_a_chunk_reaches_the_caller_with_its_line():
    X = np.ones((9, 3))
    adpasses.set_num_threads(3)
    with pytest.raises(IndexError, match=r"test_vmap_parallel.py:\d+"):
        adpasses.vmap(out_of_bounds, in_axes=(0, None), parallel=True)(X, 3)
    with pytest.raises(IndexError, match=r"test_vmap_parallel.py:\d+"):
        adpasses.vmap(adpasses.grad(out_of_bounds), in_axes=(0, 0), parallel=True)(
            X, np.array([0, 1, 2, 0, 1, 2, 0, 5, 1]))


def test_parallel_must_be_a_bool():
    with pytest.raises(TypeError, match="parallel must be True or False"):
        adpasses.vmap(logistic, parallel="yes")


def test_driver_gives_each_element_its_own_restored_copy_and_scratch():
    """The driver's IR with RESTORE_ROWS and SCRATCH_ROWS: row b of a batch
    argument, copied from the pristine / zeroed inside the loop (not one
    buffer before the call), and vmap's names for the kinds are the
    driver's."""
    from xdsl.dialects import memref, scf

    from adpasses.api import vmap as vmap_api
    from adpasses.api.functions import function_named
    from adpasses.transforms import batch_loops as bl

    assert (vmap_api.RESTORE_ROWS_KIND, vmap_api.SCRATCH_ROWS_KIND) == (bl.RESTORE_ROWS, bl.SCRATCH_ROWS)
    assert (vmap_api.LOCAL_KIND, vmap_api.RESTORE_KIND) == (bl.LOCAL, bl.RESTORE)
    x, tmp = np.ones(4), np.zeros(4)
    kernel = vmap_api._kernel(adpasses.grad(adpasses.jit(energy_with_workspace)), (x, tmp))
    by_kind = {vmap_api.ARG: bl.BATCHED, vmap_api.CONST: bl.CONST}
    kinds = [bl.RESTORE_ROWS if p.kind == vmap_api.COPY else bl.SCRATCH_ROWS if p.kind == vmap_api.ZEROS and
             p.out is None else bl.BATCHED if p.kind == vmap_api.ZEROS else by_kind[p.kind] for p in kernel.params]
    assert kinds.count(bl.RESTORE_ROWS) == 1 and kinds.count(bl.SCRATCH_ROWS) == 1  # tmp, its shadow
    entry = function_named(kernel.module, kernel.entry)
    spec = bl.BatchSpec(tuple(kinds), tuple(r is not None for r in kernel.results),
                        tuple((i, p.value) for i, p in enumerate(kernel.params) if p.kind == vmap_api.CONST),
                        noalias=True, parallel=True)
    driver = bl.add_batch_driver(kernel.module, entry, spec, "batched")
    [loop] = [op for op in driver.body.block.ops if isinstance(op, scf.ForOp)]
    [copy] = [op for op in loop.body.block.ops if isinstance(op, memref.CopyOp)]
    assert isinstance(copy.destination.owner, (memref.SubviewOp, memref.CastOp))  # row b, not the batch
    assert copy.source in driver.body.block.args  # the pristine, read only
    at = kinds.index(bl.RESTORE_ROWS)
    rows, pristine = driver.function_type.inputs.data[1 + at: 3 + at]  # after %n and x's batch, before the pristine
    assert len(rows.get_shape()) == 2 and len(pristine.get_shape()) == 1  # the copies: a (B, 4) batch
    zeroed = [op for op in loop.walk() if isinstance(op, memref.StoreOp) and op.memref is not copy.destination
              and isinstance(op.memref.owner, (memref.SubviewOp, memref.CastOp))]
    assert zeroed  # the scratch row, zeroed in the loop


def test_a_batch_whose_rows_do_not_fit_runs_in_slices(monkeypatch: pytest.MonkeyPatch):
    """The per-element copies and scratch rows of a parallel batch are
    bounded (ROWS_BYTES): a larger batch runs in slices of as many
    elements as fit, each slice a parallel loop, with the same results."""
    from adpasses.api import vmap as vmap_api

    rng = np.random.default_rng(176)
    B, d = 26, 5
    X, V, tmp = rng.normal(size=(B, d)), rng.normal(size=(B, d)), rng.normal(size=d)
    mapped = adpasses.vmap(adpasses.hvp(adpasses.jit(energy_with_workspace)), in_axes=(0, None, 0), parallel=True)
    adpasses.set_num_threads(3)
    whole = mapped(X, tmp, V)
    # per element: the copy of tmp, and the zeroed tangent and shadows of tmp (d floats each)
    rows = [k for k in mapped._plans.values()][0].kinds
    per_element = d * 8 * sum(k in (vmap_api.RESTORE_ROWS_KIND, vmap_api.SCRATCH_ROWS_KIND) for k in rows)
    assert per_element > 0
    monkeypatch.setattr(vmap_api, "ROWS_BYTES", 4 * per_element + 1)  # 4 elements per slice
    before = pooled()
    sliced = mapped(X, tmp, V)
    # 26 elements: 6 slices of 4 and one of 2, each on the pool (its zero-fill of the output, its batch loop)
    assert pooled() - before == 2 * 7
    assert np.array_equal(sliced, whole)
    assert_matches(sliced, adpasses.vmap(adpasses.hvp(energy_with_workspace), in_axes=(0, None, 0))(X, tmp, V))
    monkeypatch.setattr(vmap_api, "ROWS_BYTES", 1)  # not even one element: one at a time
    assert np.array_equal(mapped(X, tmp, V), whole)
