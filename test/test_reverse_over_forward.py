"""Reverse over forward: `ad.autodiff` of a function that calls
`ad.fwddiff` (the gradient of a jvp), on the loop kernels of
test_forward_mode (an in-place recurrence with a local buffer, a subview
and an scf.if; Euler steps in a while loop). `ad-forward{inner=true}`
replaces the inner request first, then `ad-reverse` differentiates the
function with the tangent function inlined, as `ad-opt --forward` does.

Checked against central differences of the compiled jvp on random inputs:
the gradient of t(x, u, c, uc) = <grad f(x, c), (u, uc)> with respect to
all four arguments."""

from __future__ import annotations

import numpy as np
import pytest
from test_forward_mode import KERNELS

WRAPPERS = """
func.func @t(%x: memref<?xf64>, %u: memref<?xf64>, %c: f64, %uc: f64) -> f64 {
  %r:2 = ad.fwddiff @f(%x, %u, %c, %uc) {activity = [dup, dup], ret_activity = [dup]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> (f64, f64)
  func.return %r#1 : f64
}
func.func @g(%x: memref<?xf64>, %dx: memref<?xf64>, %u: memref<?xf64>, %du: memref<?xf64>, %c: f64, %uc: f64, %seed: f64) -> (f64, f64) {
  %r:2 = ad.autodiff @t(%x, %dx, %u, %du, %c, %uc, %seed) {activity = [dup, dup, active, active], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64, f64, f64) -> (f64, f64)
  func.return %r#0, %r#1 : f64, f64
}
"""


def _compile(kernel: str):  # type: ignore[no-untyped-def]
    from xdsl.context import Context

    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.elide_shadow_checks import ElideShadowChecksPass
    from adpasses.transforms.forward_pass import ForwardPass
    from adpasses.transforms.reverse_pass import ReversePass

    module = parse_module(KERNELS[kernel] + WRAPPERS, "test.mlir")
    ctx = Context()
    ForwardPass(inner=True).apply(ctx, module)
    assert "ad.fwddiff" not in str(module)  # the inner request is a call now
    ReversePass().apply(ctx, module)
    ForwardPass().apply(ctx, module)
    ElideShadowChecksPass().apply(ctx, module)
    compiled = compile_module(module)
    return compiled["t"], compiled["g"]


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_gradient_of_the_jvp_matches_differences(kernel: str) -> None:
    t, g = _compile(kernel)
    rng = np.random.default_rng(29)
    n = 6
    for _ in range(2):
        x, c = rng.uniform(0.2, 1.2, n), float(rng.uniform(0.3, 0.9))
        u, uc = rng.standard_normal(n), float(rng.standard_normal())

        def t_at(x_: np.ndarray, u_: np.ndarray, c_: float, uc_: float) -> float:
            return t(x_.copy(), u_.copy(), c_, uc_)  # t writes x and u: run it on copies

        h = 1e-6
        fd_x = [(t_at(x + h * e, u, c, uc) - t_at(x - h * e, u, c, uc)) / (2 * h) for e in np.eye(n)]
        fd_u = [(t_at(x, u + h * e, c, uc) - t_at(x, u - h * e, c, uc)) / (2 * h) for e in np.eye(n)]
        fd_c = (t_at(x, u, c + h, uc) - t_at(x, u, c - h, uc)) / (2 * h)
        fd_uc = (t_at(x, u, c, uc + h) - t_at(x, u, c, uc - h)) / (2 * h)
        dx, du = np.zeros(n), np.zeros(n)  # no seed on the final contents of x and u
        dc, duc = g(x.copy(), dx, u.copy(), du, c, uc, 1.0)
        np.testing.assert_allclose(dx, fd_x, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(du, fd_u, rtol=1e-5, atol=1e-7)
        assert dc == pytest.approx(fd_c, rel=1e-5, abs=1e-7)
        assert duc == pytest.approx(fd_uc, rel=1e-5, abs=1e-7)


def test_a_request_holding_an_autodiff_waits_for_the_reverse_pipeline() -> None:
    """ad-forward{inner=true} leaves forward over reverse alone."""
    from xdsl.context import Context

    from adpasses.core.context import parse_module
    from adpasses.transforms.forward_pass import ForwardPass

    text = KERNELS["recurrence"] + """
func.func @grad(%x: memref<?xf64>, %gx: memref<?xf64>, %c: f64) {
  %one = arith.constant 1.0 : f64
  ad.autodiff @f(%x, %gx, %c, %one) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> ()
  func.return
}
func.func @hv(%x: memref<?xf64>, %v: memref<?xf64>, %gx: memref<?xf64>, %hv: memref<?xf64>, %c: f64) {
  ad.fwddiff @grad(%x, %v, %gx, %hv, %c) {activity = [dup, dup, const], ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}
"""
    module = parse_module(text, "test.mlir")
    ForwardPass(inner=True).apply(Context(), module)
    assert str(module).count("ad.fwddiff") == 1 and "ad.autodiff" in str(module)
