"""Per-result `with_primal` (`with_primal = [0, 2]`, Enzyme's per-result
`active` / `activenoneed`, issue 20): the gradient returns the primal of
the listed results only, in order, then the derivatives; the derivatives
are those of the gradient without primal results (checked against central
differences), the results returned equal the primal's, a local array the
primal returns at a position not listed is freed, and a wrong list is a
verifier error at the op."""

from __future__ import annotations

import numpy as np
import pytest

from adpasses.core.context import parse_module

THREE = """
func.func @f(%x: f64, %y: f64) -> (f64, i32, f64) {
  %a = arith.mulf %x, %y : f64
  %s = math.sin %x : f64
  %e = math.exp %y : f64
  %b = arith.addf %s, %e : f64
  %k = arith.constant 7 : i32
  func.return %a, %k, %b : f64, i32, f64
}
func.func @none(%x: f64, %y: f64, %s0: f64, %s2: f64) -> (f64, f64) {
  %dx, %dy = ad.autodiff @f(%x, %y, %s0, %s2) {activity = [active, active], ret_activity = [active, const, active]}
    : (f64, f64, f64, f64) -> (f64, f64)
  func.return %dx, %dy : f64, f64
}
func.func @first_last(%x: f64, %y: f64, %s0: f64, %s2: f64) -> (f64, f64, f64, f64) {
  %r0, %r2, %dx, %dy = ad.autodiff @f(%x, %y, %s0, %s2)
    {activity = [active, active], ret_activity = [active, const, active], with_primal = [0, 2]}
    : (f64, f64, f64, f64) -> (f64, f64, f64, f64)
  func.return %r0, %r2, %dx, %dy : f64, f64, f64, f64
}
func.func @middle(%x: f64, %y: f64, %s0: f64, %s2: f64) -> (i32, f64, f64) {
  %r1, %dx, %dy = ad.autodiff @f(%x, %y, %s0, %s2)
    {activity = [active, active], ret_activity = [active, const, active], with_primal = [1]}
    : (f64, f64, f64, f64) -> (i32, f64, f64)
  func.return %r1, %dx, %dy : i32, f64, f64
}
"""


def _compile(text: str):  # type: ignore[no-untyped-def]
    from adpasses.core.context import make_context
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import ReversePass

    module = parse_module(text, "primal_results.mlir")
    ReversePass().apply(make_context(), module)
    return module, compile_module(module)


def test_the_listed_primal_results_then_the_derivatives() -> None:
    module, compiled = _compile(THREE)
    names = {op.sym_name.data for op in module.ops}
    assert {"f_grad_aa_aca_p0_2", "f_grad_aa_aca_p1", "f_grad_aa_aca"} <= names
    rng = np.random.default_rng(7)
    for _ in range(4):
        x, y, s0, s2 = rng.standard_normal(4)
        a, k, b = compiled["f"](x, y)
        dx, dy = compiled["none"](x, y, s0, s2)
        assert compiled["first_last"](x, y, s0, s2) == (a, b, dx, dy)
        assert compiled["middle"](x, y, s0, s2) == (k, dx, dy)
        # By hand: d(s0 x y + s2 (sin x + e^y)) = (s0 y + s2 cos x, s0 x + s2 e^y).
        assert dx == pytest.approx(s0 * y + s2 * np.cos(x), rel=1e-14)
        assert dy == pytest.approx(s0 * x + s2 * np.exp(y), rel=1e-14)
        h = 1e-6

        def loss(u: float, v: float) -> float:
            r = compiled["f"](u, v)
            return s0 * r[0] + s2 * r[2]

        assert dx == pytest.approx((loss(x + h, y) - loss(x - h, y)) / (2 * h), rel=1e-6, abs=1e-8)
        assert dy == pytest.approx((loss(x, y + h) - loss(x, y - h)) / (2 * h), rel=1e-6, abs=1e-8)


def test_a_returned_array_not_listed_is_freed() -> None:
    """@g returns a fresh array and its sum: the gradient that returns only
    the sum frees the array (no heap allocation outlives the call)."""
    text = """
func.func @g(%x: memref<?xf64>) -> (memref<?xf64>, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %y = memref.alloc(%n) : memref<?xf64>
  %z = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %e = math.exp %v : f64
    memref.store %e, %y[%i] : memref<?xf64>
    %r = arith.addf %acc, %e : f64
    scf.yield %r : f64
  }
  func.return %y, %s : memref<?xf64>, f64
}
func.func @sum_only(%x: memref<?xf64>, %dx: memref<?xf64>, %seed: f64) -> f64 {
  %s = ad.autodiff @g(%x, %dx, %seed) {activity = [dup], ret_activity = [const, active], with_primal = [1]}
    : (memref<?xf64>, memref<?xf64>, f64) -> f64
  func.return %s : f64
}
"""
    module, compiled = _compile(text)
    gradient = next(op for op in module.ops if op.sym_name.data == "g_grad_d_ca_p1")
    assert "memref.dealloc %y" in str(gradient)
    x = np.array([0.1, -0.4, 0.7])
    dx = np.zeros(3)
    s = compiled["sum_only"](x, dx, 2.0)
    assert s == pytest.approx(np.exp(x).sum(), rel=1e-14)
    np.testing.assert_allclose(dx, 2.0 * np.exp(x), rtol=1e-14)


@pytest.mark.parametrize("choice, types, message", [
    ("[3]", "(f64, f64)", "must list distinct result indices in increasing order, each below 3"),
    ("[2, 0]", "(f64, f64, f64, f64)", "must list distinct result indices in increasing order"),
    ("[0, 2]", "(f64, f64, f64)", "results must be the primal results [0, 2], then one derivative"),
])
def test_a_wrong_list_is_a_verifier_error(choice: str, types: str, message: str) -> None:
    from adpasses.core.verify import verify_all

    n_res = types.count("f64")
    names = ", ".join(f"%r{k}" for k in range(n_res))
    text = THREE + f"""
func.func @bad(%x: f64, %y: f64, %s0: f64, %s2: f64) {{
  {names} = ad.autodiff @f(%x, %y, %s0, %s2)
    {{activity = [active, active], ret_activity = [active, const, active], with_primal = {choice}}}
    : (f64, f64, f64, f64) -> {types}
  func.return
}}
"""
    with pytest.raises(Exception, match=message.replace("[", r"\[").replace("]", r"\]")):
        verify_all(parse_module(text, "bad.mlir"))


def test_differentiate_takes_the_list() -> None:
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import differentiate

    module = parse_module(THREE[:THREE.index("func.func @none")], "primal_results.mlir")
    g = differentiate(module, "f", ["active", "active"], ["active", "const", "active"], with_primal=[2])
    assert g.name == "f_grad_aa_aca_p2"
    r2, dx, dy = compile_module(module)[g.name](0.3, -0.2, 1.0, 0.5)
    assert r2 == pytest.approx(np.sin(0.3) + np.exp(-0.2))
    assert dx == pytest.approx(-0.2 + 0.5 * np.cos(0.3)) and dy == pytest.approx(0.3 + 0.5 * np.exp(-0.2))
