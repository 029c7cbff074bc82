"""Local arrays allocate nothing per call (`ad-promote-scratch`,
adpasses/transforms/promote_scratch.py; docs/cache.md, "Heap allocations").

Small-vector code (`d = np.zeros(3)` per pair of atoms) and the EAM-style
potential (a per-atom density array of dynamic size besides those) make no
heap allocation after the first call, primal or gradient; the gradients
equal central finite differences on random inputs; arrays that escape
(returned, yielded, kept by a callee) stay heap allocations; bounds checks
stay on promoted arrays. The IR the pass prints: test/lit/lowering/promote_scratch.mlir."""

from __future__ import annotations

import numpy as np
import pytest
from finite_diff import assert_matches, copy_args, finite_differences

import adpasses
from benchmarks.kernels.smallvec import eam_energy, pair_energy  # the smallvec benchmark's kernels
from adpasses.native import runtime


@pytest.fixture
def rng():
    return np.random.default_rng(20261126)


def allocations_of(call) -> int:  # type: ignore[no-untyped-def]
    runtime.reset_stats()
    call()
    return runtime.stats()["allocations"]


def positions(rng, n: int) -> np.ndarray:
    # atoms on a jittered grid: no two closer than 0.5
    grid = np.array([(i, j, k) for i in range(3) for j in range(3) for k in range(3)], dtype=float)
    return grid[:n] + 0.2 * rng.random((n, 3))


def forces_into(x, f):
    # a scratch array handed to a helper that only reads and writes it
    n = x.shape[0]
    for i in range(n):
        d = np.zeros(3)
        for j in range(n):
            if i != j:
                separation(x, i, j, d)
                r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
                for k in range(3):
                    f[i, k] += d[k] / (r2 * r2)
    s = 0.0
    for i in range(n):
        for k in range(3):
            s += f[i, k] * f[i, k]
    return s


def separation(x, i, j, d):
    for k in range(3):
        d[k] = x[i, k] - x[j, k]


@pytest.mark.parametrize("kernel", [pair_energy, eam_energy], ids=lambda k: k.__name__)
def test_small_vector_kernels_allocate_nothing_after_the_first_call(rng, kernel):
    x = positions(rng, 12)
    f = adpasses.jit(kernel)
    g = adpasses.grad(f)
    assert f(x) == pytest.approx(kernel(x), rel=1e-13)
    got = g(x)
    assert_matches(got, finite_differences(kernel, (x,), (0,))[0], what=kernel.__name__)
    assert allocations_of(lambda: f(x)) == 0
    assert allocations_of(lambda: g(x)) == 0
    bigger = positions(rng, 20)  # more pairs: the tapes grow once, then fit again
    g(bigger)
    assert allocations_of(lambda: g(bigger)) == 0
    assert allocations_of(lambda: g(x)) == 0


def test_scratch_passed_to_a_helper_that_keeps_no_reference(rng):
    x = positions(rng, 6)
    fn = adpasses.jit(forces_into)
    g = adpasses.grad(fn)
    got = g(x, np.zeros((6, 3)))
    assert_matches(got, finite_differences(forces_into, (x, np.zeros((6, 3))), (0,))[0], what="forces_into")
    fn(x, np.zeros((6, 3)))
    assert allocations_of(lambda: fn(x, np.zeros((6, 3)))) == 0
    assert allocations_of(lambda: g(x, np.zeros((6, 3)))) == 0


def test_bounds_checks_stay_on_promoted_arrays():
    def reads_past_end(x, m):
        d = np.zeros(3)
        s = 0.0
        for k in range(m):
            d[k] = x[k]
            s += d[k]
        return s

    f = adpasses.jit(reads_past_end)
    x = np.arange(5.0)
    assert f(x, 3) == 3.0
    with pytest.raises(IndexError, match="out of bounds"):
        f(x, 4)
    with pytest.raises(IndexError, match="out of bounds"):
        adpasses.grad(f)(x, 4)


def scaled_copy(x):
    y = np.zeros(3)
    for k in range(3):
        y[k] = 2.0 * x[k]
    return y


def test_a_returned_array_stays_on_the_heap(rng):
    f = adpasses.jit(scaled_copy)
    x = rng.random(3)
    first = f(x)
    second = f(x + 1.0)  # a stack slot would be the same, dead, memory
    np.testing.assert_array_equal(first, 2.0 * x)
    np.testing.assert_array_equal(second, 2.0 * (x + 1.0))
    assert allocations_of(lambda: f(x)) == 1


def test_escape_rules_on_the_ir():
    from adpasses.core.context import parse_module
    from adpasses.transforms.promote_scratch import promote_scratch

    text = """
func.func private @keeps(%a: memref<?xf64>) -> memref<?xf64> {
  func.return %a : memref<?xf64>
}
func.func private @reads(%a: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<?xf64>
  func.return %v : f64
}
func.func private @frees(%a: memref<?xf64>) {
  memref.dealloc %a : memref<?xf64>
  func.return
}
func.func @f(%n: index) -> memref<?xf64> {
  %c3 = arith.constant 3 : index
  %returned = memref.alloc(%c3) : memref<?xf64>
  %kept = memref.alloc(%c3) : memref<?xf64>
  %k = func.call @keeps(%kept) : (memref<?xf64>) -> memref<?xf64>
  %freed = memref.alloc(%c3) : memref<?xf64>
  func.call @frees(%freed) : (memref<?xf64>) -> ()
  %read = memref.alloc(%c3) : memref<?xf64>
  %v = func.call @reads(%read) : (memref<?xf64>) -> f64
  memref.dealloc %read : memref<?xf64>
  %big = memref.alloc(%n) : memref<?xf64>
  memref.store %v, %big[%n] : memref<?xf64>
  memref.dealloc %big : memref<?xf64>
  %huge = memref.alloc() : memref<1000xf64>
  memref.dealloc %huge : memref<1000xf64>
  func.return %returned : memref<?xf64>
}"""
    m = parse_module(text)
    promote_scratch(m)
    f = next(op for op in m.ops if op.sym_name.data == "f")
    kinds = {op.memref.name_hint: (op.name, "ad.workspace" in op.attributes)
             for op in f.walk() if op.name in ("memref.alloc", "memref.alloca")}
    assert kinds == {
        "returned": ("memref.alloc", False),
        "kept": ("memref.alloc", False),
        "freed": ("memref.alloc", False),
        "read": ("memref.alloca", False),
        "big": ("memref.alloc", True),
        "huge": ("memref.alloc", True),  # over max-bytes: a workspace
    }
    assert sum(op.name == "memref.dealloc" for op in f.walk()) == 2  # big's and huge's


def test_growable_tape_of_a_while_loop_reuses_its_workspace(rng):
    def halvings(x):
        s = 0.0
        for i in range(len(x)):
            v = x[i]
            while v > 0.1:
                v = v * 0.5
                s += np.sin(v)
        return s

    x = 1.0 + 10.0 * rng.random(50)
    g = adpasses.grad(adpasses.jit(halvings))
    assert_matches(g(x), finite_differences(halvings, (x,), (0,))[0], what="halvings")
    assert allocations_of(lambda: g(x)) == 0
    for workspace, expected in ((True, 0), (False, None)):
        from adpasses.frontend import arg_type, build_module
        from adpasses.native.llvm_jit import compile_module
        from adpasses.transforms.reverse_pass import differentiate

        module, name = build_module(halvings, [arg_type(x, 0, "x")])
        gname = differentiate(module, name, ["dup"], ["active"]).name
        h = compile_module(module, workspace=workspace)[gname]
        h(x, np.zeros(50), 1.0)
        again = allocations_of(lambda: h(x, np.zeros(50), 1.0))
        if expected is None:
            assert again > 0  # workspace=False: allocated and freed per call, as the IR says
        else:
            assert again == expected
