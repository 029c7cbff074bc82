"""Vector reverse mode: `ad.autodiff {width = N}` / `differentiate(...,
width=N)`, N cotangents per forward sweep, and jacrev built on it.

- each lane against central finite differences of the compiled primal
  (random inputs, random seeds, shadows that start nonzero: lane k is the
  gradient of seed_k * f + <start_k, final x>);
- each lane equal to a width-1 sweep with the same seed and shadow;
- loops with tapes, in-place updates, scf.if and scf.while (the region
  rules carry every lane), a memref result seeded per lane;
- jacrev with widths that do and do not divide the output's size, against
  central differences;
- errors: width < 1, operand counts of the op, a checkpointed call.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_forward_mode import KERNELS

import adpasses
from adpasses import Output
from adpasses.core.diagnostics import CompileError


def _compile(text: str, widths: tuple[int, ...]):  # type: ignore[no-untyped-def]
    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import differentiate

    module = parse_module(text, "test.mlir")
    names = [differentiate(module, "f", ["dup", "active"], ["active"], width=w).name for w in widths]
    compiled = compile_module(module)
    return compiled["f"], [compiled[n] for n in names]


def _weighted(primal, x: np.ndarray, c: float, seed: float, start: np.ndarray) -> float:  # type: ignore[no-untyped-def]
    """seed * f(x, c) + <start, final contents of x>: x is updated in place,
    so a shadow that starts nonzero is the cotangent of x's final contents."""
    work = x.copy()
    r = primal(work, c)
    return seed * r + float(start @ work)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("width", [2, 3])
def test_lanes_match_finite_differences(kernel: str, width: int) -> None:
    primal, (vector,) = _compile(KERNELS[kernel], (width,))
    rng = np.random.default_rng(11 + width)
    for _ in range(2):
        x, c = rng.uniform(0.2, 1.2, 7), float(rng.uniform(0.3, 0.9))
        seeds = [float(s) for s in rng.standard_normal(width)]
        starts = [rng.standard_normal(x.size) for _ in range(width)]
        lanes = [s.copy() for s in starts]
        dcs = vector(x.copy(), *lanes, c, *seeds)
        dcs = dcs if isinstance(dcs, tuple) else (dcs,)
        assert len(dcs) == width
        for k in range(width):
            def phi(x: np.ndarray, c: float, k: int = k) -> float:
                return _weighted(primal, x, c, seeds[k], starts[k])

            h = 1e-6
            gx = np.array([(phi(x + h * e, c) - phi(x - h * e, c)) / (2 * h) for e in np.eye(x.size)])
            gc = (phi(x, c + h) - phi(x, c - h)) / (2 * h)
            np.testing.assert_allclose(lanes[k], gx, rtol=1e-6, atol=1e-7)
            assert dcs[k] == pytest.approx(gc, rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_lanes_equal_single_sweeps(kernel: str) -> None:
    _, (single, vector) = _compile(KERNELS[kernel], (1, 4))
    rng = np.random.default_rng(5)
    x, c = rng.uniform(0.2, 1.2, 9), 0.6
    seeds = [float(s) for s in rng.standard_normal(4)]
    starts = [rng.standard_normal(x.size) for _ in range(4)]
    lanes = [s.copy() for s in starts]
    dcs = vector(x.copy(), *lanes, c, *seeds)
    for k in range(4):
        d = starts[k].copy()
        dc = single(x.copy(), d, c, seeds[k])
        assert dcs[k] == pytest.approx(dc, rel=1e-14, abs=1e-14)
        np.testing.assert_allclose(lanes[k], d, rtol=1e-14, atol=1e-14)


# A memref result (dup: one seed memref per lane) written through a loop
# that reads an updated element: y[i] = y[i-1] * sin(x[i]) + x[i]^2.
MEMREF_RESULT = """
func.func @f(%x: memref<?xf64>) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %y = memref.alloc(%n) : memref<?xf64>
  %x0 = memref.load %x[%c0] : memref<?xf64>
  memref.store %x0, %y[%c0] : memref<?xf64>
  scf.for %i = %c1 to %n step %c1 {
    %im1 = arith.subi %i, %c1 : index
    %p = memref.load %y[%im1] : memref<?xf64>
    %a = memref.load %x[%i] : memref<?xf64>
    %s = math.sin %a : f64
    %q = arith.mulf %p, %s : f64
    %a2 = arith.mulf %a, %a : f64
    %v = arith.addf %q, %a2 : f64
    memref.store %v, %y[%i] : memref<?xf64>
  }
  func.return %y : memref<?xf64>
}
"""


def test_memref_result_seeded_per_lane() -> None:
    """Lane k with seed e_k (a unit vector on the result) gives row k of the
    Jacobian d y / d x, checked by central differences."""
    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import differentiate

    module = parse_module(MEMREF_RESULT, "test.mlir")
    g = differentiate(module, "f", ["dup"], ["dup"], width=3)
    compiled = compile_module(module)
    primal, grad = compiled["f"], compiled[g.name]
    rng = np.random.default_rng(2)
    n = 5
    x = rng.uniform(-1, 1, n)
    rows = [1, 3, 4]
    seeds = [np.eye(n)[r] for r in rows]
    lanes = [np.zeros(n) for _ in rows]
    grad(x, *lanes, *seeds)
    for k, r in enumerate(rows):
        fd = np.zeros(n)
        for i in range(n):
            up, down = x.copy(), x.copy()
            up[i] += 1e-6
            down[i] -= 1e-6
            fd[i] = (primal(up)[r] - primal(down)[r]) / 2e-6
        np.testing.assert_allclose(lanes[k], fd, rtol=1e-6, atol=1e-8)


def ring(x, out):
    for i in range(len(out)):
        out[i] = math.sin(x[i]) * x[(i + 1) % len(x)]


def mixed(x, s, out):
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = out[i, j] * s + math.exp(0.3 * x[i]) * x[j]


def _jacobian_fd(f, args: list, out: int, k: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    def final(a):  # type: ignore[no-untyped-def]
        copies = [v.copy() if isinstance(v, np.ndarray) else v for v in a]
        f(*copies)
        return copies[out]

    x = args[k]
    if not isinstance(x, np.ndarray):
        up, down = list(args), list(args)
        up[k], down[k] = x + 1e-6, x - 1e-6
        return (final(up) - final(down)) / 2e-6
    J = np.zeros(args[out].shape + x.shape)
    for idx in np.ndindex(x.shape):
        up, down = list(args), list(args)
        up[k], down[k] = x.copy(), x.copy()
        up[k][idx] += 1e-6
        down[k][idx] -= 1e-6
        J[(Ellipsis,) + idx] = (final(up) - final(down)) / 2e-6
    return J


@pytest.mark.parametrize("width", [None, 1, 2, 4, 16])
def test_jacrev_widths_match_finite_differences(width: int | None) -> None:
    rng = np.random.default_rng(0 if width is None else width)
    x = rng.uniform(-1, 1, 7)
    J = adpasses.jacrev(ring, width=width)(x, Output(np.zeros(7)))
    np.testing.assert_allclose(J, _jacobian_fd(ring, [x, np.zeros(7)], 1, 0), rtol=1e-6, atol=1e-8)
    x3, s, out = rng.uniform(-1, 1, 3), 0.7, rng.uniform(-1, 1, (3, 3))
    Jx, Js, Jo = adpasses.jacrev(mixed, (0, 1, 2), width=width)(x3, s, Output(out))
    args = [x3, s, out]
    np.testing.assert_allclose(Jx, _jacobian_fd(mixed, args, 2, 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(Js, _jacobian_fd(mixed, args, 2, 1), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(Jo, _jacobian_fd(mixed, args, 2, 2), rtol=1e-6, atol=1e-8)


def test_jacrev_width_errors() -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="width must be a positive int"):
            adpasses.jacrev(ring, width=bad)


def test_width_below_one_is_an_error() -> None:
    from adpasses.core.context import parse_module
    from adpasses.transforms.reverse_pass import differentiate

    module = parse_module(KERNELS["recurrence"], "test.mlir")
    with pytest.raises(CompileError, match="width must be an integer of at least 1, got 0"):
        differentiate(module, "f", ["dup", "active"], ["active"], width=0)


def test_op_operand_count_names_the_width() -> None:
    from adpasses.core.context import parse_module

    text = """
func.func @g(%a: f64) -> f64 {
  func.return %a : f64
}
func.func @main(%a: f64, %s: f64) -> (f64, f64) {
  %d:2 = ad.autodiff @g(%a, %s) {activity = [active], ret_activity = [active], width = 2} : (f64, f64) -> (f64, f64)
  func.return %d#0, %d#1 : f64, f64
}
"""
    with pytest.raises(Exception, match=r"expected 3 operands \(1 arguments, 0 shadows, 2 seeds; width 2\)"):
        parse_module(text, "test.mlir").verify()


def test_checkpointed_call_with_width_is_an_error() -> None:
    from adpasses.core.context import parse_module
    from adpasses.transforms.reverse_pass import differentiate

    text = """
func.func @step(%u: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %a = memref.load %u[%c0] : memref<?xf64>
  %b = arith.mulf %a, %a : f64
  memref.store %b, %u[%c0] : memref<?xf64>
  func.return
}
func.func @f(%u: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  func.call @step(%u) {ad.checkpoint} : (memref<?xf64>) -> ()
  %s = memref.load %u[%c0] : memref<?xf64>
  func.return %s : f64
}
"""
    module = parse_module(text, "test.mlir")
    with pytest.raises(CompileError, match="vector reverse mode"):
        differentiate(module, "f", ["dup"], ["active"], width=2)
