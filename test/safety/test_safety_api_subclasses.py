"""ndarray subclasses (issue 13, item 9, r22): compiled code reads an
array's memory, so a `numpy.ma.MaskedArray` (whose mask it would ignore)
and other subclasses (which may redefine what an element is) are a
TypeError naming the argument and what to pass instead, on every path:
`jit`, `grad`, `value_and_grad`, `autodiff` (values, constants, shadows)
and `compile_module`'s entries (shim and ctypes). `np.memmap` is plain
memory and is accepted."""

from __future__ import annotations

import os

import numpy as np
import pytest

import adpasses
from adpasses import Const, Duplicated
from finite_diff import assert_matches, finite_differences

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
rng = np.random.default_rng(22)


@adpasses.jit
def sumsq(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


@adpasses.jit
def scaled_copy(src, dst, s):
    t = 0.0
    for i in range(len(dst)):
        dst[i] = s * src[i]
        t += dst[i] * src[i]
    return t


class Tagged(np.ndarray):
    """A trivial subclass: still rejected (what a subclass adds is unknown)."""


MASKED = r"is a numpy\.ma\.MaskedArray: compiled code reads the array's memory and would ignore its mask; " \
         r"pass x\.filled\(value\) .* or np\.asarray\(x\)"
OTHER = r"is a {} \(an ndarray subclass\): compiled code reads only the array's memory, not what the " \
        r"subclass adds; pass np\.asarray\(x\)"


def masked(n: int = 5) -> np.ndarray:
    return np.ma.masked_array(np.linspace(0.1, 0.9, n), mask=[0, 1] + [0] * (n - 2))


def subclasses():
    yield masked(), MASKED
    yield np.linspace(0.1, 0.9, 5).view(Tagged), OTHER.format(r"test_safety_api_subclasses\.Tagged")
    yield np.asmatrix(np.linspace(0.1, 0.9, 5)), OTHER.format(r"numpy\.matrix")


def test_masked_array_r22():
    """Before: sumsq(masked) returned 1.65, the sum over the data with the
    mask ignored (numpy's masked sum is 1.56)."""
    with pytest.raises(TypeError, match=r"sumsq\(\): argument 0 \('x'\) " + MASKED):
        sumsq(masked())


@pytest.mark.parametrize("case", range(3))
def test_every_api_path_rejects_subclasses_naming_the_argument(case):
    bad, message = list(subclasses())[case]
    x, out = np.linspace(0.1, 0.9, 5), np.zeros(5)
    calls = [
        (lambda: sumsq(bad), r"sumsq\(\): argument 0 \('x'\) "),
        (lambda: adpasses.grad(sumsq)(bad), r"sumsq\(\): argument 0 \('x'\) "),
        (lambda: adpasses.value_and_grad(sumsq)(bad), r"sumsq\(\): argument 0 \('x'\) "),
        (lambda: scaled_copy(x, bad, 2.0), r"scaled_copy\(\): argument 1 \('dst'\) "),
        (lambda: adpasses.grad(scaled_copy)(bad, out, 2.0), r"scaled_copy\(\): argument 0 \('src'\) "),
        (lambda: adpasses.autodiff(sumsq, Duplicated(bad, np.zeros(5))), r"sumsq\(\): argument 0 \('x'\) "),
        (lambda: adpasses.autodiff(sumsq, Duplicated(x, bad)), r"sumsq\(\): the shadow of argument 0 "),
        (lambda: adpasses.autodiff(scaled_copy, Const(bad), Duplicated(out, np.zeros(5)), 2.0),
         r"scaled_copy\(\): argument 0 \('src'\) "),
        (lambda: adpasses.autodiff(scaled_copy, bad, Duplicated(out, np.zeros(5)), 2.0),
         r"scaled_copy\(\): argument 0 \('src'\) "),
    ]
    for call, where in calls:
        with pytest.raises(TypeError, match=where + message):
            call()
    np.testing.assert_array_equal(out, 0.0)  # nothing ran
    # the same calls with plain arrays work (the fast paths are installed now) and a
    # later subclass call is still rejected by them
    assert sumsq(x) == pytest.approx(float(np.sum(x * x)))
    assert_matches(adpasses.grad(sumsq)(x), 2 * x)
    with pytest.raises(TypeError, match=message):
        sumsq(bad)
    with pytest.raises(TypeError, match=message):
        adpasses.grad(sumsq)(bad)


SUMSQ_MLIR = """
func.func @sumsq(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %p = arith.mulf %a, %a : f64
    %t = arith.addf %acc, %p : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}
"""


@pytest.mark.parametrize("binding", ["shim", "ctypes"])
def test_compile_module_entries_reject_subclasses(binding):
    m = adpasses.compile_module(SUMSQ_MLIR, binding=binding)
    for bad, message in subclasses():
        with pytest.raises(TypeError, match=r"sumsq\(\): argument 0 \('x'\) " + message):
            m.sumsq(bad)
    assert m.sumsq(np.ones(3)) == 3.0


def test_memmap_is_plain_memory_and_accepted(tmp_path):
    path = os.path.join(tmp_path, "x.bin")
    data = rng.uniform(-1, 1, 6)
    mm = np.memmap(path, dtype=np.float64, mode="w+", shape=(6,))
    mm[:] = data
    assert sumsq(mm) == pytest.approx(float(np.sum(data * data)))
    assert_matches(adpasses.grad(sumsq)(mm), finite_differences(sumsq.py_func, [data], (0,))[0])
    out = np.memmap(os.path.join(tmp_path, "out.bin"), dtype=np.float64, mode="w+", shape=(6,))
    t = scaled_copy(mm, out, 3.0)
    np.testing.assert_allclose(np.asarray(out), 3.0 * data)
    assert t == pytest.approx(3.0 * float(np.sum(data * data)))
    m = adpasses.compile_module(SUMSQ_MLIR)
    assert m.sumsq(mm) == pytest.approx(float(np.sum(data * data)))
    dx = np.zeros(6)
    adpasses.autodiff(sumsq, Duplicated(mm, dx))
    assert_matches(dx, 2 * data)
