"""Integer conversions and literals (issue 13, item 9): no silent garbage.

- int(x) of a float: NaN is ValueError, infinities and values outside int64
  are OverflowError, as in Python, with the source location (LLVM's fptosi
  makes poison of them: int(nan) used to be -2**63).
- x ** n with an int exponent: n is 64-bit (an i32 cast truncated 2**32 + 1
  to 1), and |n| > 64 computes pow(x, float(n)) as Python does.
- integer literals that do not fit their type are compile errors with a
  location: MLIR index literals (2**64 was 0), Python ints beyond int64.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from isolate import run_tool

import adpasses
import gencode_kernels as K
from adpasses.core.diagnostics import CompileError
from adpasses.native.llvm_jit import compile_module
from finite_diff import assert_matches, finite_differences

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gencode_kernels.py")


def _where(text: str) -> str:
    with open(KERNELS) as f:
        for k, line in enumerate(f, 1):
            if text in line:
                return rf"\(at .*gencode_kernels\.py:{k}:\d+\)"
    raise AssertionError(text)


# -- int() of a float ---------------------------------------------------------------------


@pytest.mark.parametrize("value,error,message", [
    (float("nan"), ValueError, "cannot convert float NaN to integer"),
    (float("inf"), OverflowError, "cannot convert float infinity to integer"),
    (float("-inf"), OverflowError, "cannot convert float infinity to integer"),
    (1e300, OverflowError, r"int\(1e\+300\) does not fit in a signed 64-bit integer"),
    (-1e19, OverflowError, r"int\(-1e\+19\) does not fit"),
    (2.0**63, OverflowError, r"int\(9.223372036854776e\+18\) does not fit"),
])
def test_int_of_a_float_that_has_no_int64_raises_like_python(value: float, error: type, message: str) -> None:
    with pytest.raises(error) as python:
        int(value) if value != value or abs(value) == math.inf else (_ for _ in ()).throw(error())
    assert python.type is error
    with pytest.raises(error, match=message + ".*" + _where("return int(v)")):
        K.to_int(value)
    with pytest.raises(error, match=_where("return math.floor(v)")):
        K.floor_int(value)


def test_int_of_floats_in_range_is_exact() -> None:
    edges = [-2.0**63, 2.0**63 - 1024, -(2.0**63) + 1024, -0.999, 0.999, -0.0, 4.5, -4.5,
             2.0**53 + 2, -(2.0**53) - 2]
    rng = np.random.default_rng(7)
    values = edges + list(rng.uniform(-1e18, 1e18, 200)) + list(rng.normal(0, 10, 200))
    for v in values:
        assert K.to_int(float(v)) == int(v), v
        assert K.floor_int(float(v)) == math.floor(v), v


def test_int_check_runs_inside_loops_and_names_the_line() -> None:
    x = np.array([1.5, 2.5, np.nan, 4.0])
    with pytest.raises(ValueError, match="NaN.*" + _where("s += int(x[i])")):
        K.sum_ints(x)
    assert K.sum_ints(np.array([1.5, -2.5, 3.9])) == 1 - 2 + 3


def test_without_checks_the_conversion_is_not_checked_but_does_not_crash() -> None:
    """boundscheck=False gives up this check (docs/safety.md): the value of
    int(nan) is then unspecified, but the call returns."""
    assert isinstance(K.to_int_unchecked(float("nan")), int)
    assert K.to_int_unchecked(-3.7) == -3


def test_checked_and_unchecked_conversions_agree_in_range() -> None:
    """The int()-heavy loop whose check cost docs/safety.md reports: both
    builds compute Python's sum on values in range."""
    x = np.random.default_rng(0).uniform(-1e6, 1e6, 20_000)
    assert K.sum_ints(x) == K.sum_ints_unchecked(x) == sum(int(v) for v in x)


MLIR_CONVERT = """func.func @main() {{
  %x = arith.constant {value} : f64
  %i = arith.{op} %x : f64 to {to}
  printf.print_format "{{}}\\n", %i : {to}
  func.return
}}
"""


@pytest.mark.parametrize("op,value,to,error", [
    ("fptosi", "0x7FF8000000000000", "i64", "ValueError: cannot convert float NaN to integer"),
    ("fptosi", "3.0e9", "i32", "OverflowError: int(3000000000.0) does not fit in a signed 32-bit integer"),
    ("fptosi", "-2147483649.0", "i32", "OverflowError: int(-2147483649.0) does not fit"),
    ("fptoui", "-1.0", "i64", "OverflowError: int(-1.0) does not fit in an unsigned 64-bit integer"),
    ("fptoui", "256.0", "i8", "OverflowError: int(256.0) does not fit in an unsigned 8-bit integer"),
])
def test_ad_run_checks_conversions(tmp_path, op: str, value: str, to: str, error: str) -> None:
    path = tmp_path / "convert.mlir"
    path.write_text(MLIR_CONVERT.format(op=op, value=value, to=to))
    r = run_tool("ad-run", str(path))
    assert r.returncode == 1, str(r)
    assert r.stderr.strip() == f"{path}:3:3: error: {error}" or \
        r.stderr.strip().startswith(f"{path}:3:3: error: {error}"), r.stderr


@pytest.mark.parametrize("op,value,to,printed", [
    ("fptosi", "-2147483648.9", "i32", "-2147483648"),
    ("fptosi", "2147483647.9", "i32", "2147483647"),
    ("fptoui", "-0.9", "i64", "0"),
    ("fptoui", "255.5", "i8", "-1"),  # i8 255 prints as a signed byte
])
def test_ad_run_conversions_at_the_edges(tmp_path, op: str, value: str, to: str, printed: str) -> None:
    path = tmp_path / "convert.mlir"
    path.write_text(MLIR_CONVERT.format(op=op, value=value, to=to))
    r = run_tool("ad-run", str(path))
    assert r.returncode == 0 and r.stdout.strip() == printed, str(r)


# -- powers with int exponents ------------------------------------------------------------------


@pytest.mark.parametrize("x,n", [
    (1.0000001, 2**32 + 1), (1.0000001, -(2**32 + 1)), (-1.0, 2**63 - 1), (-1.0, -2**63),
    (2.0, -2**63), (0.5, 2**40), (-1.5, 65), (1.01, -65), (1.5, 3), (2.0, -3), (-1.5, 0), (0.0, 0),
    (0.0, -1), (3.0, 2**31), (1.0 + 2**-40, 2**33),
])
def test_float_to_an_int_power(x: float, n: int) -> None:
    """Exponents beyond i32 are not truncated; beyond 64 the result is
    Python's pow(x, float(n)) bit for bit (squaring would lose n ulps)."""
    got = K.big_pow(x, n)
    if x == 0.0 and n < 0:
        assert got == math.inf
        return
    try:
        expected = x ** n
    except OverflowError:  # Python raises where IEEE (numpy, compiled code) gives inf
        expected = math.copysign(math.inf, x) if n % 2 else math.inf
    if abs(n) > 64:
        assert got == expected, (x, n, got, expected)
    else:
        assert got == pytest.approx(expected, rel=1e-14)


def test_literal_exponent_beyond_i32() -> None:
    assert K.big_pow_literal(1.0000001) == 1.0000001 ** 4294967297


@pytest.mark.parametrize("n", [3, -2, 70, 2**32 + 1])
def test_gradient_of_int_powers(n: int) -> None:
    rng = np.random.default_rng(n % 1000)
    x = rng.uniform(0.999999, 1.000001, 5) if abs(n) > 64 else rng.uniform(0.5, 1.5, 5)
    g = adpasses.grad(K.power_sum)(x, n)
    assert_matches(g, n * x ** (n - 1))
    if abs(n) <= 70:
        assert_matches(g, finite_differences(K.power_sum.py_func, [x, n], [0])[0])


# -- literals ---------------------------------------------------------------------------------


def _compile(src: str, tmp_path, name: str = "lit_mod"):  # type: ignore[no-untyped-def]
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text("import adpasses\nBIG = 2**64\nNP_BIG = __import__('numpy').uint64(2**63)\n"
                    "@adpasses.jit\n" + src)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.f, str(path)


@pytest.mark.parametrize("body,shown", [
    ("return x + 2**64", "integer 18446744073709551616"),
    ("return x + 18446744073709551616", "integer 18446744073709551616"),
    ("return x - 2**63", "integer 9223372036854775808"),
    ("return x + BIG", "'BIG' = 18446744073709551616"),
    ("return x + NP_BIG", "'NP_BIG' = 9223372036854775808"),
    ("return x * -9223372036854775809", "integer -9223372036854775809"),
])
def test_python_int_literal_beyond_int64_is_a_compile_error(tmp_path, body: str, shown: str) -> None:
    f, path = _compile(f"def f(x):\n    {body}\n", tmp_path)
    with pytest.raises(CompileError) as err:
        f(1)
    text = str(err.value)
    assert text.startswith(f"{path}:6:"), text
    assert f"{shown} does not fit in a 64-bit integer" in text


@pytest.mark.parametrize("body,value", [
    ("return x + 2**62", 1 + 2**62), ("return x + -9223372036854775808", 1 - 2**63),
    ("return x + (-2)**63", 1 - 2**63), ("return x + 2**63 - 1", None),
])
def test_python_int_literals_in_range(tmp_path, body: str, value: int | None) -> None:
    f, _ = _compile(f"def f(x):\n    {body}\n", tmp_path, name=f"ok{abs(hash(body))}")
    if value is None:  # 2**63 alone does not fit, even if the sum would
        with pytest.raises(CompileError, match="9223372036854775808 does not fit"):
            f(1)
    else:
        assert f(1) == value


INDEX_LITERAL = """func.func @main() {{
  %a = arith.constant {value} : {type}
  printf.print_format "{{}}\\n", %a : {type}
  func.return
}}
"""


@pytest.mark.parametrize("tool", ["ad-run", "ad-opt"])
@pytest.mark.parametrize("value,type_,message", [
    (2**64, "index", "integer literal 18446744073709551616 is out of range for index"),
    (-(2**63) - 1, "index", "integer literal -9223372036854775809 is out of range for index"),
    (2**64, "i64", "Integer value 18446744073709551616 is out of range for type i64"),
    (300, "i8", "Integer value 300 is out of range for type i8"),
])
def test_mlir_integer_literal_out_of_range(tmp_path, tool: str, value: int, type_: str, message: str) -> None:
    path = tmp_path / "literal.mlir"
    path.write_text(INDEX_LITERAL.format(value=value, type=type_))
    r = run_tool(tool, str(path))
    assert r.returncode == 1, str(r)
    assert r.stderr.strip().startswith(f"{path}:2:3: error: "), r.stderr
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("value,printed", [(2**64 - 1, "-1"), (-(2**63), str(-(2**63))), (2**63, str(-(2**63)))])
def test_mlir_index_literal_bit_patterns(tmp_path, value: int, printed: str) -> None:
    """Like MLIR, an index literal may be written in either signedness."""
    path = tmp_path / "literal.mlir"
    path.write_text(INDEX_LITERAL.format(value=value, type="index"))
    r = run_tool("ad-run", str(path))
    assert r.returncode == 0 and r.stdout.strip() == printed, str(r)


def test_compile_module_and_verify_check_index_literals() -> None:
    from xdsl.dialects import arith, func
    from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp

    from adpasses.core.verify import verify_module

    with pytest.raises(CompileError, match=r"<compile_module>:2:3: error: 'arith.constant': integer "
                                           r"literal 18446744073709551616"):
        compile_module(INDEX_LITERAL.format(value=2**64, type="index"))
    # IR built in Python (no parser): verify_module catches it.
    c = arith.ConstantOp(IntegerAttr(2**64, IndexType()))
    f = func.FuncOp("f", ((), (IndexType(),)))
    f.body.block.add_ops([c, func.ReturnOp(c.result)])
    with pytest.raises(CompileError, match="out of range for index"):
        verify_module(ModuleOp([f]))
