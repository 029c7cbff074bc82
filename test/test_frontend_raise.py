"""raise and assert in compiled code (frontend/effects.py, ad.raise_if,
lowered through the error slot): the Python exception class,
message and location, under jit, grad and jvp (the forward sweep raises);
the rest of the code after a raise is not run; local arrays are freed."""

from __future__ import annotations

import inspect
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import adpasses
import raise_kernels as rk
from finite_diff import assert_matches, finite_differences

PATH = inspect.getsourcefile(rk)
LINES = open(PATH).read().splitlines()


def at(tag: str) -> str:
    k = next(k for k, text in enumerate(LINES) if text.endswith(f"# RAISE: {tag}") or
             text.endswith(f"# ERROR: {tag}"))
    col = len(LINES[k]) - len(LINES[k].lstrip()) + 1
    return f"{PATH}:{k + 1}:{col}"


X = np.array([1.0, -2.0, 3.0])
CASES = [
    # (kernel, arguments, exception, message, tag)
    ("checked_norm", (X, -1.0), AssertionError, "radius must be positive", "radius"),
    ("checked_norm", (np.zeros(0), 1.0), ValueError, "empty input", "empty"),
    ("checked_norm", (np.array([1.0, -20.0]), 1.0), RuntimeError, "value too small", "small"),
    ("checked_norm", (np.array([1e4]), 1.0), ArithmeticError, "", "overflow"),
    ("sign_or_raise", (0.0,), ValueError, "zero has no sign", "zero"),
    ("bare_assert", (math.nan,), AssertionError, "assert x == x", "bare"),
    ("braces_message", (1.0,), ValueError, "bad {0} {1:shape2} {x}\nsecond line", "braces"),
    ("braces_message", (12.0,), AssertionError, "x < {10} }{ {{0}}", "braces_assert"),
]


def call(mode, fn, args):
    if mode == "jit":
        return adpasses.jit(fn)(*args)
    if mode == "grad":
        return adpasses.grad(fn)(*args)
    tangent = np.ones_like(args[0]) if isinstance(args[0], np.ndarray) else 1.0
    return adpasses.jvp(fn, args, (tangent,) + (None,) * (len(args) - 1))


@pytest.mark.parametrize("mode", ["jit", "grad", "jvp"])
@pytest.mark.parametrize("name,args,exc,message,tag", CASES, ids=[c[4] for c in CASES])
def test_raises_the_python_exception_with_its_location(mode, name, args, exc, message, tag):
    fn = getattr(rk, name)
    with pytest.raises(exc) as python:
        fn(*args)
    assert type(python.value) is exc
    with pytest.raises(exc) as compiled:
        call(mode, fn, args)
    assert type(compiled.value) is exc
    assert str(compiled.value) == f"{message} (at {at(tag)})"


@pytest.mark.parametrize("name,args", [("checked_norm", (X, 2.0)), ("sign_or_raise", (-1.5,)),
                                       ("sign_or_raise", (0.7,))])
def test_values_and_derivatives_where_nothing_raises(name, args):
    fn = getattr(rk, name)
    assert adpasses.jit(fn)(*args) == pytest.approx(fn(*args), rel=1e-14)
    g = adpasses.grad(fn)(*args)
    assert_matches(g, finite_differences(fn, list(args), (0,))[0], what=name)
    t = np.linspace(0.5, 1.5, X.size) if isinstance(args[0], np.ndarray) else 1.0
    _, tangent = adpasses.jvp(fn, args, (t,) + (None,) * (len(args) - 1))
    fd = finite_differences(fn, list(args), (0,))[0]
    assert_matches(tangent, float(np.sum(fd * t)), what=f"{name} jvp")


def test_a_callee_raises_through_its_caller_and_earlier_writes_stay():
    x, out = np.array([1.0, 2.0, 6.0, 3.0]), np.zeros(4)
    with pytest.raises(OverflowError) as err:
        adpasses.jit(rk.writes_then_raises)(x, out)
    assert str(err.value) == f"helper got a large value (at {at('helper')})"
    assert list(out) == [1.0, 4.0, 0.0, 0.0]  # written before the raise, as Python does
    assert adpasses.jit(rk.writes_then_raises)(x[:2], out) == 1.0


def test_boundscheck_false_keeps_raises():
    with pytest.raises(ValueError, match="zero has no sign"):
        adpasses.jit(rk.sign_or_raise, boundscheck=False)(0.0)


@pytest.mark.parametrize("name,message", [
    ("non_builtin", "compiled code can raise the builtin exception classes (ValueError, RuntimeError, "
                    "ArithmeticError, ...) with a constant message: raise ValueError(\"...\")"),
    ("formatted", "the message of a raise or assert in compiled code must be a constant string (values "
                  "in it are not supported: print them before raising)"),
    ("bare_raise", "a bare raise re-raises the exception being handled, and compiled code handles none; "
                   "raise an exception: raise ValueError(\"...\")"),
])
def test_unsupported_raises_are_compile_errors(name, message):
    fn = {"non_builtin": rk.raises_non_builtin, "formatted": rk.formatted_message,
          "bare_raise": rk.bare_raise}[name]
    with pytest.raises(adpasses.CompileError) as err:
        adpasses.jit(fn)(1.0)
    text = str(err.value)
    line = at(name).rsplit(":", 1)[0]
    assert text.startswith(line + ":"), text
    assert text.split(": error: ", 1)[1].splitlines()[0] == message


def test_a_stop_frees_the_local_arrays_it_leaves(tmp_path):
    """20,000 calls that raise (or index out of bounds) with 12 KB of local
    arrays live, under jit and grad: the process does not grow (it grew by
    ~150-300 MiB when a stop returned without freeing them)."""
    script = f"""
import sys, numpy as np
sys.path.insert(0, {os.path.dirname(__file__)!r})
import adpasses, raise_kernels as rk
def rss(): return int(open('/proc/self/statm').read().split()[1]) * 4096 / 2**20
for f in (adpasses.jit(rk.local_arrays_then_raise), adpasses.grad(rk.local_arrays_then_raise)):
    for k in range(20000 + 1):
        if k == 1000: start = rss()
        try: f(np.ones(10), 3.0)
        except ValueError: pass
    print(rss() - start)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    growth = [float(v) for v in out.stdout.split()]
    assert len(growth) == 2 and max(growth) < 20, growth


def test_a_stop_frees_the_arrays_the_function_would_have_returned():
    """A local array the function returns (`return y`, `return y, z`), and
    a buffer a callee handed over, are the function's until the return
    runs; a stop before it (raise, IndexError, in the function or in a
    callee) leaked them: 1.6 MB a call here, 320-640 MB over the 200 calls
    (the lowering's `live_buffers` counted only arrays a memref.dealloc
    frees later). Under jit, grad and vjp."""
    script = f"""
import sys, numpy as np
sys.path.insert(0, {os.path.dirname(__file__)!r})
import adpasses, raise_kernels as rk
def rss(): return int(open('/proc/self/statm').read().split()[1]) * 4096 / 2**20
x = np.ones(10)
calls = [
    lambda: adpasses.jit(rk.returned_array_then_raise)(x, 3.0),
    lambda: adpasses.jit(rk.returned_pair_then_index)(x, 200000),
    lambda: adpasses.jit(rk.callee_arrays_then_raise)(x, 3.0),
    lambda: adpasses.vjp(rk.returned_array_then_raise)(x, 3.0),
    lambda: adpasses.grad(rk.callee_arrays_then_raise)(x, 3.0),
]
for f in calls:
    for k in range(220):
        if k == 20: start = rss()
        try: f()
        except (ValueError, IndexError): pass
    print(rss() - start)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    growth = [float(v) for v in out.stdout.split()]
    assert len(growth) == 5 and max(growth) < 20, growth
