"""Forward mode never turns a bounds error into a silent out-of-bounds
access, whatever xDSL pass runs after `ad-forward` (canonicalize, cse,
dce, with `ad-elide-shadow-checks` never, last or before them), and a
tangent of the wrong size stops the call.

The kernels read and write at an index argument: called with it out of
bounds, the primal raises IndexError, and so must every tangent function
(the primal's own accesses come first, and tangent accesses keep their
checks); the arrays' neighbours (guard zones) must not change.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.passes import PassPipeline

from adpasses.core.context import parse_module, shared_context
from adpasses.native.llvm_jit import compile_module

KERNEL = """
func.func @f(%x: memref<?xf64>, %k: index, %y: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  %a = memref.load %x[%k] : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (f64) {
    %j = arith.addi %i, %k : index
    %b = memref.load %x[%j] : memref<?xf64>
    %p = arith.mulf %b, %acc : f64
    memref.store %p, %y[%i] : memref<?xf64>
    scf.yield %p : f64
  }
  func.return %r : f64
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %k: index, %y: memref<?xf64>, %dy: memref<?xf64>) -> (f64, f64) {
  %r:2 = ad.fwddiff @f(%x, %dx, %k, %y, %dy) {activity = [dup, const, dup], ret_activity = [dup]} : (memref<?xf64>, memref<?xf64>, index, memref<?xf64>, memref<?xf64>) -> (f64, f64)
  func.return %r#0, %r#1 : f64, f64
}
"""

SUFFIXES = ["", ",canonicalize", ",cse", ",dce", ",canonicalize,cse,dce", ",dce,cse,canonicalize"]
ELIDE = ",ad-elide-shadow-checks"


def pipelines() -> list[str]:
    out = []
    for forward in ("ad-forward", "ad-forward{simplify=false}"):
        for suffix in SUFFIXES:
            out += [forward + suffix, forward + suffix + ELIDE, forward + ELIDE + suffix]
    return out


def _passes() -> dict:
    from xdsl.transforms import get_all_passes

    from adpasses.transforms.registry import AD_PASSES

    table = dict(get_all_passes())
    table.update(AD_PASSES)
    return table


def _guarded(values: np.ndarray, guard: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """A view of `values` inside a larger buffer of sentinel values."""
    buffer = np.full(values.size + 2 * guard, 7.25)
    buffer[guard:guard + values.size] = values
    return buffer, buffer[guard:guard + values.size]


@pytest.mark.parametrize("spec", pipelines())
def test_out_of_bounds_tangents_raise(spec: str) -> None:
    module = parse_module(KERNEL, "kernel.mlir")
    PassPipeline.parse_spec(_passes(), spec).apply(shared_context(), module)
    compiled = compile_module(module)
    name = next(op.sym_name.data for op in module.ops if "_fwd_" in op.sym_name.data)
    tangent = compiled[name]
    bufs = [_guarded(np.arange(1.0, 5.0)) for _ in range(4)]
    (bx, x), (bdx, dx), (by, y), (bdy, dy) = bufs[0], bufs[1], bufs[2], bufs[3]
    before = [b.copy() for b, _ in bufs]
    for k in (4, 2, -1):  # x[k] out of bounds; x[i + k] out of bounds in the loop
        with pytest.raises(IndexError):
            tangent(x, dx, k, y, dy)
        for (b, _), old in zip(bufs, before):
            assert np.array_equal(b[:8], old[:8]) and np.array_equal(b[-8:], old[-8:])
    r, dr = tangent(x, dx, 0, y[:2], dy[:2])  # in bounds: runs
    assert np.isfinite(r) and np.isfinite(dr)


def test_a_tangent_of_the_wrong_size_stops_the_call() -> None:
    module = parse_module(KERNEL, "kernel.mlir")
    PassPipeline.parse_spec(_passes(), "ad-forward,ad-elide-shadow-checks").apply(shared_context(), module)
    compiled = compile_module(module)
    name = next(op.sym_name.data for op in module.ops if "_fwd_" in op.sym_name.data)
    with pytest.raises(ValueError, match=r"shadow %dx \(argument 1\) has size 3 in dimension 0, but its primal %x"):
        compiled[name](np.ones(4), np.ones(3), 0, np.ones(2), np.ones(2))
