"""Forward over forward: `ad.fwddiff` of a function that holds an
`ad.fwddiff` (second directional derivatives, jvp of jvp), on loop code
with an in-place recurrence, an scf.if, a while loop and a local buffer
(the kernels of test_forward_mode). `ad-forward` replaces the inner request
first and differentiates the outer function with the inner tangent
function inlined.

Checked against central differences of the compiled inner jvp: the outer
tangent along (w, dw) of jvp(f)(x, u) is d/dt jvp(f)(x + t w, u + t dw).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_forward_mode import KERNELS

from adpasses.core.diagnostics import CompileError

# @t(x, u, c, uc) = the tangent of @f at (x, c) along (u, uc), with the
# tangent of x's final contents left in u; @tt its tangent along
# (w, dw, wc, dwc) (x, u, c, uc all dup).
WRAPPERS = """
func.func @t(%x: memref<?xf64>, %u: memref<?xf64>, %c: f64, %uc: f64) -> f64 {
  %r:2 = ad.fwddiff @f(%x, %u, %c, %uc) {activity = [dup, dup], ret_activity = [dup]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> (f64, f64)
  func.return %r#1 : f64
}
func.func @tt(%x: memref<?xf64>, %w: memref<?xf64>, %u: memref<?xf64>, %dw: memref<?xf64>, %c: f64, %wc: f64, %uc: f64, %dwc: f64) -> (f64, f64) {
  %r:2 = ad.fwddiff @t(%x, %w, %u, %dw, %c, %wc, %uc, %dwc) {activity = [dup, dup, dup, dup], ret_activity = [dup]} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64, f64, f64, f64) -> (f64, f64)
  func.return %r#0, %r#1 : f64, f64
}
"""


def _compile(kernel: str):  # type: ignore[no-untyped-def]
    from xdsl.context import Context

    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.forward_pass import ForwardPass

    module = parse_module(KERNELS[kernel] + WRAPPERS, "test.mlir")
    ForwardPass().apply(Context(), module)
    compiled = compile_module(module)
    return compiled["t"], compiled["tt"]


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_second_directional_derivatives_match_differences_of_the_jvp(kernel: str) -> None:
    t, tt = _compile(kernel)
    rng = np.random.default_rng(13)
    for _ in range(2):
        n = 6
        x, c = rng.uniform(0.2, 1.2, n), float(rng.uniform(0.3, 0.9))
        u, uc = rng.standard_normal(n), float(rng.standard_normal())
        w, wc = rng.standard_normal(n), float(rng.standard_normal())
        dw, dwc = rng.standard_normal(n), float(rng.standard_normal())

        def jvp(s: float) -> tuple[float, np.ndarray]:
            xs, us = x + s * w, u + s * dw
            r = t(xs, us, c + s * wc, uc + s * dwc)
            return r, us  # the tangent of the result, and of x's final contents

        h = 1e-5
        (rp, up), (rm, um) = jvp(h), jvp(-h)
        work_x, work_w, work_u, work_dw = x.copy(), w.copy(), u.copy(), dw.copy()
        value, second = tt(work_x, work_w, work_u, work_dw, c, wc, uc, dwc)
        r0, _ = jvp(0.0)
        assert value == pytest.approx(r0, rel=1e-12)
        assert second == pytest.approx((rp - rm) / (2 * h), rel=1e-5, abs=1e-7)
        # dw now holds the tangent of u's final contents (the inner tangent of x's).
        np.testing.assert_allclose(work_dw, (up - um) / (2 * h), rtol=1e-5, atol=1e-7)


def test_a_request_of_itself_is_an_error() -> None:
    from xdsl.context import Context

    from adpasses.core.context import parse_module
    from adpasses.transforms.forward_pass import ForwardPass

    text = """
func.func @r(%x: f64, %dx: f64) -> f64 {
  %t = ad.fwddiff @r(%x, %dx, %dx, %dx) {activity = [dup, dup], ret_activity = [dupnoneed]} : (f64, f64, f64, f64) -> f64
  func.return %t : f64
}
"""
    module = parse_module(text, "test.mlir")
    with pytest.raises(CompileError, match="recursive forward mode"):
        ForwardPass().apply(Context(), module)
