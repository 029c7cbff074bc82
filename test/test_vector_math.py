"""SIMD math (adpasses/native/vector_math.py): vectorised loops call
libmvec for exp, log, sin, cos, tanh, pow, ...; the results stay within
glibc's error bound of numpy's, special values included, and scalar code
still calls the scalar functions."""

from __future__ import annotations

import numpy as np
import pytest

from adpasses import grad
from adpasses.core.context import parse_module
from adpasses.lowering import emit_llvm_ir
from adpasses.native import vector_math
from adpasses.native.llvm_jit import compile_module, optimized_module

UNARY = ["exp", "exp2", "log", "log2", "log10", "sin", "cos", "tanh"]
HAVE = bool(vector_math.available())
needs_libmvec = pytest.mark.skipif(not HAVE, reason="no libmvec for this CPU / platform")


def _unary_kernel(fn: str, ty: str) -> str:
    return f"""
func.func @{fn}_{ty}(%x: memref<?x{ty}>, %y: memref<?x{ty}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x{ty}>
  scf.for %i = %c0 to %n step %c1 {{
    %v = memref.load %x[%i] : memref<?x{ty}>
    %r = math.{fn} %v : {ty}
    memref.store %r, %y[%i] : memref<?x{ty}>
  }}
  return
}}"""


def _pow_kernel(ty: str) -> str:
    return f"""
func.func @pow_{ty}(%x: memref<?x{ty}>, %p: memref<?x{ty}>, %y: memref<?x{ty}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x{ty}>
  scf.for %i = %c0 to %n step %c1 {{
    %v = memref.load %x[%i] : memref<?x{ty}>
    %e = memref.load %p[%i] : memref<?x{ty}>
    %r = math.powf %v, %e : {ty}
    memref.store %r, %y[%i] : memref<?x{ty}>
  }}
  return
}}"""


MODULE = "\n".join([_unary_kernel(f, t) for f in UNARY for t in ("f64", "f32")]
                   + [_pow_kernel("f64"), _pow_kernel("f32")])


@pytest.fixture(scope="module")
def kernels():  # type: ignore[no-untyped-def]
    return compile_module(MODULE, boundscheck=False)


def _special(dtype: type) -> np.ndarray:
    info = np.finfo(dtype)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, info.tiny, -info.tiny,
              info.smallest_subnormal, -info.smallest_subnormal, info.tiny / 3, info.max, -info.max,
              1.0, -1.0, 0.5, 2.0, 709.782712893384, 709.79, -745.13, -745.2, 88.72, 88.8, -103.9,
              1e22, -1e22, 1e300, 3.0e38, 1e-300, 1e-40, 700.0, -700.0, 20.0, -20.0, 1e8, 2**52, 1e-8]
    with np.errstate(over="ignore"):
        return np.array(values, dtype=dtype)


def _inputs(dtype: type, seed: int) -> np.ndarray:
    """Special values, wide log-uniform magnitudes of both signs and a dense
    range around 0, shuffled, so each lane of a vector sees each kind; the
    length leaves a scalar remainder too."""
    rng = np.random.default_rng(seed)
    big = 300 if dtype == np.float64 else 36
    wide = np.exp(rng.uniform(-big * 2.3, big * 2.3, 3000)) * rng.choice([-1.0, 1.0], 3000)
    near = rng.uniform(-30.0, 30.0, 3000)
    with np.errstate(over="ignore"):
        x = np.concatenate([np.repeat(_special(dtype), 5), wide.astype(dtype), near.astype(dtype)])
    rng.shuffle(x)
    return x[: len(x) - (len(x) % 8) + 3]


def _check_close(got: np.ndarray, want: np.ndarray, x: np.ndarray, ulps: float, what: str) -> None:
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), f"{what}: nan where numpy has none (or not) at {x[np.isnan(got) != nan][:5]}"
    inf = np.isinf(want)
    assert np.array_equal(got[inf], want[inf]), f"{what}: inf differs at {x[inf][got[inf] != want[inf]][:5]}"
    assert not np.isinf(got[~inf & ~nan]).any(), f"{what}: inf where numpy is finite"
    finite = ~inf & ~nan
    err = np.abs(got[finite].astype(np.float64) - want[finite].astype(np.float64))
    with np.errstate(over="ignore"):
        spacing = np.spacing(np.abs(want[finite])).astype(np.float64)
    bad = err > ulps * spacing
    assert not bad.any(), (f"{what}: {bad.sum()} results beyond {ulps} ulp, e.g. x={x[finite][bad][:3]} "
                           f"got {got[finite][bad][:3]} want {want[finite][bad][:3]}")


@pytest.mark.parametrize("ty", ["f64", "f32"])
@pytest.mark.parametrize("fn", UNARY)
def test_unary_functions_match_numpy_over_wide_ranges(kernels, fn: str, ty: str) -> None:
    dtype = np.float64 if ty == "f64" else np.float32
    x = _inputs(dtype, seed=UNARY.index(fn))
    y = np.empty_like(x)
    kernels[f"{fn}_{ty}"](x, y)
    with np.errstate(all="ignore"):
        want = getattr(np, fn)(x.astype(np.float64)).astype(dtype)
    # glibc's libmvec documents 4 ulp; sin/cos of f32 are compared with the
    # f64 result rounded, hence one ulp more.
    _check_close(y, want, x, 4.0 if ty == "f64" else 5.0, f"{fn} {ty}")


@pytest.mark.parametrize("ty", ["f64", "f32"])
def test_pow_matches_numpy_including_special_cases(kernels, ty: str) -> None:
    dtype = np.float64 if ty == "f64" else np.float32
    rng = np.random.default_rng(7)
    special = _special(dtype)
    base = np.concatenate([np.repeat(special, len(special)), rng.uniform(-10, 10, 2000),
                           np.exp(rng.uniform(-50, 50, 2000))]).astype(dtype)
    expo = np.concatenate([np.tile(special, len(special)),
                           rng.choice([-3.0, -2.0, -1.0, 0.5, 1.0, 2.0, 3.0, 1 / 3], 2000),
                           rng.uniform(-10, 10, 2000)]).astype(dtype)
    y = np.empty_like(base)
    kernels[f"pow_{ty}"](base, expo, y)
    with np.errstate(all="ignore"):
        want = np.power(base.astype(np.float64), expo.astype(np.float64)).astype(dtype)
    _check_close(y, want, base, 4.0 if ty == "f64" else 5.0, f"pow {ty}")


@needs_libmvec
def test_vectorised_loops_call_libmvec_and_scalar_code_calls_libm() -> None:
    optimized = str(optimized_module(emit_llvm_ir(parse_module(_unary_kernel("exp", "f64") + """
func.func @one(%x: f64) -> f64 {
  %r = math.exp %x : f64
  return %r : f64
}""", "<test>"), boundscheck=False)))
    assert "call <" in optimized and "@_ZGV" in optimized
    one = optimized[optimized.index("@u.one("):]
    one = one[: one.index("\n}")]
    assert "@llvm.exp.f64(" in one and "_ZGV" not in one


def test_annotate_attaches_the_available_variants(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(vector_math, "_available", {
        "exp.f64": [(2, "_ZGVbN2v_exp"), (4, "_ZGVdN4v_exp")], "pow.f64": [(4, "_ZGVdN4vv_pow")]})
    text = ('define double @f(double %".1") {\n'
            '  %".2" = call fast double @"llvm.exp.f64"(double %".1")\n'
            '  %".3" = call double @"llvm.pow.f64"(double %".2", double %".1")\n'
            '  %".4" = call double @"llvm.sqrt.f64"(double %".3")\n'
            '  %".5" = call double @"llvm.log.f64"(double %".4")\n'
            '  ret double %".5"\n}\n')
    out = vector_math.annotate(text)
    assert '@"llvm.exp.f64"(double %".1") #1\n' in out
    assert '@"llvm.pow.f64"(double %".2", double %".1") #2\n' in out
    assert '@"llvm.sqrt.f64"(double %".3")\n' in out  # not a mapped function
    assert '@"llvm.log.f64"(double %".4")\n' in out  # no variant available
    assert ('attributes #1 = { "vector-function-abi-variant"='
            '"_ZGV_LLVM_N2v_llvm.exp.f64(_ZGVbN2v_exp),_ZGV_LLVM_N4v_llvm.exp.f64(_ZGVdN4v_exp)" }') in out
    assert "declare <4 x double> @_ZGVdN4vv_pow(<4 x double>, <4 x double>)" in out
    assert "@llvm.compiler.used = appending global [3 x ptr]" in out
    optimized_module(out)  # LLVM accepts it
    monkeypatch.setattr(vector_math, "_available", {})
    assert vector_math.annotate(text) == text


def test_gradient_through_vectorised_exp_and_tanh_matches_finite_differences() -> None:
    import math

    def loss(x):
        s = 0.0
        for i in range(len(x)):
            s += math.tanh(math.exp(-0.5 * x[i]) - 1.0) * math.log(1.0 + x[i] * x[i])
        return s

    rng = np.random.default_rng(3)
    x = rng.uniform(-3.0, 3.0, 1003)
    g = grad(loss)(x)
    h = 1e-6
    fd = np.empty_like(x)
    for i in range(0, len(x), 97):
        e = np.zeros_like(x)
        e[i] = h
        fd[i] = (loss(x + e) - loss(x - e)) / (2 * h)
    picked = slice(0, len(x), 97)
    np.testing.assert_allclose(g[picked], fd[picked], rtol=1e-6, atol=1e-8)


@needs_libmvec
def test_every_kernel_checked_above_runs_its_vector_variant() -> None:
    """The accuracy tests above test libmvec, not only the scalar remainder."""
    optimized = str(optimized_module(emit_llvm_ir(parse_module(MODULE, "<test>"), boundscheck=False)))
    for fn in [*UNARY, "pow"]:
        for suffix in ("", "f"):
            name = vector_math.FUNCTIONS[fn][0] + suffix
            assert any(f"_{name}(" in line for line in optimized.splitlines()
                       if "call <" in line and "@_ZGV" in line), f"{name}: no vector call"
