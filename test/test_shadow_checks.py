"""Shadow accesses in reverse sweeps carry no bounds checks; instead the
gradient function checks once, at entry, that every shadow argument has its
primal's sizes (`ad.shadow_check`). A caller passing a wrong-shape shadow
gets a ValueError naming the shadow, not a crash or a silent overrun."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects import func, memref

import adpasses
from adpasses.core import stop_codes
from adpasses.core.context import parse_module
from adpasses.dialects.ad import ShadowCheckOp
from adpasses.native.llvm_jit import compile_module
from adpasses.analysis.memref_views import memory_object
from adpasses.transforms.reverse_pass import ReverseOptions, differentiate
from frontend_kernels import inplace_square
from test_reverse_kernels import INPLACE_SQUARE

# A 2-d argument read through a row subview, and a local buffer.
ROWS = """
func.func @rows(%a: memref<?x?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %m = memref.dim %a, %c0 : memref<?x?xf64>
  %n = memref.dim %a, %c1 : memref<?x?xf64>
  %t = memref.alloc(%n) : memref<?xf64>
  scf.for %j = %c0 to %n step %c1 {
    memref.store %z, %t[%j] : memref<?xf64>
  }
  scf.for %i = %c0 to %m step %c1 {
    %row = memref.subview %a[%i, 0] [1, %n] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[1], offset: ?>>
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %row[%j] : memref<?xf64, strided<[1], offset: ?>>
      %o = memref.load %t[%j] : memref<?xf64>
      %p = arith.mulf %v, %v : f64
      %s = arith.addf %o, %p : f64
      memref.store %s, %t[%j] : memref<?xf64>
    }
  }
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %t[%j] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    %s = arith.addf %acc, %w : f64
    scf.yield %s : f64
  }
  memref.dealloc %t : memref<?xf64>
  func.return %r : f64
}
"""


def gradient_text(source: str, name: str, policy: str = "minimal") -> tuple[str, str]:
    """(text of the module with @name's gradient, the gradient's name): what
    `ad-opt --reverse` prints."""
    module = parse_module(source, "test.mlir")
    g = differentiate(module, name, ["dup"], ["active"],
                      options=ReverseOptions(cache_policy=policy))
    return str(module), g.name


def gradient_function(text: str, name: str) -> func.FuncOp:
    module = parse_module(text, "test.mlir")
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)


@pytest.mark.parametrize("source,name", [(INPLACE_SQUARE, "sq"), (ROWS, "rows")])
def test_shadow_accesses_are_unchecked_and_checked_at_entry(source, name):
    text, gname = gradient_text(source, name)
    g = gradient_function(text, gname)
    block = g.body.block
    primal, shadow = block.args[0], block.args[1]
    first = block.first_op
    assert isinstance(first, ShadowCheckOp)
    assert first.primal is primal and first.shadow is shadow
    shadow_accesses = [op for op in g.walk() if isinstance(op, (memref.LoadOp, memref.StoreOp))
                       and memory_object(op.memref) is shadow]
    assert shadow_accesses
    assert all("ad.unchecked" in op.attributes for op in shadow_accesses)
    # The forward sweep's primal accesses keep their checks.
    primal_accesses = [op for op in g.walk() if isinstance(op, (memref.LoadOp, memref.StoreOp))
                       and memory_object(op.memref) is primal]
    assert any("ad.unchecked" not in op.attributes for op in primal_accesses)


def test_inplace_square_gradient_and_mismatched_shadow_through_compile_module():
    text, gname = gradient_text(INPLACE_SQUARE, "sq")
    compiled = compile_module(text)
    grad = compiled[gname]
    x0 = np.linspace(-2.0, 2.0, 1001)
    x, dx = x0.copy(), np.ones_like(x0)
    grad(x, dx, 1.0)
    # Enzyme's semantics: the incoming shadow seeds x's final contents x0^2.
    np.testing.assert_allclose(dx, 2.0 * x0 + 1.0 * 2.0 * x0)
    np.testing.assert_allclose(x, x0 * x0)
    # A shadow shorter (or longer) than its primal stops the call at entry,
    # before anything is written.
    for size in (1000, 10, 0, 1002):
        x, dx = x0.copy(), np.zeros(size)
        with pytest.raises(ValueError, match=rf"shadow %dx \(argument 1\) has size {size} in "
                                             r"dimension 0, but its primal %x \(argument 0\) has size "
                                             r"1001: .*\(in @sq_grad\w*, at "):
            grad(x, dx, 1.0)
        np.testing.assert_array_equal(x, x0)
        assert not dx.any()
    # The error slot is clean afterwards: a right call works.
    x, dx = x0.copy(), np.zeros_like(x0)
    grad(x, dx, 1.0)
    np.testing.assert_allclose(dx, 2.0 * x0)


def test_strided_shadow_is_accepted():
    """Only sizes must match: a shadow may be a strided view."""
    text, gname = gradient_text(INPLACE_SQUARE.replace("memref<?xf64>", "memref<?xf64, strided<[?], offset: ?>>"),
                                "sq")
    grad = compile_module(text)[gname]
    x0 = np.linspace(-1.0, 1.0, 64)
    big = np.zeros(3 * 64)
    grad(x0.copy(), big[::3], 1.0)
    np.testing.assert_allclose(big[::3], 2.0 * x0)
    assert not big[1::3].any() and not big[2::3].any()


def test_two_dimensional_mismatch_names_the_dimension():
    text, gname = gradient_text(ROWS, "rows")
    grad = compile_module(text)[gname]
    a = np.random.default_rng(0).standard_normal((4, 5))
    da = np.zeros((4, 5))
    grad(a, da, 1.0)
    t = (a * a).sum(axis=0)
    np.testing.assert_allclose(da, 4.0 * t[None, :] * a)
    with pytest.raises(ValueError, match=r"has size 4 in dimension 1, but its primal %a \(argument 0\) has size 5"):
        grad(a, np.zeros((4, 4)), 1.0)
    with pytest.raises(ValueError, match=r"has size 3 in dimension 0, but its primal %a \(argument 0\) has size 4"):
        grad(a, np.zeros((3, 5)), 1.0)


def test_no_entry_check_without_boundscheck():
    """boundscheck=False compiles the check away (like every other check)."""
    text, gname = gradient_text(INPLACE_SQUARE, "sq")
    compiled = compile_module(text, boundscheck=False)
    # Only the stops that boundscheck=False does not give up remain
    # (allocation sizes, conversions): their third argument is a stop code.
    stops = re.findall(r'call void @"__adpasses_oob"\(i64 [^,]+, i64 [^,]+, i64 (-?\d+)', compiled.llvm_ir)
    assert all(int(code) in stop_codes.CODES for code in stops), stops
    checked = compile_module(text)
    assert len(re.findall(r'call void @"__adpasses_oob"', checked.llvm_ir)) > len(stops)
    x0 = np.linspace(-2.0, 2.0, 101)
    dx = np.zeros_like(x0)
    compiled[gname](x0.copy(), dx, 1.0)
    np.testing.assert_allclose(dx, 2.0 * x0)


def test_reverse_loops_have_no_shadow_bounds_checks():
    text, gname = gradient_text(INPLACE_SQUARE, "sq")
    ir = compile_module(text).llvm_ir
    body = ir[ir.index(f'@"u.{gname}"('):]
    body = body[:body.index("\n}\n")]
    compares = [line for line in body.splitlines() if "icmp" in line and "dx.size0" in line]
    assert compares == [next(line for line in body.splitlines() if "icmp ne" in line)]
    assert "x.size0" in compares[0]


def test_autodiff_with_mismatched_shadow():
    x0 = np.linspace(-1.0, 1.0, 50)
    dx = np.zeros(50)
    adpasses.autodiff(inplace_square, adpasses.Duplicated(x0.copy(), dx))
    np.testing.assert_allclose(dx, 2.0 * x0)
    with pytest.raises(ValueError, match="shadow"):
        adpasses.autodiff(inplace_square, adpasses.Duplicated(x0.copy(), np.zeros(49)))
    g = adpasses.grad(adpasses.jit(inplace_square))
    np.testing.assert_allclose(g(x0.copy()), 2.0 * x0)


CALLER = INPLACE_SQUARE + """
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %seed: f64) {
  ad.autodiff @sq(%x, %dx, %seed) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}
"""


@pytest.mark.parametrize("binding", ["shim", "ctypes"])
def test_mismatch_inside_a_callee_stops_the_caller(binding):
    """ad.autodiff replaced by a call: the check in the gradient function
    stops the public caller, whatever the binding."""
    from xdsl.context import Context

    from adpasses.transforms.reverse_pass import ReversePass

    module = parse_module(CALLER, "test.mlir")
    ReversePass().apply(Context(), module)
    main = compile_module(str(module), binding=binding)["main"]
    x0 = np.linspace(-1.0, 1.0, 20)
    dx = np.zeros(20)
    main(x0.copy(), dx, 1.0)
    np.testing.assert_allclose(dx, 2.0 * x0)
    with pytest.raises(ValueError, match=r"main\(\): shadow %dx \(argument 1\) has size 21 in dimension 0, "
                                         r"but its primal %x \(argument 0\) has size 20"):
        main(x0.copy(), np.zeros(21), 1.0)
    dx = np.zeros(20)
    main(x0.copy(), dx, 1.0)  # the error slot was cleared
    np.testing.assert_allclose(dx, 2.0 * x0)


# The forward sweep's loop over x is dead in a gradient without the primal
# result. Its only effect is the check of x[i] for i < m: dead-code removal
# (with or without canonicalisation) keeps it, hoisted out of the loop and
# pinned (`ad.keep`), so that xDSL passes run later keep it too, and the
# reverse accumulation, whose twin it is, needs no check of its own. If the
# twin is gone all the same, the accumulation keeps its own check.
PARTIAL_SUM = """
func.func @psum(%x: memref<?xf64>, %m: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %m step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %s = arith.addf %acc, %v : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
"""


def _psum_gradient(simplify: bool, unchecked_primal: bool = False,
                   between: str | None = None) -> tuple[str, str]:
    """The gradient of PARTIAL_SUM; with `between`, an xDSL pass pipeline run
    after differentiation and before ad-elide-shadow-checks."""
    source = PARTIAL_SUM
    if unchecked_primal:
        source = source.replace("memref.load %x[%i] :", "memref.load %x[%i] {ad.unchecked} :")
    module = parse_module(source, "test.mlir")
    # Reversed after the forward loop (not loop-locally): the twins are in
    # two loops, the case these tests are about.
    g = differentiate(module, "psum", ["dup", "const"], ["active"],
                      options=ReverseOptions(simplify=simplify, elide_checks=between is None,
                                             loop_local=False))
    if between is not None:
        from xdsl.passes import PassPipeline
        from xdsl.transforms import get_all_passes

        from adpasses.core.context import shared_context
        from adpasses.transforms.elide_shadow_checks import elide_shadow_checks

        PassPipeline.parse_spec(get_all_passes(), between).apply(shared_context(), module)
        elide_shadow_checks(g.function)
    return str(module), g.name


def _shadow_and_forward_accesses(text: str, gname: str) -> tuple[list, list]:
    g = gradient_function(text, gname)
    shadow, primal = g.body.block.args[1], g.body.block.args[0]
    accesses = [op for op in g.walk() if isinstance(op, (memref.LoadOp, memref.StoreOp))]
    return ([op for op in accesses if memory_object(op.memref) is shadow],
            [op for op in accesses if memory_object(op.memref) is primal])


def _psum_raises_at_19(text: str, gname: str) -> None:
    grad = compile_module(text)[gname]
    x = np.ones(4)
    buf = np.zeros(32)
    dx = buf[:4]
    grad(x, dx, 3, 1.0)
    np.testing.assert_array_equal(buf[:4], [1.0, 1.0, 1.0, 0.0])
    buf[:] = 0.0
    # The forward loop's dead load x[i] is checked once before the loop at
    # i = 0 and i = 19 (transforms/dead_forward); without it, the reverse
    # sweep's check of dx[19], the first index it touches, stops the call.
    with pytest.raises(IndexError, match="index 19 is out of bounds for axis 0 with size 4"):
        grad(x, dx, 20, 1.0)
    assert not buf[4:].any(), "the gradient wrote past its shadow"


@pytest.mark.parametrize("simplify,between", [(True, None), (False, None), (True, "canonicalize"),
                                              (False, "canonicalize"), (False, "cse,dce")])
def test_shadow_access_is_unchecked_while_the_forward_check_is_there(simplify, between):
    text, gname = _psum_gradient(simplify, between=between)
    shadow_accesses, forward = _shadow_and_forward_accesses(text, gname)
    assert shadow_accesses and len(forward) == 2  # the first and the last index
    assert all("ad.unchecked" not in op.attributes for op in forward)
    assert all("ad.unchecked" in op.attributes for op in shadow_accesses)
    _psum_raises_at_19(text, gname)


def test_shadow_access_keeps_its_check_when_its_twin_is_gone():
    """A pass that erased the forward check (here: by hand, keep and all)
    before ad-elide-shadow-checks leaves the accumulation checked."""
    from xdsl.rewriter import Rewriter

    from adpasses.dialects.ad import KeepOp
    from adpasses.transforms.elide_shadow_checks import elide_shadow_checks

    module = parse_module(PARTIAL_SUM, "test.mlir")
    g = differentiate(module, "psum", ["dup", "const"], ["active"],
                      options=ReverseOptions(simplify=False, elide_checks=False, loop_local=False))
    x = g.function.body.block.args[0]
    for op in list(g.function.walk()):
        if isinstance(op, KeepOp) or (isinstance(op, memref.LoadOp) and memory_object(op.memref) is x):
            Rewriter.erase_op(op, safe_erase=False)
    elision = elide_shadow_checks(g.function)
    assert not elision.elided and len(elision.kept) == 2
    text = str(module)
    shadow_accesses, forward = _shadow_and_forward_accesses(text, g.name)
    assert shadow_accesses and not forward
    assert all("ad.unchecked" not in op.attributes for op in shadow_accesses)
    _psum_raises_at_19(text, g.name)


def test_shadow_access_of_an_unchecked_primal_access_stays_checked():
    text, gname = _psum_gradient(simplify=False, unchecked_primal=True)
    g = gradient_function(text, gname)
    shadow = g.body.block.args[1]
    shadow_accesses = [op for op in g.walk() if isinstance(op, (memref.LoadOp, memref.StoreOp))
                       and memory_object(op.memref) is shadow]
    assert shadow_accesses
    assert not any("ad.unchecked" in op.attributes for op in shadow_accesses)


# A copy into a local buffer, then reads of the buffer: the reverse of the
# copy accumulates into dsrc at indices of dtmp, which the forward copy
# checked (destination no larger than source).
COPY = """
func.func @cp(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %t = memref.alloc(%n) : memref<?xf64>
  "memref.copy"(%x, %t) : (memref<?xf64>, memref<?xf64>) -> ()
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %t[%i] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    %s = arith.addf %acc, %w : f64
    scf.yield %s : f64
  }
  memref.dealloc %t : memref<?xf64>
  func.return %r : f64
}
"""


def test_copy_shadow_accesses_are_unchecked_and_right():
    text, gname = gradient_text(COPY, "cp")
    g = gradient_function(text, gname)
    shadow_accesses = [op for op in g.walk() if isinstance(op, (memref.LoadOp, memref.StoreOp))
                       and (memory_object(op.memref) is g.body.block.args[1]
                            or isinstance(memory_object(op.memref).owner, memref.AllocOp))
                       and op.memref.name_hint != "t"]
    assert shadow_accesses
    assert all("ad.unchecked" in op.attributes for op in shadow_accesses)
    grad = compile_module(text)[gname]
    x = np.linspace(-1.0, 1.0, 9)
    dx = np.zeros(9)
    grad(x, dx, 1.0)
    np.testing.assert_allclose(dx, 2.0 * x)
    with pytest.raises(ValueError, match="shadow %dx"):
        grad(x, np.zeros(8), 1.0)


def test_loop_local_reverse_checks_each_forward_access_before_its_shadow_twin():
    """Reversed loop-locally (the default), the forward load and its shadow
    accumulation are in one iteration: the load keeps its check, the
    accumulation needs none, and an index past the end stops the call at
    the forward access (the primal's message) before the shadow is touched
    there; the iterations before it have accumulated their derivatives."""
    module = parse_module(PARTIAL_SUM, "test.mlir")
    g = differentiate(module, "psum", ["dup", "const"], ["active"], options=ReverseOptions())
    text = str(module)
    shadow_accesses, forward = _shadow_and_forward_accesses(text, g.name)
    assert shadow_accesses and len(forward) == 1
    assert "ad.unchecked" not in forward[0].attributes
    assert all("ad.unchecked" in op.attributes for op in shadow_accesses)
    grad = compile_module(text)[g.name]
    x, buf = np.ones(4), np.zeros(32)
    dx = buf[:4]
    grad(x, dx, 3, 1.0)
    np.testing.assert_array_equal(buf[:4], [1.0, 1.0, 1.0, 0.0])
    buf[:] = 0.0
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        grad(x, dx, 20, 1.0)
    assert not buf[4:].any(), "the gradient wrote past its shadow"
