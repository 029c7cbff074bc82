"""Calls between compiled functions (frontend/calls.py, compiler.py):
keywords and omitted defaults, None defaults decided while compiling
(`if radius is None:`), functions passed as arguments, calls through a
user's module, lambdas bound to local and global names. Values against
plain Python; reverse (`adpasses.grad`) and forward (`adpasses.jvp`)
derivatives against central finite differences on random inputs."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import adpasses
import calls_kernels as ck
from finite_diff import assert_matches, finite_differences

KERNELS = ["keywords_and_defaults", "none_defaults", "none_in_conditions", "functions_as_arguments",
           "through_module", "lambdas", "calls_fill"]
rng = np.random.default_rng(16)


def inputs():
    return rng.uniform(0.2, 1.5, 3) * rng.choice([-1.0, 1.0], 3), float(rng.uniform(0.3, 1.7))


@pytest.mark.parametrize("name", KERNELS)
def test_values_match_python(name):
    fn = getattr(ck, name)
    for _ in range(3):
        x, g = inputs()
        assert adpasses.jit(fn)(x, g) == pytest.approx(fn(x, g), rel=1e-13, abs=1e-13)


@pytest.mark.parametrize("name", KERNELS)
def test_reverse_derivatives_match_finite_differences(name):
    fn = getattr(ck, name)
    for _ in range(2):
        x, g = inputs()
        dx, dg = adpasses.grad(fn, argnums=(0, 1))(x, g)
        fx, fg = finite_differences(fn, [x, g], (0, 1))
        assert_matches(dx, fx, what=f"{name} d/dx")
        assert_matches(dg, fg, what=f"{name} d/dg")


@pytest.mark.parametrize("name", KERNELS)
def test_forward_derivatives_match_finite_differences(name):
    fn = getattr(ck, name)
    x, g = inputs()
    tx, tg = rng.standard_normal(3), float(rng.standard_normal())
    value, tangent = adpasses.jvp(fn, (x, g), (tx, tg))
    fx, fg = finite_differences(fn, [x, g], (0, 1))
    assert value == pytest.approx(fn(x, g), rel=1e-13)
    assert_matches(tangent, float(fx @ tx + fg * tg), what=f"{name} jvp")


def test_a_none_argument_compiles_its_own_version_without_the_untaken_branch():
    """energy(x) and energy(x, radius=r) are two compiled callees; the one
    with radius None has no division (the branch that divides by radius is
    not compiled)."""
    from adpasses.frontend import ArrayArg, ScalarArg, build_module

    module, _ = build_module(ck.none_defaults, [ArrayArg("float64", 1, True), ScalarArg("float")])
    text = str(module)
    callees = [line for line in text.splitlines() if "func.func private @energy" in line]
    assert len(callees) == 2, text
    assert text.count("arith.divf") == 1, text  # s / radius, in the version with a radius


def marked(fn_name: str) -> str:
    path = inspect.getsourcefile(ck)
    lines = open(path).read().splitlines()
    line = next(k + 1 for k, text in enumerate(lines) if f"# ERROR: {fn_name}" in text)
    return f"{path}:{line}:"


@pytest.mark.parametrize("name,args,message", [
    ("recursive_lambda", [3.0], "recursion through a lambda is not supported; rewrite it as a loop"),
    ("is_between_numbers", [1.0, 2.0], "`is` compares objects; compare numbers with == or !="),
    ("none_used_as_number", [1.0], "'r' is None here, not a number (a None argument or default is known "
                                   "when the function is compiled: test it with `if ... is None:` before "
                                   "using it)"),
])
def test_errors_point_at_the_construct(name, args, message):
    fn = getattr(ck, "calls_" + name, getattr(ck, name))
    with pytest.raises(adpasses.CompileError) as err:
        adpasses.jit(fn)(*args)
    text = str(err.value)
    assert text.startswith(marked(name)), text
    assert text.split(": error: ", 1)[1].splitlines()[0] == message


def test_a_local_lambda_cannot_leave_its_function():
    with pytest.raises(adpasses.CompileError) as err:
        adpasses.jit(ck.passes_local_lambda)(1.0)
    assert "a lambda defined inside a function cannot be passed to another function; define it at module " \
           "level (name = lambda ...) or with def" in str(err.value)


def test_a_global_lambda_is_compiled_like_a_def():
    assert adpasses.jit(ck.square)(3.0) == 9.0
    assert adpasses.grad(ck.scale_by)(1.5, 4.0) == 4.0
    assert adpasses.grad(ck.scale_by)(1.5) == 2.0
