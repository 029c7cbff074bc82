"""Python functions compiled by the frontend: primal equal to plain Python,
gradient equal to central finite differences of the plain Python function
(so the oracle never goes through adpasses), on random inputs."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses
import frontend_kernels as k
from finite_diff import assert_matches, copy_args, finite_differences

rng = np.random.default_rng(42)


def vec(n, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, n)


def mat(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape)


# name -> (function, argument factory, argnums to differentiate)
CASES = {
    "dot": (k.dot, lambda: [vec(7), vec(7)], (0, 1)),
    "strided_diff": (k.strided_diff, lambda: [vec(9)], 0),
    "energy": (k.energy, lambda: [vec(5, -0.5, 0.5)], 0),
    "small3": (k.small3, lambda: [vec(3), vec(2)], (0, 1)),
    "inplace_square": (k.inplace_square, lambda: [vec(6)], 0),
    "transposed_quad": (k.transposed_quad, lambda: [mat(4, 3), vec(4)], (0, 1)),
    "even_odd": (k.even_odd, lambda: [vec(9)], 0),
    "newton_sqrt": (k.newton_sqrt, lambda: [float(rng.uniform(0.5, 4.0))], 0),
    "branches": (k.branches, lambda: [vec(11), 0.7], (0, 1)),
    "product": (k.product, lambda: [vec(5, 0.5, 1.5), 1.1], (0, 1)),
    "uses_helper": (k.uses_helper, lambda: [vec(5)], 0),
    "scratch": (k.scratch, lambda: [vec(4)], 0),
    "euler": (k.euler, lambda: [vec(5, 0.1, 0.9), 4, 0.05], (0, 2)),
    "softmax_xent": (k.softmax_xent, lambda: [vec(6), 3], 0),
    "reverse_range": (k.reverse_range, lambda: [vec(6)], 0),
    "min_max_abs": (k.min_max_abs, lambda: [vec(8)], 0),
    "conditional_expr": (k.conditional_expr, lambda: [vec(8), 1.3], (0, 1)),
    "reversed_view": (k.reversed_view, lambda: [vec(6)], 0),
    "matvec_rows": (k.matvec_rows, lambda: [mat(3, 4), vec(4)], (0, 1)),
    "column_view": (k.column_view, lambda: [mat(3, 4)], 0),
    "ones_local": (k.ones_local, lambda: [vec(5)], 0),
    "while_counter": (k.while_counter, lambda: [vec(5)], 0),
    "swap": (k.swap, lambda: [0.3, 0.7], (0, 1)),
    "int_index_math": (k.int_index_math, lambda: [vec(5)], 0),
    "float_power": (k.float_power, lambda: [vec(5, 0.2, 1.5), 2.5], (0, 1)),
    "math_soup": (k.math_soup, lambda: [vec(5)], 0),
    "atan2_angles": (k.atan2_angles, lambda: [vec(4), vec(4)], (0, 1)),
    "early_return_hi": (k.early_return, lambda: [1.7], 0),
    "early_return_lo": (k.early_return, lambda: [0.4], 0),
    "nested_if": (k.nested_if, lambda: [vec(9)], 0),
    "short_circuit": (k.short_circuit, lambda: [vec(5), 5], 0),
    "chained_compare": (k.chained_compare, lambda: [vec(9)], 0),
    "int_power_literal": (k.int_power_literal, lambda: [vec(4)], 0),
    "norm": (k.norm, lambda: [vec(5)], 0),
    "logsumexp": (k.logsumexp, lambda: [vec(6)], 0),
    "horner": (k.horner, lambda: [vec(5), 0.7], (0, 1)),
    "sum3d": (k.sum3d, lambda: [mat(2, 3, 2)], 0),
    "closure": (k.closure_scaled, lambda: [vec(4)], 0),
    "numpy_names": (k.numpy_names, lambda: [vec(4, 0.1, 1.0)], 0),
    "conversions": (k.conversions, lambda: [vec(6)], 0),
    "negative_index": (k.negative_index, lambda: [vec(5)], 0),
    "negative_slice": (k.negative_slice, lambda: [vec(6)], 0),
    "mlp_loss": (k.mlp_loss, lambda: [mat(3, 4), mat(4, 5), vec(5)], (1, 2)),
    "global_scale": (k.global_tuple_coeffs, lambda: [vec(4)], 0),
    "loop_local_array": (k.loop_with_local_array, lambda: [vec(4)], 0),
    "strided_input": (k.dot, lambda: [vec(14)[::2], vec(21)[::3]], (0, 1)),
    "transposed_input": (k.matvec_rows, lambda: [mat(4, 3).T, vec(4)], (0, 1)),
    "negative_stride_input": (k.strided_diff, lambda: [vec(9)[::-1]], 0),
    "break": (k.sum_until_negative, lambda: [np.array([0.3, -0.2, 0.5, -0.9, 0.4, 0.7])], 0),
    "continue": (k.skip_small, lambda: [vec(8)], 0),
    "break_continue_reversed": (k.break_and_continue_reversed, lambda: [vec(11)], 0),
    "return_in_loop_found": (k.first_above, lambda: [np.array([0.1, 0.4, 0.8, 0.2]), 0.6], (0, 1)),
    "return_in_loop_not_found": (k.first_above, lambda: [vec(4, -1.0, 0.5), 0.6], (0, 1)),
    "return_in_nested_loop": (k.find_in_matrix, lambda: [mat(3, 4), 0.7], 0),
    "for_else_broken": (k.for_else, lambda: [np.array([0.2, -0.3, 0.95, 0.1])], 0),
    "for_else_completed": (k.for_else, lambda: [vec(5, -0.5, 0.8)], 0),
    "while_true_break": (k.while_break_true, lambda: [vec(6)], 0),
    "elif_returns_hi": (k.elif_returns, lambda: [1.5, 0.3], (0, 1)),
    "elif_returns_lo": (k.elif_returns, lambda: [-1.5, 0.3], (0, 1)),
    "elif_returns_mid": (k.elif_returns, lambda: [0.5, 0.3], (0, 1)),
    "shape_unpacking": (k.shape_unpacking, lambda: [mat(3, 4)], 0),
    "int_then_float": (k.int_then_float, lambda: [vec(5)], 0),
    "and_or_values": (k.and_or_values, lambda: [vec(8), 0.2], (0, 1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_primal_equals_python(name):
    f, make, _ = CASES[name]
    args = make()
    py_args, jit_args = copy_args(args), copy_args(args)
    expected = f(*py_args)
    got = adpasses.jit(f)(*jit_args)
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)
    for p, j in zip(py_args, jit_args):  # in-place updates agree too
        if isinstance(p, np.ndarray):
            np.testing.assert_allclose(j, p, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name):
    f, make, argnums = CASES[name]
    args = make()
    nums = (argnums,) if isinstance(argnums, int) else argnums
    value, grads = adpasses.value_and_grad(f, argnums)(*copy_args(args))
    grads = (grads,) if isinstance(argnums, int) else grads
    assert value == pytest.approx(f(*copy_args(args)), rel=1e-12, abs=1e-12)
    expected = finite_differences(f, args, nums)
    for n, g, e in zip(nums, grads, expected):
        if isinstance(args[n], np.ndarray):
            assert isinstance(g, np.ndarray) and g.shape == args[n].shape and g.dtype == args[n].dtype
        else:
            assert isinstance(g, float)
        assert_matches(g, e, what=f"{name}: argument {n}")


FLOAT32_CASES = {
    "energy": (k.energy, lambda: [vec(5, -0.5, 0.5)], 0),
    "dot": (k.dot, lambda: [vec(7), vec(7)], (0, 1)),
    "softmax_xent": (k.softmax_xent, lambda: [vec(6), 3], 0),
    "transposed_quad": (k.transposed_quad, lambda: [mat(4, 3), vec(4)], (0, 1)),
    "float32_sum": (k.float32_sum, lambda: [vec(6)], 0),
}


@pytest.mark.parametrize("name", sorted(FLOAT32_CASES))
def test_float32_inputs(name):
    """float32 arrays: loads and arithmetic stay float32, gradients are
    float32 arrays and match float64 finite differences to float32 accuracy."""
    f, make, argnums = FLOAT32_CASES[name]
    args = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in make()]
    nums = (argnums,) if isinstance(argnums, int) else argnums
    value, grads = adpasses.value_and_grad(f, argnums)(*copy_args(args))
    grads = (grads,) if isinstance(argnums, int) else grads
    assert value == pytest.approx(float(f(*copy_args(args))), rel=1e-5, abs=1e-6)
    for n, g, e in zip(nums, grads, finite_differences(f, args, nums)):
        assert g.dtype == np.float32 and g.shape == args[n].shape
        assert_matches(g, e, float32=True, what=f"{name}: argument {n}")


def test_float32_input_stays_float32():
    x = rng.uniform(-1, 1, 6).astype(np.float32)
    f = adpasses.jit(k.float32_sum)
    assert f(x) == pytest.approx(k.float32_sum(x), rel=1e-6)
    g = adpasses.grad(k.float32_sum)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, x, rtol=1e-6)  # d/dx sum(x^2/2) = x


def test_short_circuits_never_evaluate_the_untaken_side():
    f = adpasses.jit(k.guarded_chain)
    x = np.ones(3)
    for i in (-1, 0, 2, 3, 7):  # 3 and 7 would index out of bounds
        assert f(x, i) == k.guarded_chain(x, i)
    g = adpasses.jit(k.short_circuit)  # `i < len(x) and x[i] > 0` with i up to len(x) + 1
    assert g(np.array([0.5, -1.0, 2.0]), 3) == k.short_circuit(np.array([0.5, -1.0, 2.0]), 3)


def test_grad_of_newton_is_derivative_of_sqrt():
    for a in (0.5, 2.0, 9.0):
        assert adpasses.grad(k.newton_sqrt)(a) == pytest.approx(0.5 / np.sqrt(a), rel=1e-9)


def test_autodiff_output_array_with_seed():
    x = vec(5)
    out = np.zeros(5)
    dx = np.zeros(5)
    seed = vec(5)
    dout = seed.copy()
    derivs = adpasses.autodiff(k.writes_output, adpasses.Duplicated(x, dx), adpasses.Duplicated(out, dout))
    assert derivs == (None, None)
    np.testing.assert_allclose(out, 2 * np.sin(x))
    np.testing.assert_allclose(dx, 2 * np.cos(x) * seed, rtol=1e-12)
    np.testing.assert_allclose(dout, 0.0)  # the output's seed is consumed


def test_autodiff_active_const_and_primal():
    x, y = vec(4), vec(4)
    dx = np.ones(4)  # accumulates: dx += y
    derivs, value = adpasses.autodiff(k.branches, adpasses.Duplicated(x, dx), adpasses.Active(0.7),
                                      return_primal=True)
    assert value == pytest.approx(k.branches(x, 0.7))
    fd = finite_differences(k.branches, [x, 0.7], (0, 1))
    np.testing.assert_allclose(dx - 1.0, fd[0], rtol=1e-5, atol=1e-7)
    assert derivs[0] is None and derivs[1] == pytest.approx(fd[1], rel=1e-5)
    d = adpasses.autodiff(k.dot, adpasses.Duplicated(x, np.zeros(4)), adpasses.Const(y), seed=2.0)
    assert d == (None, None)


def test_autodiff_shadow_with_different_strides():
    x = vec(6)
    dx = np.zeros(12)[::2]  # same shape, different strides
    adpasses.autodiff(k.energy, adpasses.Duplicated(x, dx))
    np.testing.assert_allclose(dx, finite_differences(k.energy, [x], (0,))[0], rtol=1e-5, atol=1e-8)


def test_aliased_arguments_use_conservative_version():
    """The same array twice: the noalias version would reload x[i] after
    it was overwritten; the conservative one tapes it."""
    x = vec(5)
    expected = finite_differences(lambda a: k.dot(a, a), [x], (0,))[0]
    g = adpasses.grad(k.dot, (0, 1))(x, x)
    np.testing.assert_allclose(g[0] + g[1], expected, rtol=1e-6)

    def scaled_copy(a, b):
        for i in range(len(a)):
            b[i] = a[i] * a[i]
        s = 0.0
        for i in range(len(a)):
            s += a[i] * b[i]
        return s

    y = vec(5)
    both = adpasses.grad(scaled_copy)(y.copy(), y.copy())
    np.testing.assert_allclose(both, finite_differences(scaled_copy, [y, y.copy()], (0,))[0], rtol=1e-5)
    z = vec(5)
    w = z.copy()
    alias = adpasses.grad(scaled_copy)(w, w)  # b is a: b[i] = a[i]^2 overwrites a
    def python_alias(a):
        return scaled_copy(a, a)
    np.testing.assert_allclose(alias, finite_differences(python_alias, [z], (0,))[0], rtol=1e-5, atol=1e-7)


def test_boundscheck_off_still_computes():
    f = adpasses.jit(boundscheck=False)(k.dot)
    x, y = vec(5), vec(5)
    assert f(x, y) == pytest.approx(k.dot(x, y))


def test_signature_cache_compiles_once():
    f = adpasses.jit(k.norm)
    f(vec(3))
    f(vec(10))
    f(vec(3, 0, 1))
    assert len(f._primal) == 1
    f(vec(10)[::2])  # not contiguous: a second signature
    assert len(f._primal) == 2


@pytest.mark.parametrize("name", sorted(CASES))
def test_ir_is_well_formed_with_python_locations(name):
    """The frontend's IR verifies, re-parses from its printed form (which
    checks that every value is used where it is visible, something xDSL's
    verifier does not check), and every op carries a Python location."""
    import inspect as pyinspect

    from xdsl.dialects.builtin import FileLineColLoc

    from adpasses.core.context import parse_module
    from adpasses.frontend import arg_type, build_module

    f, make, _ = CASES[name]
    params = list(pyinspect.signature(f).parameters)
    module, _ = build_module(f, [arg_type(a, j, params[j]) for j, a in enumerate(make())])
    module.verify()
    parse_module(str(module), "<roundtrip>").verify()
    lines, first = pyinspect.getsourcelines(f)
    public = next(op for op in module.ops if op.sym_name.data == f.__name__)
    for op in module.walk():
        if op is module:
            continue
        assert isinstance(op.location, FileLineColLoc), f"{op.name} has no file location"
    for op in public.walk():  # the public function's ops point into its source
        assert op.location.filename.data == k.__file__
        assert first <= op.location.line.data < first + len(lines), f"{op.name} at {op.location}"
