"""Every error a user of the Python API can hit: a clear message naming the
construct (and what to use instead), at the right `file:line`, never a
traceback from inside xDSL. Expected lines come from the `# ERROR` markers
in frontend_bad.py, not from hard-coded numbers."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import adpasses
import frontend_bad as bad


def marked_line(fn) -> int:
    """The line of `fn`'s source carrying the `# ERROR` marker."""
    fn = getattr(fn, "__wrapped__", fn)
    lines, first = inspect.getsourcelines(fn)
    for k, text in enumerate(lines):
        if "# ERROR" in text:
            return first + k
    raise AssertionError(f"no # ERROR marker in {fn.__name__}")


X = np.ones(3)

CASES = [
    # (function, arguments, message, remedy)
    ("uses_list", [1.0], "list expressions are not supported", "numpy array"),
    ("uses_dict", [1.0], "dict expressions are not supported", "arguments"),
    ("uses_string", [1.0], "str constants are not supported", "print(...) and in raise/assert messages"),
    ("uses_complex", [1.0], "complex numbers are not supported in compiled code",
     "real and imaginary parts as two floats"),
    ("uses_try", [1.0], "try statements are not supported", "cannot be caught"),
    ("uses_with", [1.0], "with statements are not supported", ""),
    ("uses_lambda", [1.0], "a lambda defined inside a function cannot be passed to another function",
     "module level"),
    ("uses_comprehension", [X], "sum() is not supported in compiled code", "accumulate in a loop"),
    ("list_comprehension", [X], "list comprehensions are not supported", "write a for loop"),
    # the construct as it is written, not the AST's class name ("functiondef statements")
    ("nested_def", [1.0], "nested def statements are not supported", "define the function at module level"),
    ("generator", [1.0], "yield expressions (generators) are not supported", "return one number"),
    ("generator_from", [1.0], "yield from expressions (generators) are not supported", "return one number"),
    ("walrus", [1.0], "assignment expressions (:=) are not supported", "separate statement"),
    ("coroutine", [1.0], "coroutine is an async def (a coroutine function)", "define it with def"),
    ("recursive", [3], "recursion (recursive -> recursive) is not supported", "loop"),
    ("ping", [3], "recursion (ping -> pong -> ping) is not supported", "loop"),
    ("global_list", [1.0], "global 'TABLE' of type list cannot be read", "pass it as an argument"),
    ("unknown_function", [1.0], "os.getpid (builtin_function_or_method) cannot be compiled",
     "call it outside and pass the result as an argument"),
    ("numpy_reduction", [X], "np.median on arrays is not supported", "write a loop over the elements"),
    ("calls_input", [X], "the builtin input() is not supported in compiled code",
     "the builtins it supports are"),
    ("array_arithmetic", [X, X], "the truth value of an array is ambiguous", "np.logical_not(x)"),
    ("returns_nested_tuple", [X], "a returned tuple may hold only numbers and arrays", "return a, b, c"),
    ("returns_one_tuple", [X], "returning a tuple of fewer than two values is not supported",
     "return the value itself"),
    ("return_in_loop_else", [X], "return in the else clause of a loop is not supported", "after the loop"),
    ("iterates_shape", [X], "a for loop iterates over range(...), an array", "'x.shape' is not one of those"),
    ("unpacks_too_many", [X], "cannot unpack 2 items into 3 loop variables", ""),
    ("float_range", [X], "a float cannot be used as an integer here", "int(...)"),
    ("assigns_tuple_to_slice", [X], "only a number or an array can be assigned to a slice", ""),
    ("undefined_name", [X], "name 't' is not defined here", "assign it before"),
    ("bad_attribute", [X], "array attribute .dtype is not supported", ".shape"),
    ("float_index", [X], "array indices must be integers", ""),
    ("uses_varargs", [1.0], "only plain parameters are supported (no *args", "with defaults"),
]


# errors reported in another function than the one called
MARKED_ELSEWHERE = {"ping": "pong"}  # the call closing the cycle is in pong


@pytest.mark.parametrize("name,args,message,remedy", CASES, ids=[c[0] for c in CASES])
def test_compile_error_names_construct_line_and_remedy(name, args, message, remedy):
    fn = getattr(bad, name)
    with pytest.raises(adpasses.CompileError) as info:
        adpasses.jit(fn)(*args)
    text = str(info.value)
    assert message in text and remedy in text
    where = getattr(bad, MARKED_ELSEWHERE.get(name, name))
    assert text.startswith(f"{bad.__file__}:{marked_line(where)}:")
    assert "xdsl" not in text.lower()


def test_closure_over_mutable_state():
    with pytest.raises(adpasses.CompileError, match="closure variable 'data' of type list"):
        adpasses.jit(bad.closure_bad)(1.0)


def test_out_of_bounds_index_raises_index_error_with_line():
    f = adpasses.jit(bad.indexes_out_of_bounds)
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 0 with size 3") as info:
        f(np.ones(3))
    assert f"{bad.__file__}:{marked_line(bad.indexes_out_of_bounds)}:" in str(info.value)


def test_out_of_bounds_in_gradient_also_raises():
    with pytest.raises(IndexError, match="out of bounds"):
        adpasses.grad(bad.indexes_out_of_bounds)(np.ones(4))


def test_boundscheck_false_removes_the_check():
    # reading one past the end of a slice of a larger buffer is in bounds of
    # the memory, so it runs (and gives the element after the view)
    f = adpasses.jit(boundscheck=False)(bad.indexes_out_of_bounds)
    base = np.arange(6.0)
    assert f(base[:3]) == 0.0 + 1.0 + 2.0 + 3.0


@pytest.mark.parametrize("args,exc,message", [
    (("a",), TypeError, "argument 0 ('x') has type str"),
    (([1.0, 2.0],), TypeError, "argument 0 ('x') has type list"),
    ((np.ones(3, dtype=np.complex128),), TypeError, "dtype complex128 are not supported"),
    ((np.ones(3), 2.0), TypeError, "indexes_out_of_bounds() takes 1 positional argument but 2 were given"),
])
def test_wrong_argument_types_name_the_argument(args, exc, message):
    f = adpasses.jit(bad.indexes_out_of_bounds)
    with pytest.raises(exc, match=message.replace("(", r"\(").replace(")", r"\)")):
        f(*args)


def test_grad_of_function_returning_nothing_points_to_autodiff():
    with pytest.raises(TypeError, match=r"use adpasses\.autodiff\(f, \.\.\., Duplicated\(out, seed_array\)\)"):
        adpasses.grad(bad.writes_output)(np.ones(3), np.zeros(3))


def test_grad_of_integer_argument():
    with pytest.raises(TypeError, match="cannot be differentiated"):
        adpasses.grad(bad.recursive)(3)


def test_const_array_receiving_derivatives_in_autodiff():
    with pytest.raises(adpasses.CompileError, match="which is const; declare it dup") as info:
        adpasses.autodiff(bad.scratch_argument, adpasses.Duplicated(np.ones(3), np.zeros(3)), np.zeros(3))
    assert str(info.value).startswith(f"{bad.__file__}:{marked_line(bad.scratch_argument)}:")
    # grad gives such an array a throwaway shadow instead
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(adpasses.grad(bad.scratch_argument)(x, np.zeros(3)), 2 * x)


def test_shadow_shape_mismatch():
    with pytest.raises(ValueError, match="must match the array"):
        adpasses.autodiff(bad.writes_output, adpasses.Duplicated(np.ones(3), np.zeros(4)),
                          adpasses.Duplicated(np.zeros(3), np.zeros(3)))


def test_read_only_output_array():
    out = np.zeros(3)
    out.setflags(write=False)
    with pytest.raises(ValueError, match=r"argument 1 \('out'\) is read-only"):
        adpasses.jit(bad.writes_output)(np.ones(3), out)


def test_integer_division_by_zero():
    @adpasses.jit
    def divide(a, b):
        return a // b

    with pytest.raises(ZeroDivisionError, match="integer division or modulo by zero"):
        divide(7, 0)
    assert divide(-7, 2) == -4


def test_internal_errors_become_compile_errors_at_the_construct(monkeypatch):
    """A bug in the frontend (simulated) still reaches the user as a
    CompileError at the Python line, with the original as its cause."""
    from adpasses.frontend.compiler import FunctionCompiler

    def broken(self, a, node):
        raise AttributeError("simulated")

    monkeypatch.setattr(FunctionCompiler, "negate", broken)
    with pytest.raises(adpasses.CompileError, match=r"internal error while compiling this \(AttributeError: simulated\)") as info:
        adpasses.jit(bad.negates)(1.0)
    assert str(info.value).startswith(f"{bad.__file__}:{marked_line(bad.negates)}:")
    assert isinstance(info.value.__cause__, AttributeError)


def test_range_with_a_zero_step_at_run_time_is_pythons_value_error():
    """A step known only when called: ValueError with Python's message at
    the range (it was ZeroDivisionError, from the trip count's division)."""
    x = np.arange(5.0)
    with pytest.raises(ValueError, match="range\\(\\) arg 3 must not be zero") as python:
        bad.strided_sum(x, 0)
    for call in (adpasses.jit(bad.strided_sum), adpasses.grad(bad.strided_sum)):
        with pytest.raises(ValueError) as info:
            call(x, 0)
        assert str(info.value).startswith(str(python.value))
        assert f"{bad.__file__}:{marked_line(bad.strided_sum)}:" in str(info.value)
    for k in (1, 2, 7, -1, -2):
        assert adpasses.jit(bad.strided_sum)(x, k) == bad.strided_sum(x, k)
    np.testing.assert_array_equal(adpasses.grad(bad.strided_sum)(x, 2), [1, 0, 1, 0, 1])
