"""Compiled functions returning arrays and tuples: values as numpy computes
them, numpy's sharing (an argument comes back as itself or a view of it),
ownership of the buffers compiled code allocated (numpy frees them, no
copy, no leak), and calls between compiled functions with such results."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import adpasses
from adpasses.native import runtime

import array_result_kernels as k

rng = np.random.default_rng(16)


def jit(fn):
    return adpasses.jit(fn)


def test_a_local_array_is_returned_as_an_array_that_owns_its_buffer():
    x = rng.standard_normal(7)
    out = jit(k.doubled)(x)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, k.doubled(x))
    assert not np.shares_memory(out, x)
    assert type(out.base).__name__ == "PyCapsule"  # the buffer compiled code allocated, not a copy
    out[0] = 5.0  # writeable, like np.zeros
    assert out.flags.writeable


def test_a_tuple_of_a_number_and_an_array():
    x = rng.standard_normal(6)
    e, f = jit(k.energy_forces)(x)
    e0, f0 = k.energy_forces(x)
    assert isinstance(e, float) and e == pytest.approx(e0)
    np.testing.assert_allclose(f, f0)


def test_an_argument_comes_back_as_itself_and_a_view_as_a_numpy_view():
    x = rng.standard_normal(5)
    assert jit(k.identity)(x) is x
    t = jit(k.tail)(x)
    assert t.base is x and np.array_equal(t, x[1:])
    m = rng.standard_normal((3, 4))
    mt = jit(k.transposed)(m)
    assert np.shares_memory(mt, m) and np.array_equal(mt, m.T) and mt.strides == m.T.strides
    c = jit(k.column)(m, 2)
    assert np.shares_memory(c, m) and np.array_equal(c, m[:, 2])


def test_a_view_of_a_read_only_argument_is_read_only():
    x = rng.standard_normal(5)
    x.flags.writeable = False
    assert not jit(k.tail)(x).flags.writeable
    assert jit(k.identity)(x) is x


def test_a_view_of_a_local_array_owns_the_whole_buffer():
    x = rng.standard_normal(7)
    v = jit(k.local_view)(x)
    np.testing.assert_array_equal(v, k.local_view(x))
    assert v.strides == (16,)


def test_early_returns_give_fresh_arrays():
    x = rng.standard_normal(4)
    f = jit(k.early)
    a, c = f(x, 1.0)
    assert c == 1.0 and np.array_equal(a, x) and not np.shares_memory(a, x)  # a copy on that path
    a, c = f(x, -2.0)
    assert c == 2.0 and np.array_equal(a, np.zeros(4))
    a, c = f(x, 0.0)
    assert c == 3.0 and np.array_equal(a, [7.0, 7.0, 7.0])


def test_one_buffer_returned_twice_is_two_arrays():
    a, b = jit(k.twice)(np.ones(3))
    a[0] = 1.0
    assert b[0] == 0.0  # the second is a copy: numpy would share, but neither frees the other's buffer


def test_dtypes_and_ranks():
    x = rng.standard_normal(4)
    a, b, c = jit(k.typed)(x, 4)
    a0, b0, c0 = k.typed(x, 4)
    for got, want in ((a, a0), (b, b0), (c, c0)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_a_tuple_of_numbers_from_inside_a_loop():
    f = jit(k.first_positive)
    assert f(np.array([-1.0, 2.0, 3.0])) == (2.0, 1)
    assert f(np.array([-1.0, -2.0])) == (0.0, -1)


def test_calls_between_compiled_functions():
    x = rng.standard_normal(6)
    assert jit(k.uses_stats)(x) == pytest.approx(k.uses_stats(x))
    assert jit(k.uses_doubled)(x) == pytest.approx(k.uses_doubled(x))
    np.testing.assert_array_equal(jit(k.passes_result_on)(x), 2.0 * x)
    e, g = jit(k.energy_forces_caller)(x)
    e0, g0 = k.energy_forces_caller(x)
    assert e == pytest.approx(e0)
    np.testing.assert_allclose(g, g0)


def test_a_callee_returning_a_view_writes_the_caller_array():
    x = rng.standard_normal(4)
    y = x.copy()
    assert jit(k.writes_through_tail)(x) == 100.0 and x[1] == 100.0
    k.writes_through_tail(y)
    np.testing.assert_array_equal(x, y)


def test_returned_buffers_are_freed_by_numpy():
    f, g = jit(k.doubled), jit(k.energy_forces)
    x = rng.standard_normal(5)
    f(x), g(x)  # compiled
    gc.collect()
    before = runtime.handed_arrays()
    kept = [f(x) for _ in range(10)]
    for _ in range(500):
        f(x)
        g(x)
    gc.collect()
    now = runtime.handed_arrays()
    assert now["handed"] - before["handed"] == 1010
    assert now["freed"] - before["freed"] == 1000  # all but the ten kept
    del kept
    gc.collect()
    assert runtime.handed_arrays()["freed"] - before["freed"] == 1010


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_no_leak_in_resident_memory():
    """8 MB per call, 300 calls: a leak would grow resident memory by 2.4 GB;
    through a callee too (the caller frees what the callee hands over)."""
    n = 1_000_000
    f, g = jit(k.big_buffer), jit(k.uses_big_buffer)
    f(n)[:] = 0.0
    g(n)
    gc.collect()
    start = _rss_bytes()
    for _ in range(300):
        f(n)[:] = 1.0  # touch every page
        g(n)
    gc.collect()
    assert _rss_bytes() - start < 200 * 2**20


def test_bounds_checks_still_apply():
    f = jit(k.out_of_bounds)
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 3"):
        f(np.zeros(3), 9)
    assert f(np.zeros(3), -1)[2] == 1.0


@pytest.mark.parametrize("binding", ["ctypes"])
def test_the_ctypes_binding_returns_the_same(binding):
    from adpasses.frontend import ArrayArg, build_module
    from adpasses.native.llvm_jit import compile_module

    x = rng.standard_normal(5)
    for fn in (k.doubled, k.energy_forces, k.identity, k.tail):
        module, name = build_module(fn, [ArrayArg("float64", 1, True)])
        got = compile_module(module, binding=binding)[name](x)
        want = fn(x)
        if isinstance(want, tuple):
            assert got[0] == pytest.approx(want[0])
            np.testing.assert_allclose(got[1], want[1])
        else:
            np.testing.assert_array_equal(got, want)
    module, name = build_module(k.identity, [ArrayArg("float64", 1, True)])
    assert compile_module(module, binding=binding)[name](x) is x


def test_a_branch_that_raises_beside_one_returning_an_array():
    f = jit(k.checked)
    out, c = f(np.zeros(3), 2.0)
    assert c == 2.0 and np.array_equal(out, np.ones(3))
    with pytest.raises(ValueError, match="c must not be negative"):
        f(np.zeros(3), -1.0)


def copies(a):
    return a.copy(), np.copy(a), np.array(a)


def copy_then_write(a):
    b = a.copy()
    b[0] = a[1] + 1
    return b


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64, np.bool_])
def test_a_copy_keeps_the_dtype(dtype):
    """x.copy(), np.copy(x), np.array(x) are arrays of x's dtype, as in numpy
    (an int32 array's copy used to come back as int64: its elements are
    loaded as index values, whose storage type is int64)."""
    a = np.array([2**31 - 1, -3, 5, 0], dtype=np.int64).astype(dtype)
    for got in jit(copies)(a):
        assert got.dtype == a.dtype and np.array_equal(got, a) and not np.shares_memory(got, a)
    if dtype is not np.bool_:
        got = jit(copy_then_write)(a)
        assert got.dtype == a.dtype and np.array_equal(got, copy_then_write(a))
