"""The statements of docs/frontend.md ("Statements") compiled and
differentiated: primal equal to plain Python, reverse (grad) and forward
(jvp) derivatives equal to central finite differences of the plain Python
function, on random inputs."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses
import statement_kernels as k
from finite_diff import assert_matches, copy_args, finite_differences

rng = np.random.default_rng(7)


def vec(n, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, n)


def mat(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape)


# name -> (function, argument factory, argnums to differentiate)
CASES = {
    "iterate_elements": (k.iterate_elements, lambda: [vec(6)], (0,)),
    "iterate_elements_empty": (k.iterate_elements, lambda: [vec(0)], ()),
    "iterate_rows": (k.iterate_rows, lambda: [mat(4, 3), vec(3)], (0, 1)),
    "enumerate_weighted": (k.enumerate_weighted, lambda: [vec(5)], (0,)),
    "enumerate_start": (k.enumerate_start, lambda: [vec(5)], (0,)),
    "zip_dot": (k.zip_dot, lambda: [vec(5), vec(7)], (0, 1)),
    "zip_dot_short_first": (k.zip_dot, lambda: [vec(7), vec(4)], (0, 1)),
    "enumerate_zip": (k.enumerate_zip, lambda: [vec(6), vec(5)], (0, 1)),
    "zip_range_rows": (k.zip_range_rows, lambda: [mat(6, 2), vec(7)], (0, 1)),
    "zip_range_rows_short": (k.zip_range_rows, lambda: [mat(3, 2), vec(7)], (0, 1)),
    "reversed_recurrence": (k.reversed_recurrence, lambda: [vec(6)], (0,)),
    "reversed_array": (k.reversed_array, lambda: [vec(6)], (0,)),
    "reversed_range_steps": (k.reversed_range_steps, lambda: [vec(9)], (0,)),
    "reversed_range_steps_short": (k.reversed_range_steps, lambda: [vec(1)], (0,)),
    "iterate_view": (k.iterate_view, lambda: [vec(7)], (0,)),
    "iterate_with_break": (k.iterate_with_break, lambda: [np.array([0.3, 0.1, -0.7, 0.9])], (0,)),
}


def check_case(name, cases):
    f, make, argnums = cases[name]
    args = make()
    py_args, jit_args = copy_args(args), copy_args(args)
    expected = f(*py_args)
    got = adpasses.jit(f)(*jit_args)
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)
    for p, j in zip(py_args, jit_args):  # in-place updates agree too
        if isinstance(p, np.ndarray):
            np.testing.assert_allclose(j, p, rtol=1e-12, atol=1e-12)
    if not argnums:
        return
    expected = finite_differences(f, args, argnums)
    # reverse mode
    given = copy_args(args)
    value, grads = adpasses.value_and_grad(f, argnums)(*given)
    for before, after in zip(args, given):  # grad leaves its arguments unchanged
        if isinstance(before, np.ndarray):
            np.testing.assert_array_equal(after, before)
    assert value == pytest.approx(f(*copy_args(args)), rel=1e-12, abs=1e-12)
    for n, g, e in zip(argnums, grads, expected):
        assert_matches(g, e, what=f"{name}: gradient of argument {n}")
    # forward mode: one random direction over the differentiated arguments
    tangents = [None] * len(args)
    for n in argnums:
        tangents[n] = rng.uniform(-1, 1, np.shape(args[n])) if isinstance(args[n], np.ndarray) else float(rng.uniform(-1, 1))
    primals, given = copy_args(args), copy_args(tangents)
    _, derivative = adpasses.jvp(f, tuple(primals), tuple(given))
    for before, after in zip(args + tangents, primals + given):  # jvp leaves its arguments unchanged
        if isinstance(before, np.ndarray):
            np.testing.assert_array_equal(after, before)
    directional = sum(float(np.sum(e * t)) for e, t in zip(expected, (tangents[n] for n in argnums)))
    assert derivative == pytest.approx(directional, rel=1e-6, abs=1e-8), f"{name}: jvp"


@pytest.mark.parametrize("name", sorted(CASES))
def test_iteration(name):
    check_case(name, CASES)


SCOPING = {
    "loop_variable_after": (k.loop_variable_after, lambda: [vec(5)], (0,)),
    "loop_variable_after_break": (k.loop_variable_after_break, lambda: [np.array([0.5, 0.2, -0.3, 0.8])], (0,)),
    "loop_variable_after_no_break": (k.loop_variable_after_break, lambda: [vec(4, 0.1, 1.0)], (0,)),
    "element_after_loop": (k.element_after_loop, lambda: [vec(5)], (0,)),
    "assigned_in_loop_read_after": (k.assigned_in_loop_read_after, lambda: [vec(4)], (0,)),
    "first_iteration_branch": (k.first_iteration_branch, lambda: [vec(6)], (0,)),
    "branch_only_then_read": (k.branch_only_then_read, lambda: [vec(3), 0.5], (0,)),
    "nested_first_iteration": (k.nested_first_iteration, lambda: [mat(3, 4)], (0,)),
    "while_assigned_read_after": (k.while_assigned_read_after, lambda: [vec(5)], (0,)),
    "int_assigned_in_loop": (k.int_assigned_in_loop, lambda: [vec(5)], (0,)),
    "unbound_in_branch_of_loop": (k.unbound_in_branch_of_loop, lambda: [np.array([0.2, 0.9, 0.1, 0.7, 0.3])], (0,)),
    # a variable bound before `break` and in the loop's `else:` is bound after it on both paths
    "while_break_else_broken": (k.while_break_else, lambda: [np.array([0.5, 1.5, 3.0])], (0,)),
    "while_break_else_exhausted": (k.while_break_else, lambda: [np.array([0.5, 0.2])], (0,)),
    "for_break_else_broken": (k.for_break_else, lambda: [np.array([0.5, 1.5, 3.0])], (0,)),
    "for_break_else_exhausted": (k.for_break_else, lambda: [np.array([0.5, 0.2])], (0,)),
    "nested_break_else": (k.nested_break_else, lambda: [np.array([[0.1, 0.9, 0.3], [0.2, 0.4, 0.6], [0.85, 0.1, 0.2]])], (0,)),
    "continue_break_else_broken": (k.continue_break_else, lambda: [np.array([-0.5, 0.3, 1.4, 0.2])], (0,)),
    "continue_break_else_exhausted": (k.continue_break_else, lambda: [np.array([0.4, -0.3, 0.2])], (0,)),
    "return_in_loop_else_broken": (k.return_in_loop_else, lambda: [np.array([0.5, 1.5, -3.0])], (0,)),
    "return_in_loop_else_returned": (k.return_in_loop_else, lambda: [np.array([0.5, -1.5, 3.0])], (0,)),
    "return_in_loop_else_exhausted": (k.return_in_loop_else, lambda: [np.array([0.5, 0.2])], (0,)),
    "break_in_else_of_if_broken": (k.break_in_else_of_if, lambda: [np.array([0.5, 0.3, 1.5])], (0,)),
    "break_in_else_of_if_exhausted": (k.break_in_else_of_if, lambda: [np.array([0.5, 0.3])], (0,)),
}


@pytest.mark.parametrize("name", sorted(SCOPING))
def test_scoping(name):
    check_case(name, SCOPING)


UNBOUND = [
    (k.loop_variable_after, [vec(0)], "i"),
    (k.element_after_loop, [vec(0)], "v"),
    (k.assigned_in_loop_read_after, [vec(0)], "t"),
    (k.branch_only_then_read, [vec(3), -0.5], "y"),
    (k.while_assigned_read_after, [vec(0)], "last"),
    (k.unbound_in_branch_of_loop, [vec(4, -1.0, 0.4)], "big"),
]


@pytest.mark.parametrize("f,args,name", UNBOUND, ids=[u[0].__name__ for u in UNBOUND])
@pytest.mark.parametrize("mode", ["jit", "grad", "jvp"])
def test_reading_an_unbound_variable_raises_python_error(f, args, name, mode):
    with pytest.raises(UnboundLocalError) as python:
        f(*copy_args(args))
    with pytest.raises(UnboundLocalError) as compiled:
        if mode == "jit":
            adpasses.jit(f)(*copy_args(args))
        elif mode == "grad":
            adpasses.grad(f)(*copy_args(args))
        else:
            adpasses.jvp(f, tuple(copy_args(args)), (np.ones_like(args[0]),) + (None,) * (len(args) - 1))
    text = str(compiled.value)
    assert text.startswith(str(python.value))  # Python's words
    lines, first = __import__("inspect").getsourcelines(f)
    read_line = first + max(j for j, t in enumerate(lines) if name in t and "return" in t)
    assert f"(at {k.__file__}:{read_line}:" in text


def test_unbound_check_stays_without_boundscheck():
    f = adpasses.jit(k.assigned_in_loop_read_after, boundscheck=False)
    with pytest.raises(UnboundLocalError):
        f(vec(0))
    assert f(np.array([0.3])) == pytest.approx(k.assigned_in_loop_read_after(np.array([0.3])))


def primal_ir(f, *args):
    from adpasses.frontend import ArrayArg, ScalarArg, arg_type, build_module

    module, _ = build_module(f, [arg_type(a, j, f"a{j}") for j, a in enumerate(args)])
    return str(module)


def test_flags_only_where_a_variable_may_be_unbound():
    """A variable bound on every path gets no defined-flag and no check; a
    loop carries out only what is read after it."""
    text = primal_ir(k.first_iteration_branch, vec(4))
    assert text.count("ad.raise_if") == 1  # prev, read in the else branch
    assert "ad.raise_if" not in primal_ir(k.iterate_elements, vec(4))
    assert "ad.raise_if" not in primal_ir(k.dot_like_temporaries, vec(4))
    loops = [line for line in primal_ir(k.dot_like_temporaries, vec(4)).splitlines() if "scf.for" in line]
    assert len(loops) == 2 and all(line.endswith("-> (f64) {") for line in loops), loops  # s only: not t, not i
    loops = [line for line in primal_ir(k.loop_variable_after, vec(4)).splitlines() if "scf.for" in line]
    assert len(loops) == 1 and loops[0].endswith("-> (index, i1) {"), loops  # i and its defined-flag


SLICES = {
    "fill_tail": (k.fill_tail, lambda: [vec(5)], (0,)),
    "column_inf": (k.column_inf, lambda: [mat(4, 3, lo=0.5, hi=2.0)], (0,)),
    "set_rows": (k.set_rows, lambda: [vec(4), mat(3, 4)], (0, 1)),
    "add_slices": (k.add_slices, lambda: [vec(6), vec(4)], (0, 1)),
    "shift_right": (k.shift_right, lambda: [vec(6)], (0,)),
    "shift_left_add": (k.shift_left_add, lambda: [vec(6)], (0,)),
    "broadcast_row": (k.broadcast_row, lambda: [mat(3, 4), vec(4)], (0, 1)),
    "broadcast_column_of_ones": (k.broadcast_row, lambda: [mat(3, 4), vec(1)], (0, 1)),
    "local_buffer_slices": (k.local_buffer_slices, lambda: [vec(6)], (0,)),
    "reversed_slice_store": (k.reversed_slice_store, lambda: [vec(5), vec(5)], (0, 1)),
}


@pytest.mark.parametrize("name", sorted(SLICES))
def test_slice_assignment(name):
    check_case(name, SLICES)


def test_slice_store_into_the_same_array_passed_twice():
    """Two arguments may share memory: the source is read as if copied first."""
    x = vec(6)
    expected = x.copy()
    k.reversed_slice_store(expected, expected)
    y = x.copy()
    got = adpasses.jit(k.reversed_slice_store)(y, y)
    np.testing.assert_allclose(y, expected, rtol=1e-15)
    z = x.copy()
    assert got == pytest.approx(k.reversed_slice_store(z, z), rel=1e-12)


SHAPE_ERRORS = [
    (k.mismatched_slice, [vec(5), vec(3)]),
    (k.mismatched_slice, [vec(5), vec(6)]),
    (k.mismatched_update, [mat(3, 4), mat(3, 2)]),
    (k.mismatched_update, [mat(3, 4), vec(2)]),
]


@pytest.mark.parametrize("f,args", SHAPE_ERRORS, ids=range(len(SHAPE_ERRORS)))
@pytest.mark.parametrize("mode", ["jit", "grad"])
def test_slice_shape_mismatch_is_numpy_value_error(f, args, mode):
    with pytest.raises(ValueError) as python:
        f(*copy_args(args))
    with pytest.raises(ValueError) as compiled:
        if mode == "jit":
            adpasses.jit(f)(*copy_args(args))
        else:
            adpasses.grad(f)(*copy_args(args))
    text = str(compiled.value)
    assert text.startswith(str(python.value).strip())
    lines, first = __import__("inspect").getsourcelines(f)
    line = first + next(j for j, t in enumerate(lines) if "y" in t and "=" in t)
    assert f"(at {k.__file__}:{line}:" in text


REBINDING = {
    "heat_two_buffers": (k.heat_two_buffers, lambda: [vec(7), vec(7), 5, 0.2], (0, 1, 3)),
    "heat_two_buffers_odd": (k.heat_two_buffers, lambda: [vec(6), vec(6), 4, 0.3], (0, 3)),
    "heat_two_buffers_zero_steps": (k.heat_two_buffers, lambda: [vec(5), vec(5), 0, 0.3], (0,)),
    "rebind_to_other": (k.rebind_to_other, lambda: [vec(4), vec(4), 3], (0, 1)),
    "swap_in_branch": (k.swap_in_branch, lambda: [vec(5), vec(5), 5], (0, 1)),
    "swap_while": (k.swap_while, lambda: [vec(4), vec(4)], (0, 1)),
    "swap_local_buffers": (k.swap_local_buffers, lambda: [vec(5), 3], (0,)),
    "choose_buffer_a": (k.choose_buffer, lambda: [vec(4), vec(4), 0.5], (0, 1)),
    "choose_buffer_b": (k.choose_buffer, lambda: [vec(4), vec(4), -0.5], (0, 1)),
    "choose_buffer_strided": (k.choose_buffer, lambda: [vec(4), vec(8)[::2], -0.5], (0, 1)),
    "rebind_in_if_taken": (k.rebind_in_if, lambda: [vec(3), vec(3), 0.5], (0, 1)),
    "rebind_in_if_not_taken": (k.rebind_in_if, lambda: [vec(3), vec(3), -0.5], (0, 1)),
    "swap_beside_a_2d_array": (k.power_iteration, lambda: [mat(4, 4), vec(4), 3], (0, 1)),
    "swap_beside_an_index_array": (k.smooth_gather, lambda: [vec(5), rng.permutation(5), vec(5), 4], (0, 2)),
}


@pytest.mark.parametrize("name", sorted(REBINDING))
def test_rebinding_array_variables(name):
    check_case(name, REBINDING)


def test_an_array_only_read_beside_swapped_buffers_is_not_written():
    """Only the arrays a variable is rebound to are its candidates: a
    read-only argument read in the loop is accepted and left alone."""
    x, idx, w = vec(5), rng.permutation(5), vec(5)
    w.flags.writeable = False
    assert adpasses.jit(k.smooth_gather)(x, idx, w, 3) == pytest.approx(k.smooth_gather(x, idx, w, 3), rel=1e-13)
    g = adpasses.grad(k.smooth_gather, 0)(x, idx, w, 3)
    assert_matches(g, finite_differences(k.smooth_gather, [x, idx, w, 3], (0,))[0], what="gradient of x")


def test_rebinding_to_an_array_made_in_the_loop_is_an_error():
    with pytest.raises(adpasses.CompileError) as info:
        adpasses.jit(k.rebinds_to_new_array)(vec(3))
    text = str(info.value)
    assert "array variable 'u' is rebound inside a loop to an array that is not one of the arrays" in text
    assert "allocate the buffers before the loop" in text


def test_rebinding_to_an_array_computed_beside_a_matrix_names_the_fix():
    """Every array the loop mentions is a candidate there (W too), yet the
    message is about h's rebinding, not about dtypes or dimensions."""
    with pytest.raises(adpasses.CompileError) as info:
        adpasses.jit(k.rebinds_to_computed_with_a_matrix)(np.eye(3) * 0.5, vec(3), 4)
    text = str(info.value)
    assert "array variable 'h' is rebound inside this loop to an array computed in it" in text
    assert "(h[:] = ...)" in text and "statement_kernels.py:" in text
    assert "dtypes" not in text


def test_array_made_in_a_branch_used_after_the_if_is_an_error():
    with pytest.raises(adpasses.CompileError) as info:
        adpasses.jit(k.branch_view_used_after)(vec(3), 1.0)
    text = str(info.value)
    assert "array variable 'u' is bound in a branch of this if to an array made in that branch" in text
    assert "allocate the array before the if" in text
