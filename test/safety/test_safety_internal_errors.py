"""Diagnostics instead of internal errors (issue 13, item 12): a misuse of
the Python API is a TypeError or ValueError raised by the call itself,
saying what is accepted; bad MLIR is one line `file:line:col: error: ...`
from ad-opt, ad-run and compile_module alike. Never a Python exception from
inside xDSL, a SyntaxError from generated code, or an AttributeError.

Before (r13_internal_errors/run.sh): `grad(f, argnums=())` raised
SyntaxError from a generated fast path, `argnums=(0, 0)` StopIteration,
`compile_module(12345)` AttributeError, binary input UnicodeDecodeError,
`arith.addf` on i32 "Unexpected attribute i32", an f32 literal overflow
"float too large to pack with f format", printf of a memref
"'MemRefType' object has no attribute 'width'". The MLIR-tool cases are
lit tests too (test/lit/safety/diagnostics.mlir).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import adpasses
from adpasses.native.llvm_jit import compile_module
from isolate import run_tool


def dot(x, y):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]
    return s


def scale3(a, b, c):
    return a * b * b + c


SCALE3_LINE = scale3.__code__.co_firstlineno
SMALL = "func.func @f(%x: f64) -> f64 {\n  %y = arith.mulf %x, %x : f64\n  func.return %y : f64\n}\n"


# -- grad / value_and_grad / inspect / cache_report: argnums ----------------------------


@pytest.mark.parametrize("api", [adpasses.grad, adpasses.value_and_grad])
@pytest.mark.parametrize("argnums", [(), []])
def test_empty_argnums(api, argnums) -> None:
    name = api.__name__
    with pytest.raises(ValueError, match=rf"^{name}\(scale3, argnums={re.escape(repr(argnums))}\): "
                                         r"argnums is empty; give the position of at least one"):
        api(scale3, argnums=argnums)


@pytest.mark.parametrize("argnums", ["a", 1.5, None, True, (0, "b"), (0, 1.0), np.bool_(False), {0}])
def test_argnums_of_the_wrong_type(argnums) -> None:
    bad = argnums[1] if isinstance(argnums, tuple) else argnums
    shown = f"{type(bad).__name__} {bad!r}"
    with pytest.raises(TypeError, match=r"argnums must be an int or a tuple of ints \(argument "
                                        rf"positions\), got {re.escape(shown)}$"):
        adpasses.grad(scale3, argnums=argnums)


@pytest.mark.parametrize("argnums", [3, -4, (0, 3)])
def test_argnums_out_of_range_names_the_parameters(argnums) -> None:
    bad = 3 if argnums in (3, (0, 3)) else -4
    with pytest.raises(ValueError) as info:
        adpasses.grad(scale3, argnums=argnums)
    assert str(info.value) == (
        f"grad(scale3, argnums={argnums!r}): there is no argument {bad}: scale3() (defined at "
        f"{__file__}:{SCALE3_LINE}) has 3 parameters (a, b, c); argnums must be from -3 to 2")


@pytest.mark.parametrize("argnums, twice", [((0, 0), "0 (a)"), ((1, -2), "1 (b)")])
def test_repeated_argnums(argnums, twice: str) -> None:
    with pytest.raises(ValueError, match=rf"names argument {re.escape(twice)} twice; list each "
                                         "argument once"):
        adpasses.grad(scale3, argnums=argnums)


def test_argnums_that_are_accepted_give_the_right_gradients() -> None:
    """The neighbours that must keep working: numpy ints, lists, negative
    positions; values against the hand derivation on random inputs."""
    rng = np.random.default_rng(7)
    a, b, c = (float(v) for v in rng.normal(size=3))
    da, db, dc = b * b, 2 * a * b, 1.0
    assert adpasses.grad(scale3, argnums=np.int64(1))(a, b, c) == pytest.approx(db, rel=1e-15)
    assert adpasses.grad(scale3, argnums=[0, 2])(a, b, c) == pytest.approx((da, dc), rel=1e-15)
    assert adpasses.grad(scale3, argnums=(-1, -3))(a, b, c) == pytest.approx((dc, da), rel=1e-15)
    value, g = adpasses.value_and_grad(scale3, argnums=(np.int32(0), 1))(a, b, c)
    assert value == pytest.approx(a * b * b + c, rel=1e-15) and g == pytest.approx((da, db), rel=1e-15)


def test_inspect_and_cache_report_check_argnums() -> None:
    x = np.ones(3)
    with pytest.raises(ValueError, match=r"^inspect\(dot, argnums=\(\)\): argnums is empty"):
        adpasses.inspect(dot, x, x, argnums=())
    with pytest.raises(TypeError, match=r"^cache_report\(dot, argnums='x'\): argnums must be an int"):
        adpasses.cache_report(dot, x, x, argnums="x")
    with pytest.raises(ValueError, match=r"^cache_report\(dot, argnums=2\): there is no argument 2"):
        adpasses.cache_report(dot, x, x, argnums=2)


# -- jit, autodiff: flags and functions ----------------------------------------------------


@pytest.mark.parametrize("option", ["boundscheck", "fastmath"])
@pytest.mark.parametrize("value", ["no", "False", 1, None])
def test_jit_flags_must_be_bools(option: str, value) -> None:
    """A string like "no" was taken as true: boundscheck silently on."""
    with pytest.raises(TypeError, match=rf"^jit\(\): {option} must be True or False, got "
                                        rf"{type(value).__name__} {re.escape(repr(value))}$"):
        adpasses.jit(dot, **{option: value})
    with pytest.raises(TypeError, match=rf"^jit\(\): {option} must be True or False"):
        adpasses.jit(**{option: value})


def test_jit_flags_accept_numpy_bools() -> None:
    f = adpasses.jit(scale3, boundscheck=np.bool_(False))
    assert f.boundscheck is False and f(2.0, 3.0, 1.0) == 19.0


def test_autodiff_return_primal_must_be_a_bool() -> None:
    x, dx = np.array([1.0, 2.0]), np.zeros(2)
    with pytest.raises(TypeError, match=r"^autodiff\(dot\): return_primal must be True or False, "
                                        r"got str 'yes'$"):
        adpasses.autodiff(dot, adpasses.Duplicated(x, dx), x, return_primal="yes")
    assert not dx.any()  # nothing ran
    # Unhashable values too (they cannot key the fast paths), before and
    # after a fast path for the same arguments exists.
    for warm in (False, True):
        if warm:
            adpasses.autodiff(dot, adpasses.Duplicated(x, dx), x)
            adpasses.autodiff(dot, adpasses.Duplicated(x, dx), x)
            dx[:] = 0.0
        for flag in ([True], {"a": 1}):
            with pytest.raises(TypeError, match=r"^autodiff\(dot\): return_primal must be True or "
                                                rf"False, got {type(flag).__name__} "):
                adpasses.autodiff(dot, adpasses.Duplicated(x, dx), x, return_primal=flag)
            assert not dx.any()


def test_functions_the_api_cannot_take() -> None:
    with pytest.raises(TypeError, match=r"needs a Python function, got builtin_function_or_method"):
        adpasses.jit(math.sin)
    jitted = adpasses.jit(dot)
    with pytest.raises(TypeError, match=r"^adpasses.jit: dot is already an adpasses.jit function"):
        adpasses.jit(jitted)
    with pytest.raises(TypeError, match=r"expected a Python function or an adpasses.jit function, got int"):
        adpasses.grad(12345)
    # A lambda defined in a file is compiled like a def (docs/frontend.md, "Lambdas").
    square = lambda v: v * v  # noqa: E731 - the case under test
    x = float(np.random.default_rng(7).uniform(-3, 3))
    assert adpasses.grad(square)(x) == pytest.approx(2 * x, rel=1e-15)


# -- compile_module ------------------------------------------------------------------------


@pytest.mark.parametrize("value, message", [
    (12345, r"takes an xDSL builtin.module \(ModuleOp\) or MLIR text \(str\), got int$"),
    (None, r"takes an xDSL builtin.module \(ModuleOp\) or MLIR text \(str\), got NoneType$"),
    (["func.func"], r"takes an xDSL builtin.module \(ModuleOp\) or MLIR text \(str\), got list$"),
    (SMALL.encode(), r"takes MLIR text as str, got bytes; decode it first"),
])
def test_compile_module_input_types(value, message: str) -> None:
    with pytest.raises(TypeError, match=rf"^compile_module\(\) {message}"):
        compile_module(value)


def test_compile_module_of_a_function_op_says_to_wrap_it() -> None:
    from adpasses.core.context import parse_module

    f = parse_module(SMALL).ops.first
    with pytest.raises(TypeError, match=r"got FuncOp \(a 'func.func' op: wrap it in a builtin.module\)$"):
        compile_module(f)


@pytest.mark.parametrize("options, error, message", [
    ({"opt_level": 7}, ValueError, r"opt_level must be from 0 to 3 \(LLVM's -O0 to -O3\), got 7$"),
    ({"opt_level": -1}, ValueError, r"opt_level must be from 0 to 3 \(LLVM's -O0 to -O3\), got -1$"),
    ({"opt_level": "3"}, TypeError, r"opt_level must be an int from 0 to 3, got str '3'$"),
    ({"opt_level": 2.0}, TypeError, r"opt_level must be an int from 0 to 3, got float 2.0$"),
    ({"boundscheck": "no"}, TypeError, r"boundscheck must be True or False, got str 'no'$"),
    ({"fastmath": 0}, TypeError, r"fastmath must be True or False, got int 0$"),
    ({"workspace": None}, TypeError, r"workspace must be True or False, got NoneType None$"),
    ({"binding": "fast"}, ValueError, r"binding must be 'auto', 'shim' or 'ctypes', got 'fast'$"),
])
def test_compile_module_options(options: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=rf"^(compile_module\(\): )?{message}"):
        compile_module(SMALL, **options)


def test_compile_module_accepts_each_valid_option() -> None:
    for level in range(4):
        f = compile_module(SMALL, opt_level=np.int64(level), boundscheck=np.bool_(True))["f"]
        assert f(1.5) == 2.25


@pytest.mark.parametrize("text, where, message", [
    ("func.func @f() {\n  %a = arith.constant 1 : i32\n  %b = arith.addf %a, %a : i32\n  func.return\n}\n",
     "3:3", "'arith.addf' works on floating-point values (f16, f32, f64, or vectors of them), not i32; "
            "for integers use arith.addi"),
    ("func.func @f() {\n  %a = arith.constant 1.0e50 : f32\n  func.return\n}\n",
     "2:23", "float literal 1.0e50 is out of range for f32 (largest finite value 3.40282347e+38); "
             "use a smaller value or f64"),
    ("func.func @f() {\n  %a = arith.constant 2.5 : f80\n  func.return\n}\n",
     "2:23", "f80 literals are not supported (xDSL 0.74 can neither print nor compile them); use f64"),
    ("func.func @f(%x: i64) -> i64 {\n  %y = \"arith.mulf\"(%x, %x) : (i64, i64) -> i64\n"
     "  func.return %y : i64\n}\n",
     "2:3", "'arith.mulf' works on floating-point values (f16, f32, f64, or vectors of them), not i64; "
            "for integers use arith.muli"),
    ("func.func @f() {\n  %c = arith.constant 1 : index\n  %x = memref.alloc(%c) : memref<?xf64>\n"
     "  printf.print_format \"{}\", %x : memref<?xf64>\n  func.return\n}\n",
     "4:3", "'printf.print_format': cannot print value 1 of type memref<?xf64>: it prints floats "
            "(f16, f32, f64), integers of up to 64 bits and index; print its elements, loaded with "
            "memref.load"),
])
def test_compile_module_bad_mlir_is_a_located_compile_error(text: str, where: str, message: str) -> None:
    with pytest.raises(adpasses.CompileError) as info:
        compile_module(text)
    assert str(info.value) == f"<compile_module>:{where}: error: {message}"


# -- the MLIR tools ----------------------------------------------------------------------


def test_binary_input_to_both_tools(tmp_path) -> None:
    """A non-UTF-8 byte at line 2: its line and column, for both tools."""
    path = tmp_path / "garbage.mlir"
    path.write_bytes(b"func.func @main() {\n  %a = \xff\xfe arith.constant 1 : i32\n}\n")
    for tool in ("ad-opt", "ad-run"):
        r = run_tool(tool, str(path))
        assert r.returncode == 1 and r.stdout == "", str(r)
        assert r.stderr == (f"{path}:2:8: error: the input is not UTF-8 text (byte 0xff cannot be "
                            "decoded; is it a binary file?): MLIR input must be UTF-8 text\n"), str(r)


def test_ad_opt_labels_a_crash_of_its_own_as_an_internal_error() -> None:
    """An exception that is not about the input (here, one raised on
    purpose inside a pass) is reported as an internal error to report, on
    one line, not as if the input were wrong."""
    from adpasses.tools.ad_opt import _diagnostic

    assert _diagnostic(AttributeError("'NoneType' object has no attribute 'x'")) == (
        "error: internal error (AttributeError: 'NoneType' object has no attribute 'x'); please "
        "report it with the input and the output of --debug")
    assert _diagnostic(ValueError("Unrecognized passes: ['nosuchpass']")) == (
        "error: Unrecognized passes: ['nosuchpass']")
