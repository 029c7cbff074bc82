"""The Python API around the compiled code: return shapes of grad /
value_and_grad / autodiff, the aliasing dispatch, the per-signature caches,
inspect, and argument errors. Gradients are checked against central finite
differences of the plain Python functions (test_frontend.finite_differences)."""

from __future__ import annotations

import inspect as pyinspect
import math

import numpy as np
import pytest

import adpasses
import frontend_kernels as k
from finite_diff import copy_args, finite_differences

rng = np.random.default_rng(7)


@adpasses.jit
def scaled_square(a, s):
    return s * a * a


@adpasses.jit
def calls_jitted(x, s):
    total = 0.0
    for i in range(len(x)):
        total += scaled_square(x[i], s)
    return total


def overwrite_then_read(a, b):
    # b = a**2 elementwise, then sum a*b: if a and b are the same array the
    # loads of a see the squares, so aliasing changes the value and gradient
    for i in range(len(a)):
        b[i] = a[i] * a[i]
    s = 0.0
    for i in range(len(a)):
        s += a[i] * b[i]
    return s


def test_grad_return_shapes():
    x, y = rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 5)
    gx = adpasses.grad(k.dot)(x, y)
    assert isinstance(gx, np.ndarray) and gx.shape == x.shape and gx.dtype == x.dtype
    np.testing.assert_allclose(gx, y)
    both = adpasses.grad(k.dot, (0, 1))(x, y)
    assert isinstance(both, tuple) and len(both) == 2
    np.testing.assert_allclose(both[1], x)
    last = adpasses.grad(k.dot, -1)(x, y)
    np.testing.assert_allclose(last, x)
    value, (g0,) = adpasses.value_and_grad(k.dot, (0,))(x, y)
    assert value == pytest.approx(float(x @ y)) and isinstance(value, float)
    np.testing.assert_allclose(g0, y)
    d = adpasses.grad(k.horner, 1)(np.array([1.0, 2.0, 3.0]), 0.5)  # d/dt (1 + 2t + 3t^2)
    assert isinstance(d, float) and d == pytest.approx(2 + 6 * 0.5)


def test_calls_between_jitted_functions():
    x = rng.uniform(-1, 1, 6)
    assert calls_jitted(x, 1.5) == pytest.approx(1.5 * float(np.sum(x * x)))
    gx, gs = adpasses.grad(calls_jitted, (0, 1))(x, 1.5)
    np.testing.assert_allclose(gx, 3.0 * x)
    assert gs == pytest.approx(float(np.sum(x * x)))


def test_noncontiguous_argument_gets_contiguous_gradient():
    base = rng.uniform(-1, 1, (4, 6))
    view = base[:, ::2]
    g = adpasses.grad(k.column_view)(view)
    assert g.shape == view.shape and g.flags.c_contiguous
    expected = finite_differences(k.column_view, [view.copy()], (0,))[0]
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)


def test_alias_dispatch_fast_path_then_aliased_call():
    """A no-alias call installs the fast path; a later call passing the same
    array twice must still take the conservative version and be right."""
    g = adpasses.grad(overwrite_then_read)
    a, b = rng.uniform(0.5, 1.5, 5), np.zeros(5)
    separate = g(a.copy(), b)
    np.testing.assert_allclose(separate, finite_differences(overwrite_then_read, [a, b], (0,))[0], rtol=1e-6)
    [plan] = g._plans.values()
    assert set(plan.variants) == {True}  # only the noalias version so far
    w = a.copy()
    aliased = g(w, w)
    def python_aliased(v):
        return overwrite_then_read(v, v)
    np.testing.assert_allclose(aliased, finite_differences(python_aliased, [a], (0,))[0], rtol=1e-6)
    assert set(plan.variants) == {True, False}
    assert not np.allclose(aliased, separate)  # the two cases really differ


def products_of_neighbours(a, b):
    for i in range(len(b)):
        b[i] = a[i] * a[i + 1]
    s = 0.0
    for i in range(len(b)):
        s += b[i] * b[i]
    return s


def test_overlapping_written_views_give_memory_gradients():
    """a = buf[0:7] and b = buf[1:7] overlap and b is written: each returned
    gradient is the derivative with respect to the memory it views."""
    buf = rng.uniform(0.5, 1.5, 8)
    assert adpasses.inspect(products_of_neighbours, buf[0:7], buf[1:7]).noalias is False
    assert adpasses.inspect(products_of_neighbours, buf[0:4], buf[4:7]).noalias is True

    def python_views(v):
        return products_of_neighbours(v[0:7], v[1:7])

    expected = finite_differences(python_views, [buf], (0,))[0]
    work = buf.copy()
    ga, gb = adpasses.grad(products_of_neighbours, (0, 1))(work[0:7], work[1:7])
    np.testing.assert_allclose(ga, expected[0:7], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, expected[1:7], rtol=1e-6, atol=1e-8)
    assert not np.shares_memory(ga, gb)
    # the same through a reversed view and a transposed matrix
    work = buf.copy()
    ga, gb = adpasses.grad(products_of_neighbours, (0, 1))(work[::-1], work[1:7])

    def python_reversed(v):
        return products_of_neighbours(v[::-1], v[1:7])

    expected = finite_differences(python_reversed, [buf], (0,))[0]
    np.testing.assert_allclose(ga, expected[::-1], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, expected[1:7], rtol=1e-6, atol=1e-8)


def test_read_only_aliases_give_per_argument_gradients():
    x = rng.uniform(-1, 1, 5)
    gx, gy = adpasses.grad(k.dot, (0, 1))(x, x)  # nothing written: as if distinct arrays
    np.testing.assert_allclose(gx, x)
    np.testing.assert_allclose(gy, x)


def sum_of_squares(x):  # used by this test only: its caches start empty
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


def test_compiled_once_per_signature():
    g = adpasses.grad(sum_of_squares)
    assert adpasses.grad(sum_of_squares) is g  # one grad object per (function, argnums)
    g(rng.uniform(-1, 1, 3))
    g(rng.uniform(-1, 1, 9))
    jf = g.jf
    assert len(jf._gradients) == 1
    g(rng.uniform(-1, 1, 9).astype(np.float32))
    assert len(jf._gradients) == 2
    g(rng.uniform(-1, 1, 9)[::2])
    assert len(jf._gradients) == 3


def test_autodiff_return_value_shapes():
    x = rng.uniform(-1, 1, 4)
    dx = np.zeros(4)
    derivs = adpasses.autodiff(k.horner, adpasses.Duplicated(x, dx), adpasses.Active(0.3))
    assert len(derivs) == 2 and derivs[0] is None and isinstance(derivs[1], float)
    expected = finite_differences(k.horner, [x, 0.3], (0, 1))
    np.testing.assert_allclose(dx, expected[0], rtol=1e-6, atol=1e-9)
    assert derivs[1] == pytest.approx(expected[1], rel=1e-6)
    # a function returning nothing: (derivatives, None)
    out, dout, dx2 = np.zeros(4), np.ones(4), np.zeros(4)
    result = adpasses.autodiff(k.writes_output, adpasses.Duplicated(x, dx2), adpasses.Duplicated(out, dout),
                               return_primal=True)
    assert result == ((None, None), None)
    np.testing.assert_allclose(dx2, 2 * np.cos(x))


def test_autodiff_duplicated_no_need_and_seed():
    x = rng.uniform(-1, 1, 5)
    dx = np.zeros(5)
    adpasses.autodiff(k.inplace_square, adpasses.DuplicatedNoNeed(x.copy(), dx), seed=3.0)
    np.testing.assert_allclose(dx, 3.0 * 2 * x, rtol=1e-12)


def test_autodiff_rejects_integer_duplicated_and_bad_active():
    with pytest.raises(TypeError, match="cannot be Duplicated"):
        adpasses.autodiff(k.dot, adpasses.Duplicated(np.arange(3), np.zeros(3, dtype=np.int64)), np.ones(3))
    with pytest.raises(TypeError, match="Active argument 1 must be a float"):
        adpasses.autodiff(k.horner, np.ones(3), adpasses.Active(2))


def test_grad_argument_errors_name_the_argument():
    g = adpasses.grad(k.dot)
    with pytest.raises(TypeError, match=r"argument 1 \('y'\) has type str"):
        g(np.ones(3), "y")
    with pytest.raises(TypeError, match=r"^dot\(\) missing 1 required positional argument: 'y'$"):
        g(np.ones(3))
    with pytest.raises(TypeError, match=r"argument 0 is an array of int64 and cannot be differentiated"):
        g(np.arange(3), np.ones(3))
    with pytest.raises(ValueError, match=r"grad\(dot, argnums=5\): there is no argument 5: dot\(\)"):
        adpasses.grad(k.dot, 5)


def test_grad_of_non_float_return_points_to_autodiff():
    def returns_int(x):
        n = 0
        for i in range(len(x)):
            if x[i] > 0:
                n += 1
        return n

    with pytest.raises(TypeError, match=r"does not return a float.*Duplicated\(out, seed_array\)"):
        adpasses.grad(returns_int)(np.ones(3))


def test_inspect_reports_with_python_locations():
    x = rng.uniform(-1, 1, 6)
    info = adpasses.inspect(k.inplace_square_mirrored, x)
    lines, first = pyinspect.getsourcelines(k.inplace_square_mirrored)
    store_line = first + next(j for j, t in enumerate(lines) if "x[i] = x[i] * x[i]" in t)
    assert f'{k.__file__}":{store_line}' in info.primal_mlir or f"{k.__file__}:{store_line}" in info.primal_mlir
    assert "memref.store" in info.primal_mlir and "func.func @inplace_square_mirrored" in info.primal_mlir
    assert "inplace_square_mirrored_grad" in info.gradient_mlir
    assert "define" in info.llvm_ir
    assert "x" in info.activity
    report = info.cache_report
    assert report.taped_bytes == 6 * 8  # the overwritten x[i], one double per element
    assert f"{k.__file__}:{store_line}" in str(report)
    assert str(adpasses.cache_report(k.inplace_square_mirrored, x)) == str(report)


def _two_args(x, s):
    return s * np.sum(x * x * x)


def test_inspect_accepts_derivative_objects():
    """inspect(grad(f, argnums)) is inspect(f, argnums=argnums): the same
    IR and report; hessian(f) and hvp(f) show the gradient, its forward
    derivative (forward over reverse) and the cache report that
    cache_report(hessian(f)) gives."""
    x = rng.uniform(-1, 1, 5)
    for obj, nums in [(adpasses.grad(_two_args), 0), (adpasses.grad(_two_args, argnums=1), 1),
                      (adpasses.value_and_grad(_two_args, (0, 1)), (0, 1))]:
        got, plain = adpasses.inspect(obj, x, 0.5), adpasses.inspect(_two_args, x, 0.5, argnums=nums)
        assert got.gradient_mlir == plain.gradient_mlir and got.activity == plain.activity
        assert str(got.cache_report) == str(plain.cache_report) and got.tangent_mlir == ""
    assert "const" in adpasses.inspect(adpasses.grad(_two_args), x, 0.5).activity.splitlines()[2]  # s
    assert adpasses.inspect(adpasses.grad(_two_args), x, 0.5, argnums=0).activity == \
        adpasses.inspect(_two_args, x, 0.5).activity
    h = adpasses.hessian(_two_args)
    info = adpasses.inspect(h, x, 0.5)
    assert "func.func @_two_args" in info.primal_mlir and "_two_args_grad" in info.gradient_mlir
    assert "func.func" in info.tangent_mlir and info.tangent_mlir not in info.gradient_mlir
    assert str(info.cache_report) == str(adpasses.cache_report(h, x, 0.5))
    assert "== tangent MLIR (forward over the gradient) ==" in str(info) and "define" in info.llvm_ir
    v = rng.uniform(-1, 1, 5)
    hv = adpasses.inspect(adpasses.hvp(_two_args), x, 0.5, v)
    assert str(hv.cache_report) == str(adpasses.cache_report(adpasses.hvp(_two_args), x, 0.5, v))
    assert hv.tangent_mlir and hv.gradient_mlir == info.gradient_mlir


def test_inspect_of_other_derivative_objects_says_what_to_pass():
    x = rng.uniform(-1, 1, 5)
    with pytest.raises(TypeError, match=r"for jacfwd\(_two_args\) pass the function and the arguments: "
                                        r"adpasses.inspect\(_two_args, \*args, argnums=...\)"):
        adpasses.inspect(adpasses.jacfwd(_two_args), x, 0.5)
    for obj in (adpasses.jacrev(_two_args), adpasses.vmap(_two_args)):
        with pytest.raises(TypeError, match=r"pass the function and the arguments: "
                                            r"adpasses.inspect\(_two_args, \*args"):
            adpasses.inspect(obj, x, 0.5)
    with pytest.raises(ValueError, match=r"inspect\(grad\(_two_args\), argnums=1\): grad\(_two_args\) "
                                         r"differentiates argnums=0; leave argnums= out"):
        adpasses.inspect(adpasses.grad(_two_args), x, 0.5, argnums=1)


def test_globals_are_frozen_at_first_compile():
    import frontend_kernels

    x = rng.uniform(-1, 1, 4)
    f = adpasses.jit(k.global_tuple_coeffs)
    first = f(x)
    saved = frontend_kernels.SCALE
    try:
        frontend_kernels.SCALE = 100.0
        assert f(x) == first  # compiled with the old value
    finally:
        frontend_kernels.SCALE = saved


def test_value_and_grad_matches_python_on_float32():
    x = rng.uniform(-1, 1, 7).astype(np.float32)
    value, g = adpasses.value_and_grad(k.logsumexp)(x)
    assert value == pytest.approx(k.logsumexp(x), rel=1e-6)
    assert g.dtype == np.float32
    expected = np.exp(x.astype(np.float64) - math.log(np.sum(np.exp(x.astype(np.float64)))))
    np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-6)  # float32 rounding


def test_call_results_equal_python_after_many_signatures():
    f = adpasses.jit(k.conditional_expr)
    for n in (1, 2, 5):
        for t in (0.5, -2.0):
            x = rng.uniform(-1, 1, n)
            assert f(*copy_args([x, t])) == pytest.approx(k.conditional_expr(x, t), rel=1e-12)


def test_primal_alias_dispatch():
    """Calls of a function that writes an array: the `ad.noalias` version
    when the arrays are distinct, the conservative one when they overlap;
    both agree with Python."""
    f = adpasses.jit(overwrite_then_read)
    a = rng.uniform(0.5, 1.5, 5)
    for _ in range(2):  # the second round goes through the dispatch builtin
        assert f(a.copy(), np.zeros(5)) == pytest.approx(overwrite_then_read(a.copy(), np.zeros(5)), rel=1e-14)
        w, v = a.copy(), a.copy()
        assert f(w, w) == pytest.approx(overwrite_then_read(v, v), rel=1e-14)
        np.testing.assert_array_equal(w, v)
    assert sorted(noalias for _, noalias in f._primal) == [False, True]
    g = adpasses.jit(k.dot)  # writes nothing: aliasing does not matter, one version
    x = rng.uniform(-1, 1, 4)
    assert g(x, x) == pytest.approx(float(x @ x)) and g(x, x.copy()) == pytest.approx(float(x @ x))
    assert [noalias for _, noalias in g._primal] == [True]
