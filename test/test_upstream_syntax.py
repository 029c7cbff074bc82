"""Upstream MLIR syntax adpasses parses (adpasses/core/upstream_syntax.py,
docs/mlir_interop.md): what comes out is xDSL's own op classes, never a
parse hook, in custom and generic form; deferred location aliases resolve
everywhere a location can be."""

from __future__ import annotations

from xdsl.dialects import affine, arith, memref, scf
from xdsl.dialects.builtin import CallSiteLoc, FileLineColLoc, IntAttr, NameLoc, StringAttr

from adpasses.core.context import parse_module
from adpasses.core.upstream_syntax import PARSE_HOOKS

CUSTOM = """
#set = affine_set<(d0)[s0] : (d0 - 1 >= 0)>
memref.global "private" constant @w : memref<2xf64> = dense<[1.0, 2.0]>
func.func @f(%x: memref<?xf64>, %m: memref<2xf64>, %n: index, %b: i1, %k: i64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> f64 {
    scf.yield %a : f64
  }
  %q = scf.if %b -> f64 { scf.yield %r : f64 } else { scf.yield %z : f64 }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf64>
  }
  affine.parallel (%i) = (0) to (symbol(%n)) {
    affine.if #set(%i)[%n] {
      %v = affine.load %x[%i] : memref<?xf64>
    }
  }
  memref.copy %m, %m : memref<2xf64> to memref<2xf64>
  %c = memref.cast %m : memref<2xf64> to memref<?xf64>
  %rk = memref.rank %c : memref<?xf64>
  %s = memref.alloca_scope -> f64 {
    memref.alloca_scope.return %q : f64
  }
  %t = arith.trunci %k overflow<nsw> : i64 to i32
  %e = arith.extui %t : i32 to i64
  return %s : f64
}
"""


def _ops(text: str):
    return list(parse_module(text).walk())


def test_custom_forms_give_xdsl_ops():
    ops = _ops(CUSTOM)
    hooks = set(PARSE_HOOKS.values())
    assert not [op for op in ops if type(op) in hooks]
    kinds = {type(op) for op in ops}
    for cls in (memref.GlobalOp, scf.ForOp, scf.IfOp, scf.ParallelOp, affine.ParallelOp, affine.IfOp,
                memref.CopyOp, memref.CastOp, memref.RankOp, memref.AllocaScopeOp, arith.TruncIOp,
                arith.ExtUIOp):
        assert cls in kinds, cls


def test_generic_forms_give_xdsl_ops():
    generic = """
func.func @f(%x: memref<2xf64>, %k: i64) -> i32 {
  "memref.copy"(%x, %x) : (memref<2xf64>, memref<2xf64>) -> ()
  %t = "arith.trunci"(%k) <{overflowFlags = #arith.overflow<none>}> : (i64) -> i32
  func.return %t : i32
}
"""
    ops = _ops(generic)
    assert {type(op) for op in ops} >= {memref.CopyOp, arith.TruncIOp}
    assert not [op for op in ops if type(op) in set(PARSE_HOOKS.values())]
    trunc = next(op for op in ops if isinstance(op, arith.TruncIOp))
    assert "overflowFlags" not in trunc.properties


def test_location_aliases_defined_after_use_resolve_everywhere():
    text = """
func.func @f(%x: f64 loc(#loc1)) -> f64 {
  %y = arith.addf %x, %x : f64 loc(#loc3)
  func.return %y : f64 loc(#loc2)
} loc(#loc2)
#loc1 = loc("a.py":1:2)
#loc2 = loc("a.py":3:4)
#loc3 = loc(callsite(#loc4 at #loc2))
#loc4 = loc("b.py":5:6)
"""
    module = parse_module(text)
    f = module.body.block.first_op
    assert f.body.block.args[0].location == _loc("a.py", 1, 2)
    add = f.body.block.first_op
    assert isinstance(add.location, CallSiteLoc)
    assert add.location.callee == _loc("b.py", 5, 6)
    assert not any(isinstance(op.location, NameLoc) for op in module.walk())


def _loc(name: str, line: int, col: int) -> FileLineColLoc:
    return FileLineColLoc(StringAttr(name), IntAttr(line), IntAttr(col))


def test_python_path_differentiates_upstream_printed_input():
    """The Python path (parse_module, differentiate, compile_module) on the
    module upstream MLIR printed with debug locations
    (test/lit/upstream/structured_debuginfo.mlir): the gradient of @f
    matches central finite differences."""
    from pathlib import Path

    import numpy as np

    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import differentiate

    text = (Path(__file__).parent / "lit" / "upstream" / "structured_debuginfo.mlir").read_text()
    module = parse_module(text, "structured_debuginfo.mlir")
    main = next(op for op in module.body.block.ops if getattr(op, "sym_name", None) is not None
                and op.sym_name.data == "main")
    main.detach()  # its ad.autodiff is ad-run's business
    grad = differentiate(module, "f", ["dup", "const"], ["active"])
    compiled = compile_module(module)
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, 5)
    dx = np.zeros(5)
    compiled[grad.name](x, dx, 5, 1.0)
    h = 1e-6
    fd = [(compiled["f"](x + h * e, 5) - compiled["f"](x - h * e, 5)) / (2 * h) for e in np.eye(5)]
    np.testing.assert_allclose(dx, fd, rtol=1e-6, atol=1e-8)
