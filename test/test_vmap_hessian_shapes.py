"""vmap(hessian(f)) compiles its batch loop for the element shapes it is
called with (constant sizes, the Hessian's lanes and shadows on the
driver's stack when they fit, else arrays vmap allocates): Hessians at
several element shapes, on both sides of the stack budget, against
central differences of a hand-written gradient on random inputs; one plan
per element shape; the driver's IR."""

from __future__ import annotations

import math
import mmap

import numpy as np
import pytest

import adpasses
from adpasses.api import vmap as vmap_api


def coupled(x):
    """sum_i x_i^2 x_{i+1 mod n} + log(1 + sum_i x_i^2)."""
    n = len(x)
    s = 0.0
    q = 0.0
    for i in range(n):
        s += x[i] * x[i] * x[(i + 1) % n]
        q += x[i] * x[i]
    return s + math.log(1.0 + q)


def coupled_gradient(x: np.ndarray) -> np.ndarray:
    """d coupled / dx by hand."""
    q = float(np.dot(x, x))
    return 2.0 * x * np.roll(x, -1) + np.roll(x, 1) ** 2 + 2.0 * x / (1.0 + q)


def hessian_by_differences(x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Column j: central differences of the hand gradient along e_j."""
    cols = []
    for j in range(x.size):
        up, down = x.copy(), x.copy()
        up[j] += h
        down[j] -= h
        cols.append((coupled_gradient(up) - coupled_gradient(down)) / (2 * h))
    return np.stack(cols, axis=1)


def test_hand_gradient_matches_differences_of_f() -> None:
    """The oracle's oracle: the hand gradient against differences of f."""
    x = np.random.default_rng(3).normal(size=6)
    h = 1e-6
    fd = [(coupled(x + h * e) - coupled(x - h * e)) / (2 * h) for e in np.eye(6)]
    np.testing.assert_allclose(coupled_gradient(x), fd, rtol=1e-6, atol=1e-8)


# n = 3, 9: one sweep; 40: three sweeps of width 16, lanes on the stack
# (33 buffers of 40 floats, 10.6 KB); 80: 21 KB, over the stack budget.
@pytest.mark.parametrize("n", [3, 9, 40, 80])
def test_batched_hessians_at_each_element_shape(n: int) -> None:
    rng = np.random.default_rng(100 + n)
    X = rng.normal(size=(4, n))
    H = adpasses.vmap(adpasses.hessian(coupled))(X)
    assert H.shape == (4, n, n) and H.dtype == np.float64
    for k in range(4):
        np.testing.assert_allclose(H[k], hessian_by_differences(X[k]), rtol=1e-6, atol=1e-6)


def test_stack_budget_decides_where_the_lanes_live() -> None:
    """The n = 40 and n = 80 cases above take both paths (the test would
    not cover the array path if the budget grew past it)."""
    budget = vmap_api.STACK_BUFFER_BYTES
    assert 33 * 40 * 8 <= budget < 33 * 80 * 8


def test_one_plan_per_element_shape() -> None:
    rng = np.random.default_rng(7)
    hv = adpasses.vmap(adpasses.hessian(adpasses.jit(coupled)))
    A, B = rng.normal(size=(3, 5)), rng.normal(size=(2, 7))
    ha, hb = hv(A), hv(B)
    assert len(hv._plans) == 2
    again = hv(rng.normal(size=(6, 5)))  # the (5,) plan again: no third plan
    assert len(hv._plans) == 2 and again.shape == (6, 5, 5)
    np.testing.assert_allclose(ha[1], hessian_by_differences(A[1]), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(hb[1], hessian_by_differences(B[1]), rtol=1e-6, atol=1e-6)


def squares_into(x, tmp):
    """Writes tmp (not batched: restored for every element) and reads it back."""
    for i in range(len(x)):
        tmp[i] = x[i] * x[i]
    s = 0.0
    for i in range(len(x)):
        s += tmp[i] * x[i] + tmp[0] * math.sin(x[i])
    return s


def test_hessian_of_a_function_writing_a_shared_array() -> None:
    rng = np.random.default_rng(11)
    X, tmp = rng.normal(size=(3, 4)), rng.normal(size=4)
    before = tmp.copy()
    H = adpasses.vmap(adpasses.hessian(squares_into), in_axes=(0, None))(X, tmp)
    np.testing.assert_array_equal(tmp, before)  # left unchanged, like hessian
    for k in range(3):
        x = X[k]
        # by hand: f = sum x_i^3 + x_0^2 sum_i sin x_i
        ref = np.diag(6.0 * x)
        ref[0, 0] += 2.0 * np.sum(np.sin(x))
        ref[0, :] += 2.0 * x[0] * np.cos(x)
        ref[:, 0] += 2.0 * x[0] * np.cos(x)
        ref += np.diag(-(x[0] ** 2) * np.sin(x))
        np.testing.assert_allclose(H[k], ref, rtol=1e-12, atol=1e-12)


def test_driver_takes_constant_sizes_and_stack_lanes() -> None:
    """The batch driver's IR: rows viewed with constant sizes, the lanes
    allocated on its stack, every other function private."""
    from xdsl.dialects import func, memref

    from adpasses.api.forward import hessian_module
    from adpasses.transforms.batch_loops import LOCAL, BatchSpec, add_batch_driver

    jf = adpasses.jit(coupled)
    x = np.ones(5)
    module, entry, _, inputs, written, blocks, scratch = hessian_module(jf, (x,), (0,), 5)
    driver = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry)
    n_params = len(driver.function_type.inputs.data)
    kinds = ["batched"] * (len(inputs) + len(written) + len(blocks)) + [LOCAL] * len(scratch)
    assert len(kinds) == n_params
    shapes = [(5,)] * len(inputs) + [(5, 5)] * len(blocks) + [(5,)] * len(scratch)
    spec = BatchSpec(tuple(kinds), (), (), tuple(shapes))
    batched = add_batch_driver(module, driver, spec, "batched")
    allocas = [op for op in batched.walk() if isinstance(op, memref.AllocaOp)]
    assert [tuple(op.memref.type.get_shape()) for op in allocas] == [(5,)] * len(scratch)
    views = [op for op in batched.walk() if isinstance(op, memref.SubviewOp)]
    assert views and all(-1 not in op.static_sizes.get_values()[1:] for op in views)


def test_local_parameter_needs_a_shape() -> None:
    from adpasses.transforms.batch_loops import LOCAL, BatchSpec

    with pytest.raises(ValueError, match="LOCAL parameter needs its shape"):
        BatchSpec((LOCAL,), ())
    with pytest.raises(ValueError, match="shapes for 2 parameters"):
        BatchSpec(("batched", LOCAL), (), (), ((3,),))


def test_large_outputs_are_mapped_arrays_of_the_same_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outputs past LARGE_OUTPUT_BYTES come from an anonymous mapping
    (small pages): the same values, writable, C-contiguous, zero-filled
    where nothing is written (hvp's shadow outputs accumulate into it)."""
    rng = np.random.default_rng(13)
    X = rng.normal(size=(5, 4))
    small = adpasses.vmap(adpasses.hessian(coupled))(X)
    monkeypatch.setattr(vmap_api, "LARGE_OUTPUT_BYTES", 0)
    big = adpasses.vmap(adpasses.hessian(coupled))(X)
    np.testing.assert_array_equal(big, small)
    base = big
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):  # numpy keeps the buffer's memoryview
        base = base.obj
    assert isinstance(base, mmap.mmap)  # the mapped path was taken
    assert big.flags.writeable and big.flags.c_contiguous and big.dtype == np.float64
    z = vmap_api.batch_output((3, 2), np.float32)
    assert z.dtype == np.float32 and z.shape == (3, 2) and not z.any()
    z[1, 1] = 2.0
    assert z.sum() == 2.0
