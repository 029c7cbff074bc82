"""Matrix products (`linalg.matmul` on memrefs; adpasses/transforms/lower_matmul.py,
lowering/blas.py, native/blas.py): values against numpy on shapes that
take the loop nest and BLAS, strided and transposed views, f32; sizes that
do not match are a ValueError (never a BLAS call with wrong sizes); the
gradient and the forward derivative against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from adpasses.lowering.blas import GEMM_THRESHOLD
from adpasses.native import blas
from adpasses.native.llvm_jit import compile_module
from gradcheck import check_gradient

STRIDED = "strided<[?, ?], offset: ?>"


def _product(ty: str = "f64", layout: str = "") -> str:
    t = f"memref<?x?x{ty}{', ' + layout if layout else ''}>"
    return f"""
func.func @mm(%a: {t}, %b: {t}, %c: {t}) {{
  linalg.matmul ins(%a, %b : {t}, {t}) outs(%c : {t})
  return
}}"""


@pytest.fixture(scope="module")
def products():  # type: ignore[no-untyped-def]
    return {key: compile_module(_product(ty, layout), boundscheck=check)
            for key, (ty, layout, check) in {
                "f64": ("f64", "", True), "f32": ("f32", "", True),
                "strided": ("f64", STRIDED, True), "unchecked": ("f64", "", False)}.items()}


SHAPES = [(1, 1, 1), (1, 7, 1), (1, 5, 9), (9, 5, 1), (6, 1, 8), (3, 4, 5), (8, 8, 8), (7, 8, 9), (2, 600, 1), (17, 13, 11),
          (64, 128, 128), (40, 40, 40), (1, 300, 200), (300, 200, 1), (33, 0, 4), (0, 5, 3)]


@pytest.mark.parametrize("shape", SHAPES)
def test_product_matches_numpy(products, shape) -> None:  # type: ignore[no-untyped-def]
    m, k, n = shape
    rng = np.random.default_rng(m * 10000 + k * 100 + n)
    a, b, c = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))
    want = c + a @ b
    for key in ("f64", "unchecked", "strided"):
        got = c.copy()
        products[key]["mm"](a, b, got)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * max(1, k))
    got32 = c.astype(np.float32)
    products["f32"]["mm"](a.astype(np.float32), b.astype(np.float32), got32)
    np.testing.assert_allclose(got32, want, rtol=1e-4, atol=1e-4 * max(1, k))


@pytest.mark.parametrize("big", [False, True])
def test_strided_and_transposed_views(products, big) -> None:  # type: ignore[no-untyped-def]
    """Column-major operands (transposes) go to BLAS with its transpose flag;
    views with no unit stride (every other column) to the loop nest; a
    column-major output too. Same values either way."""
    rng = np.random.default_rng(1)
    m, k, n = (48, 40, 36) if big else (5, 4, 3)
    at = rng.standard_normal((k, m)).T             # column-major A
    b2 = rng.standard_normal((k, 2 * n))[:, ::2]   # no unit stride
    bt = rng.standard_normal((n, k)).T             # column-major B
    a_off = rng.standard_normal((m + 3, k + 2))[2:-1, 1:-1]  # offset, leading stride > k
    for a, b in ((at, bt), (at, b2), (a_off, bt), (a_off, b2)):
        for c in (rng.standard_normal((m, n)), rng.standard_normal((n, m)).T):
            want = c + a @ b
            got = c.copy(order="K")
            products["strided"]["mm"](a, b, got)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-11)


def test_output_overlapping_an_input_takes_the_loop_nest(products) -> None:  # type: ignore[no-untyped-def]
    """BLAS's result is undefined when C overlaps A; the loop nest's is
    linalg's loop order. C is A itself here (square)."""
    rng = np.random.default_rng(2)
    n = 40
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    want = a.copy()
    for i in range(n):      # the loop nest's order: C[i, j] += A[i, p] * B[p, j], p outer
        for p in range(n):
            want[i, :] += want[i, p] * b[p, :]
    got = a.copy()
    products["strided"]["mm"](got, b, got)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("key", ["f64", "unchecked"])
@pytest.mark.parametrize("sizes,bad", [(((3, 4), (5, 6), (3, 6)), "dimension 1 of %a (argument 0) has size 4, but "
                                        "dimension 0 of %b (argument 1) has size 5"),
                                       (((3, 4), (4, 6), (2, 6)), "dimension 0 of %a (argument 0) has size 3, but "
                                        "dimension 0 of %c (argument 2) has size 2"),
                                       (((30, 40), (40, 60), (30, 61)), "dimension 1 of %b (argument 1) has size 60, "
                                        "but dimension 1 of %c (argument 2) has size 61")])
def test_sizes_that_do_not_match_are_a_value_error(products, key, sizes, bad) -> None:  # type: ignore[no-untyped-def]
    a, b, c = (np.ones(s) for s in sizes)
    before = c.copy()
    with pytest.raises(ValueError, match=r"linalg.matmul \(C \+= A @ B\): " + bad.replace("(", r"\(")
                       .replace(")", r"\)") + r"; they must be equal \(in @mm, at <compile_module>:3:3\)"):
        products[key]["mm"](a, b, c)
    np.testing.assert_array_equal(c, before)


def test_blas_is_found_with_numpy_wheels() -> None:
    """numpy's wheels bundle OpenBLAS; where this fails, products use loops."""
    assert blas.available() or blas._openblas_path() is None


LOSS = """
func.func @loss(%x: memref<?x?xf64>, %w: memref<?x?xf64>, %v: memref<?x?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %m = memref.dim %x, %c0 : memref<?x?xf64>
  %n = memref.dim %w, %c1 : memref<?x?xf64>
  %h = memref.alloc(%m, %n) : memref<?x?xf64>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      memref.store %zero, %h[%i, %j] : memref<?x?xf64>
    }
  }
  linalg.matmul ins(%x, %w : memref<?x?xf64>, memref<?x?xf64>) outs(%h : memref<?x?xf64>)
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %e = memref.load %h[%i, %j] : memref<?x?xf64>
      %t = math.tanh %e : f64
      memref.store %t, %h[%i, %j] : memref<?x?xf64>
    }
  }
  %p = memref.dim %v, %c1 : memref<?x?xf64>
  %o = memref.alloc(%m, %p) : memref<?x?xf64>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %p step %c1 {
      memref.store %zero, %o[%i, %j] : memref<?x?xf64>
    }
  }
  linalg.matmul ins(%h, %v : memref<?x?xf64>, memref<?x?xf64>) outs(%o : memref<?x?xf64>)
  %s = scf.for %i = %c0 to %m step %c1 iter_args(%acc = %zero) -> f64 {
    %r = scf.for %j = %c0 to %p step %c1 iter_args(%acc2 = %acc) -> f64 {
      %e = memref.load %o[%i, %j] : memref<?x?xf64>
      %sq = arith.mulf %e, %e : f64
      %a = arith.addf %acc2, %sq : f64
      scf.yield %a : f64
    }
    scf.yield %r : f64
  }
  memref.dealloc %h : memref<?x?xf64>
  memref.dealloc %o : memref<?x?xf64>
  return %s : f64
}"""


@pytest.mark.parametrize("shape", [(1, 3, 4, 1), (4, 1, 3, 2), (3, 5, 1, 4), (5, 4, 3, 2), (2, 6, 6, 3)])
def test_gradient_of_a_two_layer_loss_matches_finite_differences(shape) -> None:  # type: ignore[no-untyped-def]
    """sum((tanh(X @ W) @ V)^2): every input's gradient, shapes with 1s."""
    b, i, h, o = shape
    rng = np.random.default_rng(sum(shape))
    args = [rng.standard_normal((b, i)), rng.standard_normal((i, h)) * 0.5, rng.standard_normal((h, o))]
    check_gradient(LOSS, "loss", ["dup", "dup", "dup"], ["active"], args, rng=rng)


def test_forward_derivative_matches_finite_differences() -> None:
    """jvp of the same loss (forward mode differentiates the loop nest)."""
    from adpasses.core.context import parse_module
    from adpasses.transforms.forward_pass import forward_differentiate

    rng = np.random.default_rng(5)
    x, w, v = rng.standard_normal((3, 4)), rng.standard_normal((4, 5)) * 0.5, rng.standard_normal((5, 2))
    dx, dw, dv = (rng.standard_normal(a.shape) for a in (x, w, v))
    module = parse_module(LOSS, "test.mlir")
    tangent = forward_differentiate(module, "loss", ["dup", "dup", "dup"], ["dup"])
    compiled = compile_module(module)
    out = compiled[tangent.name](x, dx, w, dw, v, dv)
    value, derivative = out if isinstance(out, tuple) else (None, out)
    h = 1e-6
    f = compiled["loss"]
    fd = (f(x + h * dx, w + h * dw, v + h * dv) - f(x - h * dx, w - h * dw, v - h * dv)) / (2 * h)
    np.testing.assert_allclose(float(derivative), fd, rtol=1e-6)


def test_threshold_is_where_both_paths_meet() -> None:
    """The threshold is a product size (m * n * k), documented with its
    measurement in docs/lowering.md."""
    assert GEMM_THRESHOLD == 8 ** 3
