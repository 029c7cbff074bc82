"""The LLVM lowering and the JIT: compiled kernels against numpy on random
inputs, every math op against numpy, and every error a caller can trigger."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from adpasses.core.diagnostics import CompileError
from adpasses.native.llvm_jit import compile_module

rng = np.random.default_rng(7)

STRIDED = "memref<?xf64, strided<[?], offset: ?>>"
STRIDED2 = "memref<?x?xf64, strided<[?, ?], offset: ?>>"

KERNELS = f"""
func.func @dot(%x: memref<?xf64>, %y: memref<?xf64>) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {{
    %a = memref.load %x[%i] : memref<?xf64>
    %b = memref.load %y[%i] : memref<?xf64>
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %p : f64
    scf.yield %s : f64
  }}
  func.return %r : f64
}}
func.func @strided_sum(%x: {STRIDED}) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : {STRIDED}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {{
    %a = memref.load %x[%i] : {STRIDED}
    %s = arith.addf %acc, %a : f64
    scf.yield %s : f64
  }}
  func.return %r : f64
}}
func.func @matvec(%A: {STRIDED2}, %v: memref<?xf64>, %out: memref<?xf64>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %m = memref.dim %A, %c0 : {STRIDED2}
  %n = memref.dim %A, %c1 : {STRIDED2}
  scf.for %i = %c0 to %m step %c1 {{
    %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {{
      %a = memref.load %A[%i, %j] : {STRIDED2}
      %b = memref.load %v[%j] : memref<?xf64>
      %p = arith.mulf %a, %b : f64
      %s = arith.addf %acc, %p : f64
      scf.yield %s : f64
    }}
    memref.store %r, %out[%i] : memref<?xf64>
  }}
  func.return
}}
func.func @newton_sqrt(%a: f64) -> (f64, index) {{
  %half = arith.constant 0.5 : f64
  %tol = arith.constant 1.0e-14 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:3 = scf.while (%x = %a, %d = %a, %k = %c0) : (f64, f64, index) -> (f64, f64, index) {{
    %ad = math.absf %d : f64
    %go = arith.cmpf ogt, %ad, %tol : f64
    scf.condition(%go) %x, %d, %k : f64, f64, index
  }} do {{
  ^bb0(%x2: f64, %d2: f64, %k2: index):
    %q = arith.divf %a, %x2 : f64
    %s = arith.addf %x2, %q : f64
    %xn = arith.mulf %half, %s : f64
    %dn = arith.subf %xn, %x2 : f64
    %k3 = arith.addi %k2, %c1 : index
    scf.yield %xn, %dn, %k3 : f64, f64, index
  }}
  func.return %r#0, %r#2 : f64, index
}}
func.func @relu_sum(%x: memref<?xf64>) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {{
    %a = memref.load %x[%i] : memref<?xf64>
    %pos = arith.cmpf ogt, %a, %z : f64
    %v = scf.if %pos -> (f64) {{
      scf.yield %a : f64
    }} else {{
      %m = arith.mulf %a, %a : f64
      scf.yield %m : f64
    }}
    %s = arith.addf %acc, %v : f64
    scf.yield %s : f64
  }}
  func.return %r : f64
}}
"""


@pytest.fixture(scope="module")
def kernels():
    return compile_module(KERNELS)


def test_dot(kernels):
    x, y = rng.random(1001), rng.random(1001)
    assert kernels["dot"](x, y) == pytest.approx(x @ y, rel=1e-12)


def test_strided_sum_over_every_third_element(kernels):
    x = rng.random(100)
    assert kernels["strided_sum"](x[::3]) == pytest.approx(x[::3].sum(), rel=1e-12)
    assert kernels["strided_sum"](x[::-2]) == pytest.approx(x[::-2].sum(), rel=1e-12)


def test_matvec_with_transposed_view(kernels):
    A = rng.random((5, 7))
    v = rng.random(5)
    out = np.zeros(7)
    kernels["matvec"](A.T, v, out)  # no copy: strides (8, 56)
    np.testing.assert_allclose(out, A.T @ v, rtol=1e-12)
    B = rng.random((4, 6))
    out4 = np.zeros(4)
    kernels["matvec"](B, rng.random(6), out4)
    assert np.all(out4 != 0)


def test_while_newton(kernels):
    for a in (0.25, 2.0, 1e6):
        root, steps = kernels["newton_sqrt"](a)
        assert root == pytest.approx(np.sqrt(a), rel=1e-14) and isinstance(steps, int) and steps > 0


def test_if_with_results(kernels):
    x = rng.uniform(-1, 1, 50)
    assert kernels["relu_sum"](x) == pytest.approx(np.where(x > 0, x, x * x).sum(), rel=1e-12)


UNARY = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v), "absf": np.abs,
    "floor": np.floor, "ceil": np.ceil, "round": lambda v: np.copysign(np.floor(np.abs(v) + 0.5), v),
    "roundeven": np.round, "trunc": np.trunc, "cbrt": np.cbrt,
    "erf": lambda v: np.vectorize(__import__("math").erf)(v),
}
BINARY = {"atan2": np.arctan2, "powf": np.power, "copysign": np.copysign}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["f64", "f32"])
def test_unary_math(name, dtype):
    text = f"""func.func @f(%x: {dtype}) -> {dtype} {{
  %r = math.{name} %x : {dtype}
  func.return %r : {dtype}
}}"""
    f = compile_module(text)["f"]
    domain = (0.1, 0.9) if name in ("asin", "acos", "log", "log2", "log10", "sqrt", "rsqrt", "log1p") else (-2.5, 2.5)
    for v in rng.uniform(*domain, 5):
        want = UNARY[name](np.float64(v) if dtype == "f64" else np.float32(v))
        got = f(float(np.float32(v)) if dtype == "f32" else v)
        assert got == pytest.approx(float(want), rel=1e-12 if dtype == "f64" else 1e-6, abs=1e-12)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_math(name):
    text = f"""func.func @f(%x: f64, %y: f64) -> f64 {{
  %r = math.{name} %x, %y : f64
  func.return %r : f64
}}"""
    f = compile_module(text)["f"]
    for a, b in rng.uniform(0.2, 2.0, (5, 2)):
        assert f(a, b) == pytest.approx(BINARY[name](a, b), rel=1e-12)


def test_fpowi_and_fma():
    text = """func.func @f(%x: f64, %n: i32, %y: f64) -> f64 {
  %p = math.fpowi %x, %n : f64, i32
  %r = math.fma %p, %y, %x : f64
  func.return %r : f64
}"""
    f = compile_module(text)["f"]
    assert f(1.5, 3, 2.0) == pytest.approx(1.5**3 * 2.0 + 1.5)
    assert f(2.0, -2, 1.0) == pytest.approx(0.25 + 2.0)


def test_module_cache_hit():
    from adpasses.native import llvm_jit

    before = dict(llvm_jit.stats)
    text = "func.func @c(%a: f64) -> f64 {\n  func.return %a : f64\n}"
    compile_module(text)
    compile_module(text)
    assert llvm_jit.stats["compiled"] == before["compiled"] + 1
    assert llvm_jit.stats["cache_hits"] >= before["cache_hits"] + 1


# -- errors through the callable ------------------------------------------------------


@pytest.mark.parametrize("args,exc,message", [
    ((np.ones(3),), TypeError, r"dot\(\) takes 2 positional arguments but 1 was given"),
    ((np.ones(3), [1.0, 2.0, 3.0]), TypeError, r"argument 1 \('y'\) must be a numpy array"),
    ((np.ones(3), np.ones(3, dtype=np.float32)), TypeError, r"argument 1 \('y'\) must have dtype float64, got float32"),
    ((np.ones(3), np.ones((3, 1))), ValueError, r"argument 1 \('y'\) has rank 2, expected 1"),
    ((np.ones(6)[::2], np.ones(3)), ValueError, r"argument 0 \('x'\) is not C-contiguous.*np.ascontiguousarray"),
    ((np.ones(3), np.ones(3).astype(">f8")), TypeError, r"non-native byte order"),
])
def test_callable_argument_errors(kernels, args, exc, message):
    with pytest.raises(exc, match=message):
        kernels["dot"](*args)


def test_callable_scalar_and_read_only_errors(kernels):
    with pytest.raises(TypeError, match=r"argument 0 \('a'\) must be a f64 scalar, got str"):
        kernels["newton_sqrt"]("2")
    A = np.ones((2, 2))
    out = np.zeros(2)
    out.setflags(write=False)
    with pytest.raises(ValueError, match=r"argument 2 \('out'\) is read-only"):
        kernels["matvec"](A, np.ones(2), out)


def test_index_error_with_location():
    text = """func.func @at(%x: memref<?xf64>, %i: index) -> f64 {
  %v = memref.load %x[%i] : memref<?xf64>
  func.return %v : f64
}"""
    f = compile_module(text)["at"]
    assert f(np.arange(4.0), 3) == 3.0
    with pytest.raises(IndexError, match=r"index 4 is out of bounds for axis 0 with size 4 \(at <compile_module>:2:3\)"):
        f(np.arange(4.0), 4)
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        f(np.arange(4.0), -1)
    assert compile_module(text, boundscheck=False)["at"](np.arange(4.0)[:2], 3) == 3.0


def test_unsupported_op_in_lowering():
    with pytest.raises(CompileError, match=r"2:3: error: 'math.ctpop': is not supported by the LLVM lowering"):
        compile_module("func.func @f(%a: i64) -> i64 {\n  %r = math.ctpop %a : i64\n  func.return %r : i64\n}")


# -- errors through ad-opt ----------------------------------------------------------------

INPUTS = Path(__file__).parent / "lit" / "lowering" / "Inputs"


@pytest.mark.parametrize("name,args,expected", [
    ("malformed.mlir", [], "malformed.mlir:2:"),
    ("unknown_op.mlir", [], "error: Operation foo.bar is not registered"),
    ("unsupported.mlir", ["--emit=llvm-ir"], "unsupported.mlir:3:3: error: 'math.ctpop'"),
    ("does_not_exist.mlir", [], "does_not_exist.mlir': No such file or directory"),
])
def test_ad_opt_errors_are_one_line(name, args, expected):
    tool = Path(sys.executable).parent / "ad-opt"
    proc = subprocess.run([str(tool), str(INPUTS / name), *args], capture_output=True, text=True)
    assert proc.returncode == 1
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


# -- the dominance checker ---------------------------------------------------------------


def test_dominance_checker_catches_use_before_def():
    from xdsl.builder import ImplicitBuilder
    from xdsl.dialects import arith, func
    from xdsl.dialects.builtin import ModuleOp, f64

    from adpasses.core.verify import check_dominance

    f = func.FuncOp("bad", ([f64], [f64]))
    with ImplicitBuilder(f.body) as (a,):
        later = arith.AddfOp(a, a)
        early = arith.MulfOp(later, a)  # uses `later`...
        func.ReturnOp(early)
    block = f.body.block
    block.detach_op(later)
    block.insert_op_before(later, block.last_op)  # ...now defined after its use
    module = ModuleOp([f])
    module.verify()  # xDSL's verifier does not notice
    with pytest.raises(CompileError, match="before its definition"):
        check_dominance(module)
