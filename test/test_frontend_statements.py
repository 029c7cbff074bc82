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
    value, grads = adpasses.value_and_grad(f, argnums)(*copy_args(args))
    assert value == pytest.approx(f(*copy_args(args)), rel=1e-12, abs=1e-12)
    for n, g, e in zip(argnums, grads, expected):
        assert_matches(g, e, what=f"{name}: gradient of argument {n}")
    # forward mode: one random direction over the differentiated arguments
    tangents = [None] * len(args)
    for n in argnums:
        tangents[n] = rng.uniform(-1, 1, np.shape(args[n])) if isinstance(args[n], np.ndarray) else float(rng.uniform(-1, 1))
    _, derivative = adpasses.jvp(f, tuple(copy_args(args)), tuple(tangents))
    directional = sum(float(np.sum(e * t)) for e, t in zip(expected, (tangents[n] for n in argnums)))
    assert derivative == pytest.approx(directional, rel=1e-6, abs=1e-8), f"{name}: jvp"


@pytest.mark.parametrize("name", sorted(CASES))
def test_iteration(name):
    check_case(name, CASES)
