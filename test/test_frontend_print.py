"""print() in compiled code (frontend/effects.py; printf.print_format with
ad.python_print, lowered to a call of the runtime's Python callback,
adpasses/native/python_print.py): the same text as Python's print, in
order with Python's own output, once per call under jit, grad (forward
sweep) and jvp; derivatives unchanged by it."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses
import print_kernels as pk
from finite_diff import assert_matches, finite_differences

A = np.array([0.1, 2.0, 1e20, -3.5])
M = np.arange(6.0).reshape(2, 3)


def python_text(capfd, fn, *args):
    result = fn(*args)
    return result, capfd.readouterr().out


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_jit_prints_what_python_prints(capfd, dtype):
    a = A if dtype == np.float64 else np.array([1, 20, -3, 40], dtype=dtype)
    args = (0.1, a, M.astype(dtype))
    expected, text = python_text(capfd, pk.report, *args)
    got = adpasses.jit(pk.report)(*args)
    assert capfd.readouterr().out == text
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("x", [np.array([0.1, 3.0], dtype=np.float32), np.array([True, False]),
                               np.array([[1, -2], [3, 4]], dtype=np.int32)[:, ::-1],
                               np.arange(12.0).reshape(3, 4)[::-1, 1::2]])
def test_elements_and_views_of_every_dtype_print_as_numpy_prints_them(capfd, x):
    """float32 elements print as np.float32 does (0.1, not 0.10000000149011612);
    strided and reversed views as the view."""
    fn = pk.elements if x.ndim == 1 else pk.elements_2d
    expected, text = python_text(capfd, fn, x, 3)
    got = adpasses.jit(fn)(x, 3)
    assert capfd.readouterr().out == text
    assert got == expected


def test_output_interleaves_with_pythons_own(capfd):
    f = adpasses.jit(pk.calls_a_printing_function)
    print("before")
    f(1.5)
    print("between", flush=False)
    f(0.5)
    print("after")
    out = capfd.readouterr().out
    assert out == ("before\ncallee 1.5\ncallee 3.0\ncaller 11.25\nbetween\n"
                   "callee 0.5\ncallee 1.0\ncaller 1.25\nafter\n")


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_derivatives_print_once_per_call_in_the_forward_sweep(capfd, mode):
    x = 0.7
    _, text = python_text(capfd, pk.calls_a_printing_function, x)
    if mode == "grad":
        d = adpasses.grad(pk.calls_a_printing_function)(x)
    else:
        _, d = adpasses.jvp(pk.calls_a_printing_function, (x,), (1.0,))
    assert capfd.readouterr().out == text
    assert_matches(d, finite_differences(pk.calls_a_printing_function, [x], (0,))[0])


def test_printing_arrays_does_not_change_gradients(capfd):
    x, a = 0.3, np.array([0.5, -1.0, 2.0, 0.25])
    _, text = python_text(capfd, pk.report, x, a, M)
    dx, da = adpasses.grad(pk.report, argnums=(0, 1))(x, a, M)
    assert capfd.readouterr().out == text
    fx, fa = finite_differences(pk.report, [x, a, M], (0, 1))
    assert_matches(dx, fx)
    assert_matches(da, fa)


@pytest.mark.parametrize("source,message", [
    ("print(x, file=None)", "print() in compiled code takes sep= and end=, not file= (it writes to sys.stdout)"),
    ("print('{}', x)", "printing text that contains {} is not supported in compiled code; print its parts "
                       "separately"),
    ("print(None)", "printing None is not supported in compiled code; print a string"),
])
def test_unsupported_prints_are_compile_errors(tmp_path, monkeypatch, source, message):
    module = tmp_path / "bad_print.py"
    module.write_text(f"def f(x):\n    {source}\n    return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    bad = importlib.import_module("bad_print")
    with pytest.raises(adpasses.CompileError) as err:
        adpasses.jit(bad.f)(1.0)
    text = str(err.value)
    assert text.startswith(f"{module}:2:"), text
    assert text.split(": error: ", 1)[1].splitlines()[0] == message
    del __import__("sys").modules["bad_print"]


def test_fstring_fields_format_as_python_does(capfd):
    """F12: f"{x32[0]}" is format(np.float32, ""), 0.10000000149011612 in
    numpy 2; print(x32[0]) is str, 0.1. Both as Python prints them."""
    args = (np.array([0.1, 0.7], dtype=np.float32), np.array([0.1, 1 / 3]), 3)
    expected, text = python_text(capfd, pk.formats_fields, *args)
    got = adpasses.jit(pk.formats_fields)(*args)
    assert capfd.readouterr().out == text
    assert got == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("mode", ["jit", "grad"])
def test_repr_of_numpy_scalars_and_python_numbers_as_python_prints_them(capfd, mode):
    args = (np.array([0.1, 0.2]), np.array([3, -4]), np.array([True, False]), 0.5)
    _, text = python_text(capfd, pk.numpy_reprs, *args)
    assert "np.float64(0.1) 0.1 0.5 np.float64(0.2)" in text  # what is compared: Python's own
    (adpasses.jit if mode == "jit" else adpasses.grad)(pk.numpy_reprs)(*args)
    assert capfd.readouterr().out == text


@pytest.mark.parametrize("mode", ["jit", "grad"])
@pytest.mark.parametrize("ints", [np.array([70000, 80000, -9], dtype=np.int32),
                                  np.array([70000, 80000, -9], dtype=np.int64)])
def test_repr_follows_loops_calls_and_int32_as_python_prints_them(capfd, mode, ints):
    """Carried values (np.float64 after `s = s + x[i]`, a Python float for
    `w = w * 2.0`, a Python int counter), results of calls (np.float64 from
    an element, a Python float from a Python float, np.int32/np.int64 from
    an element plus 1), np.int32 elements and their wrapping products
    (70000 * 80000 is 1305032704 in int32), repr() and str(): the text of
    Python's own run of the function."""
    import warnings

    args = (np.array([0.1, 0.2, 0.3]), ints, 2.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's int32 overflow warning
        _, text = python_text(capfd, pk.followed_reprs, *args)
    if ints.dtype == np.int32:
        assert "np.int32(1305032704)" in text and "np.float64(2.6" in text  # what is compared
    got = (adpasses.jit if mode == "jit" else adpasses.grad)(pk.followed_reprs)(*args)
    assert capfd.readouterr().out == text
    if mode == "grad":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            assert_matches(got, finite_differences(pk.followed_reprs, list(args), (0,))[0])
