"""Hostile scalars (issue 13, item 4): converting a scalar argument may run
Python code (`__float__`, `__index__`). Every entry path converts all
scalars before it reads any array pointer, so that code cannot free or
resize an array the compiled code is about to read, and an exception it
raises reaches the caller unchanged.

Entry paths covered: the LLVM entry shims and the ctypes binding of
`compile_module`, and the general paths of `jit`, `grad`,
`value_and_grad` and `autodiff` (fast paths only take exact floats, ints,
bools and arrays, whose conversion runs no Python code). Cases that
crashed the interpreter before the fix run in a fresh process."""

from __future__ import annotations

import math

import numpy as np
import pytest

import adpasses
from adpasses import Active, Const, Duplicated
from finite_diff import assert_matches, finite_differences
from isolate import run_isolated

SCALE = """
func.func @scale(%x: memref<?xf64>, %s: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %p = arith.mulf %a, %s : f64
    %t = arith.addf %acc, %p : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}
func.func @scale2(%s: f64, %x: memref<?xf64>) -> f64 {
  %r = func.call @scale(%x, %s) : (memref<?xf64>, f64) -> f64
  func.return %r : f64
}
func.func @pick(%x: memref<?xf64>, %i: index, %k: i32) -> f64 {
  %v = memref.load %x[%i] : memref<?xf64>
  func.return %v : f64
}
"""

BINDINGS = ["shim", "ctypes"]


@pytest.fixture(scope="module", params=BINDINGS)
def mod(request):
    return adpasses.compile_module(SCALE, binding=request.param)


class Raises:
    """Its own conversion raises this exception object."""

    def __init__(self, exc: BaseException):
        self.exc = exc

    def __float__(self) -> float:
        raise self.exc

    def __index__(self) -> int:
        raise self.exc


class ReturnsText:
    def __float__(self):  # type: ignore[no-untyped-def]
        return "1.0"


# -- the MLIR entry points (shim and ctypes) ----------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("order", ["array first", "scalar first"])
def test_float_hook_that_frees_an_array_read_before_it(binding, order):
    """r16: `__float__` of a later argument frees the buffer of an earlier
    array (resize with refcheck=False). Before: SIGSEGV (the shim had read
    the data pointer already). Now the array is read after the conversion,
    so the code sees the resized (empty) array: 0.0, for both orders."""
    call = "m.scale(x, Evil())" if order == "array first" else "m.scale2(Evil(), x)"
    r = run_isolated(f"""
        import numpy as np, adpasses
        from test_safety_api_scalars import SCALE
        m = adpasses.compile_module(SCALE, binding={binding!r})
        x = np.ones(4_000_000)
        class Evil:
            def __float__(self):
                x.resize((0,), refcheck=False)
                return 1.0
        print("result", {call})
        x2 = np.ones(3)
        class Grow:
            def __float__(self):
                x2.resize((2_000_000,), refcheck=False)
                x2[:] = 2.0
                return 1.0
        print("grown", m.scale(x2, Grow()))
        """)
    assert not r.crashed, str(r)
    assert r.returncode == 0, str(r)
    assert "result 0.0" in r.stdout
    assert "grown 4000000.0" in r.stdout  # the new size and contents, not the stale pointer


@pytest.mark.parametrize("exc", [KeyError("mine"), ZeroDivisionError("boom"), TypeError("own"),
                                 OverflowError("own overflow")])
def test_an_exception_of_the_objects_own_conversion_propagates_unchanged(mod, exc):
    x = np.ones(3)
    with pytest.raises(type(exc)) as info:
        mod.scale(x, Raises(exc))  # __float__ raises
    assert info.value is exc
    with pytest.raises(type(exc)) as info:
        mod.pick(x, Raises(exc), 1)  # __index__ of an index parameter raises
    assert info.value is exc
    with pytest.raises(type(exc)) as info:
        mod.pick(x, 0, Raises(exc))  # __index__ of an i32 parameter raises
    assert info.value is exc
    assert mod.scale(x, 2.0) == 6.0  # nothing left behind (error slot, pending exception)


def test_a_conversion_returning_a_non_float_is_pythons_error(mod):
    with pytest.raises(TypeError, match=r"ReturnsText.__float__ returned non-float \(type str\)"):
        mod.scale(np.ones(2), ReturnsText())


def test_objects_without_a_conversion_get_the_message_naming_the_parameter(mod):
    with pytest.raises(TypeError, match=r"scale\(\): argument 1 \('s'\) must be a f64 scalar, got str"):
        mod.scale(np.ones(2), "1.5")
    with pytest.raises(TypeError, match=r"pick\(\): argument 1 \('i'\) must be an index scalar, got float"):
        mod.pick(np.ones(2), 1.0, 1)
    with pytest.raises(OverflowError, match=r"argument 2 \('k'\) = 4294967296 does not fit in i32"):
        mod.pick(np.ones(2), 0, 2**32)
    with pytest.raises(OverflowError, match=r"argument 1 \('i'\) = \d+ does not fit in index"):
        mod.pick(np.ones(2), 2**64, 1)


def test_both_bindings_accept_the_same_scalars():
    shim = adpasses.compile_module(SCALE, binding="shim")
    slow = adpasses.compile_module(SCALE, binding="ctypes")
    x = np.arange(1.0, 4.0)

    class Half:
        def __float__(self) -> float:
            return 0.5

    class Two:
        def __index__(self) -> int:
            return 2

    for s in (2.0, 3, True, np.float32(1.5), np.int64(4), Half(), Two()):
        assert shim.scale(x, s) == slow.scale(x, s) == 6.0 * float(s if not isinstance(s, Two) else 2)
    for i in (Two(), np.int32(2), True):
        assert shim.pick(x, i, 1) == slow.pick(x, i, 1) == x[int(i) if not isinstance(i, Two) else 2]


# -- the Python API's general paths --------------------------------------------------------


@adpasses.jit
def weighted(x, s):
    t = 0.0
    for i in range(len(x)):
        t += s * x[i] * x[i]
    return t


@adpasses.jit
def weighted_at(x, i, s):
    return s * x[i] * x[i]


class HostileFloat(np.float32):
    """A numpy scalar whose `__float__` resizes a global array: it reaches
    compiled code only through the general paths (no signature code)."""

    target: np.ndarray | None = None
    calls = 0

    def __float__(self) -> float:
        type(self).calls += 1
        if type(self).target is not None:
            type(self).target.resize((0,), refcheck=False)
        return 2.0


class RaisingIndex(np.int64):
    exc = LookupError("index hook")

    def __index__(self) -> int:
        raise self.exc


def test_api_general_paths_convert_scalars_before_reading_arrays():
    """jit, grad, value_and_grad, autodiff with a numpy scalar whose
    conversion frees the array argument: each sees the array as it is
    after the conversion (empty), converts once, and nothing crashes."""
    r = run_isolated("""
        import numpy as np, adpasses
        from adpasses import Active, Const, Duplicated
        from test_safety_api_scalars import weighted, HostileFloat
        results = []
        def fresh():
            x = np.ones(1_000_000)
            HostileFloat.target = x
            HostileFloat.calls = 0
            return x
        x = fresh(); results.append(("jit", weighted(x, HostileFloat(1.0)), HostileFloat.calls))
        x = fresh(); g = adpasses.grad(weighted)(x, HostileFloat(1.0))
        results.append(("grad", g.shape, HostileFloat.calls))
        x = fresh(); v, g = adpasses.value_and_grad(weighted, (0, 1))(x, HostileFloat(1.0))
        results.append(("value_and_grad", v, g[0].shape, g[1], HostileFloat.calls))
        x = fresh(); dx = np.zeros(0)
        results.append(("autodiff const", adpasses.autodiff(weighted, Duplicated(x, dx), Const(HostileFloat(1.0))),
                        HostileFloat.calls))
        x = fresh(); dx = np.zeros(0)
        results.append(("autodiff plain", adpasses.autodiff(weighted, Duplicated(x, dx), HostileFloat(1.0)),
                        HostileFloat.calls))
        x = fresh(); dx = np.zeros(0)
        results.append(("autodiff active", adpasses.autodiff(weighted, Duplicated(x, dx), Active(HostileFloat(1.0))),
                        HostileFloat.calls))
        x = fresh(); dx = np.zeros(0)
        results.append(("autodiff seed", adpasses.autodiff(weighted, Duplicated(x, dx), 1.0, seed=HostileFloat(1.0)),
                        HostileFloat.calls))
        for r in results:
            print(*r)
        """)
    assert not r.crashed and r.returncode == 0, str(r)
    lines = r.stdout.splitlines()
    assert lines == [
        "jit 0.0 1",
        "grad (0,) 1",
        "value_and_grad 0.0 (0,) 0.0 1",
        "autodiff const (None, None) 1",
        "autodiff plain (None, None) 1",
        "autodiff active (None, 0.0) 1",
        "autodiff seed (None, None) 1",
    ], str(r)


def test_api_scalar_conversion_errors_propagate_unchanged():
    x = np.linspace(0.5, 1.5, 4)
    bad = RaisingIndex(1)
    for call in (lambda: weighted_at(x, bad, 2.0),
                 lambda: adpasses.grad(weighted_at)(x, bad, 2.0),
                 lambda: adpasses.value_and_grad(weighted_at, 2)(x, bad, 2.0),
                 lambda: adpasses.autodiff(weighted_at, Duplicated(x, np.zeros(4)), Const(bad), 2.0),
                 lambda: adpasses.autodiff(weighted_at, Duplicated(x, np.zeros(4)), bad, Active(2.0))):
        with pytest.raises(LookupError) as info:
            call()
        assert info.value is RaisingIndex.exc
    np.testing.assert_array_equal(x, np.linspace(0.5, 1.5, 4))


def test_numpy_scalars_give_the_same_values_and_gradients_as_python_ones():
    """The general paths convert numpy scalars once; results are those of
    the Python values (checked against finite differences)."""
    x = np.random.default_rng(3).uniform(-1, 1, 5)
    for i, s in ((np.int32(2), np.float32(1.25)), (np.int64(4), np.float64(-0.75)), (1, 0.5)):
        assert weighted_at(x, i, s) == pytest.approx(float(s) * x[int(i)] ** 2, rel=1e-7)
        gx, gs = adpasses.grad(weighted_at, (0, 2))(x, i, s)
        fd_x, fd_s = finite_differences(weighted_at.py_func, [x, int(i), float(s)], (0, 2))
        assert_matches(gx, fd_x, what="d/dx")
        assert math.isclose(gs, fd_s, rel_tol=1e-6)
        dx = np.zeros(5)
        (_, _, ds) = adpasses.autodiff(weighted_at, Duplicated(x, dx), i, Active(s))
        assert_matches(dx, fd_x, what="autodiff d/dx")
        assert math.isclose(ds, fd_s, rel_tol=1e-6)
