"""Heap allocations made by generated code, counted by the runtime
(adpasses.native.runtime.stats). Gradients that need no tape allocate nothing;
a tape is one allocation, and with the workspace (the default) none after
the first call."""

from __future__ import annotations

import numpy as np

import adpasses
import frontend_kernels as k
from adpasses.native import runtime


def allocations_of(call) -> dict:  # type: ignore[no-untyped-def]
    runtime.reset_stats()
    call()
    return runtime.stats()


def test_counters_count_generated_allocations():
    from adpasses.native.llvm_jit import compile_module

    text = """
func.func @f(%n: index) -> f64 {
  %b = memref.alloc(%n) : memref<?xf64>
  %c = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %b : memref<?xf64>
  memref.dealloc %c : memref<?xf32>
  %z = arith.constant 0.0 : f64
  func.return %z : f64
}"""
    f = compile_module(text)["f"]
    assert allocations_of(lambda: f(10)) == {"allocations": 2, "bytes": 10 * 8 + 10 * 4}
    assert allocations_of(lambda: None) == {"allocations": 0, "bytes": 0}


def test_no_heap_allocation_for_gradients_without_tape():
    x, y = np.random.rand(50), np.random.rand(50)
    v, w = np.random.rand(3), np.random.rand(2)
    for grad, args in [
        (adpasses.grad(k.dot), (x, y)),
        (adpasses.grad(k.strided_diff), (x,)),
        (adpasses.grad(k.small3, (0, 1)), (v, w)),
    ]:
        grad(*args)  # compile first
        assert allocations_of(lambda: grad(*args))["allocations"] == 0


def test_overwritten_array_tapes_once_then_reuses_its_workspace():
    """The overwritten x is taped (one allocation of n values, in a
    workspace reused by later calls). The plain in-place square no longer
    tapes at all (its loops are fused and reversed iteration by iteration:
    loop-local reverse), so the mirrored variant, whose loops cannot be
    fused, carries the tape."""
    from adpasses.frontend import arg_type, build_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import differentiate

    x = np.random.rand(100)
    module, name = build_module(k.inplace_square, [arg_type(x, 0, "x")])
    g = differentiate(module, name, ["dup"], ["active"])
    f = compile_module(module, workspace=False)[g.name]
    assert allocations_of(lambda: f(x.copy(), np.zeros(100), 1.0)) == {"allocations": 0, "bytes": 0}

    module, name = build_module(k.inplace_square_mirrored, [arg_type(x, 0, "x")])
    g = differentiate(module, name, ["dup"], ["active"])
    for workspace, second_call in ((False, 1), (True, 0)):
        f = compile_module(module, workspace=workspace)[g.name]
        first = allocations_of(lambda: f(x.copy(), np.zeros(100), 1.0))
        assert first == {"allocations": 1, "bytes": 100 * 8}  # exactly the overwritten x
        again = allocations_of(lambda: f(x.copy(), np.zeros(100), 1.0))
        assert again["allocations"] == second_call
    bigger = np.random.rand(300)
    module, name = build_module(k.inplace_square_mirrored, [arg_type(bigger, 0, "x")])
    g = differentiate(module, name, ["dup"], ["active"])
    f = compile_module(module)[g.name]
    f(x.copy(), np.zeros(100), 1.0)
    assert allocations_of(lambda: f(bigger.copy(), np.zeros(300), 1.0))["allocations"] == 1  # grows
    assert allocations_of(lambda: f(x.copy(), np.zeros(100), 1.0))["allocations"] == 0  # fits
    # and the gradient is right: d/dx_j of sum_i x_i^2 x_{n-1-i}^2 = 4 x_j x_{n-1-j}^2
    dx = np.zeros(100)
    f(x.copy(), dx, 1.0)
    assert np.allclose(dx, 4 * x * x[::-1] ** 2, rtol=1e-12)


def test_static_small_tape_goes_on_the_stack():
    # The sum reads x backwards, so the loops cannot be fused (and reversed
    # iteration by iteration, which would tape nothing): x's old values are
    # taped, in a stack slot.
    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import differentiate

    text = """
func.func @sq3(%x: memref<3xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  scf.for %i = %c0 to %c3 step %c1 {
    %a = memref.load %x[%i] : memref<3xf64>
    %p = arith.mulf %a, %a : f64
    memref.store %p, %x[%i] : memref<3xf64>
  }
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %z) -> (f64) {
    %j = arith.subi %c2, %i : index
    %a = memref.load %x[%j] : memref<3xf64>
    %s = arith.addf %acc, %a : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}"""
    m = parse_module(text)
    g = differentiate(m, "sq3", ["dup"], ["active"])
    assert "memref.alloca() : memref<3xf64>" in str(g.function)
    f = compile_module(m, workspace=False)[g.name]
    x = np.array([1.0, 2.0, 3.0])
    dx = np.zeros(3)
    assert allocations_of(lambda: f(x.copy(), dx, 1.0))["allocations"] == 0
    np.testing.assert_allclose(dx, 2 * x)
