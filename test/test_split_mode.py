"""Split mode (`ad.autodiff {split = forward|reverse}`, issue 20): the
augmented primal returns the primal results and a tape, the reverse
function takes the shadows, the seeds and the tape. On random inputs the
split gradient must equal the combined one (`ad.autodiff` with the primal)
and central finite differences of the primal, for loops whose values are
taped, local arrays the reverse reads back, nested loops, branches, a
mutated argument, two lanes and strong zero; and a tape used wrongly is
an error at the op."""

from __future__ import annotations

import numpy as np
import pytest

from adpasses.core.context import parse_module
from adpasses.core.diagnostics import CompileError

# Each kernel: @f(%x: memref<?xf64>, %a: f64) -> f64.
KERNELS = {
    # A product through a loop: every iteration's partial product and sin taped.
    "product": """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %one = arith.constant 1.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %one) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %e = math.sin %v : f64
    %p = arith.mulf %acc, %e : f64
    %q = arith.addf %p, %a : f64
    scf.yield %q : f64
  }
  func.return %s : f64""",
    # A local heap array written in one loop, read in another, overwritten
    # after: the reverse needs what it held (taped or reloaded), and frees it.
    "local_array": """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %y = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %e = math.sin %v : f64
    %w = arith.mulf %e, %a : f64
    memref.store %w, %y[%i] : memref<?xf64>
  }
  %z = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %w = memref.load %y[%i] : memref<?xf64>
    %v = memref.load %x[%i] : memref<?xf64>
    %t = arith.mulf %w, %w : f64
    %u = arith.mulf %t, %v : f64
    %r = arith.addf %acc, %u : f64
    %w2 = math.exp %r : f64
    memref.store %w2, %y[%i] : memref<?xf64>
    scf.yield %r : f64
  }
  %last = arith.subi %n, %c1 : index
  %yl = memref.load %y[%last] : memref<?xf64>
  %out = arith.addf %s, %yl : f64
  memref.dealloc %y : memref<?xf64>
  func.return %out : f64""",
    # A small stack array indexed by a loop counter: it must outlive the
    # forward function (it becomes a heap allocation the reverse frees).
    "stack_array": """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %buf = memref.alloca() : memref<4xf64>
  %z = arith.constant 0.0 : f64
  scf.for %k = %c0 to %c4 step %c1 {
    %kk = arith.index_cast %k : index to i64
    %kf = arith.sitofp %kk : i64 to f64
    %w = arith.addf %kf, %a : f64
    %e = math.sin %w : f64
    memref.store %e, %buf[%k] : memref<4xf64>
  }
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %k = arith.remui %i, %c4 : index
    %b = memref.load %buf[%k] : memref<4xf64>
    %v = memref.load %x[%i] : memref<?xf64>
    %p = arith.mulf %b, %v : f64
    %q = math.sin %p : f64
    %r = arith.addf %acc, %q : f64
    scf.yield %r : f64
  }
  func.return %s : f64""",
    # A branch per iteration (its condition taped) and a nested loop.
    "branch_nested": """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %z = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %big = arith.cmpf ogt, %v, %half : f64
    %w = scf.if %big -> (f64) {
      %l = math.log %v : f64
      scf.yield %l : f64
    } else {
      %m = arith.mulf %v, %a : f64
      scf.yield %m : f64
    }
    %t = scf.for %j = %c0 to %c3 step %c1 iter_args(%in = %w) -> (f64) {
      %c = math.cos %in : f64
      %d = arith.mulf %c, %a : f64
      scf.yield %d : f64
    }
    %r = arith.addf %acc, %t : f64
    scf.yield %r : f64
  }
  func.return %s : f64""",
    # x overwritten in place: the reverse reads its final contents.
    "mutates": """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %z = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %e = math.exp %v : f64
    %w = arith.mulf %e, %a : f64
    memref.store %w, %x[%i] : memref<?xf64>
    %t = arith.mulf %w, %v : f64
    %r = arith.addf %acc, %t : f64
    scf.yield %r : f64
  }
  func.return %s : f64""",
}


def _module(body: str, extra: str = "") -> str:
    return f"""
func.func @f(%x: memref<?xf64>, %a: f64) -> f64 {{{body}
}}
func.func @split(%x: memref<?xf64>, %dx: memref<?xf64>, %a: f64, %seed: f64) -> (f64, f64) {{
  %y, %t = ad.autodiff @f(%x, %a) {{activity = [dup, active], ret_activity = [active], split = forward{extra}}}
    : (memref<?xf64>, f64) -> (f64, !ad.split_tape)
  %da = ad.autodiff @f(%dx, %seed, %t) {{activity = [dup, active], ret_activity = [active], split = reverse{extra}}}
    : (memref<?xf64>, f64, !ad.split_tape) -> f64
  func.return %y, %da : f64, f64
}}
func.func @combined(%x: memref<?xf64>, %dx: memref<?xf64>, %a: f64, %seed: f64) -> (f64, f64) {{
  %y, %da = ad.autodiff @f(%x, %dx, %a, %seed) {{activity = [dup, active], ret_activity = [active], with_primal{extra}}}
    : (memref<?xf64>, memref<?xf64>, f64, f64) -> (f64, f64)
  func.return %y, %da : f64, f64
}}
"""


def _compile(text: str):  # type: ignore[no-untyped-def]
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import ReversePass
    from adpasses.core.context import make_context

    module = parse_module(text, "split.mlir")
    ReversePass().apply(make_context(), module)
    return module, compile_module(module)


def _loss(f, x, a, seed, sx):  # type: ignore[no-untyped-def]
    """seed * f(x, a) + <sx, final x> (Enzyme's functional: shadows seed the final contents)."""
    work = x.copy()
    return seed * f(work, a) + float(sx @ work)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_split_equals_combined_and_finite_differences(kernel: str) -> None:
    module, compiled = _compile(_module(KERNELS[kernel]))
    names = [op.sym_name.data for op in module.ops]
    assert any(n.endswith("_s_aug") for n in names) and any(n.endswith("_s_rev") for n in names)
    f, split, combined = compiled["f"], compiled["split"], compiled["combined"]
    rng = np.random.default_rng(20)
    for _ in range(3):
        n = int(rng.integers(3, 9))
        x, a = rng.uniform(0.1, 1.2, n), float(rng.uniform(0.3, 0.9))
        seed, sx = float(rng.standard_normal()), rng.standard_normal(n)
        xs, dxs = x.copy(), sx.copy()
        y_s, da_s = split(xs, dxs, a, seed)
        xc, dxc = x.copy(), sx.copy()
        y_c, da_c = combined(xc, dxc, a, seed)
        assert y_s == pytest.approx(f(x.copy(), a), rel=1e-14)
        np.testing.assert_allclose(xs, xc, rtol=1e-15)  # the primal's effect on x
        assert y_s == pytest.approx(y_c, rel=1e-14)
        assert da_s == pytest.approx(da_c, rel=1e-12, abs=1e-14)
        np.testing.assert_allclose(dxs, dxc, rtol=1e-12, atol=1e-14)
        # Central differences of the loss, per input.
        h = 1e-6
        fd_a = (_loss(f, x, a + h, seed, sx) - _loss(f, x, a - h, seed, sx)) / (2 * h)
        assert da_s == pytest.approx(fd_a, rel=1e-5, abs=1e-7)
        for i in range(n):
            e = np.zeros(n)
            e[i] = h
            fd = (_loss(f, x + e, a, seed, sx) - _loss(f, x - e, a, seed, sx)) / (2 * h)
            assert dxs[i] == pytest.approx(fd, rel=1e-5, abs=1e-7), (kernel, i)


def test_split_strong_zero_gives_zero_where_the_seed_is_zero() -> None:
    body = WHILE_BODY
    _, compiled = _compile(_module(body, ", strong_zero"))
    x, dx = np.array([0.0, 1.0]), np.zeros(2)
    y, da = compiled["split"](x, dx, 2.0, 0.0)
    assert (y, da) == (0.0, 0.0) and not np.isnan(dx).any()
    x, dx = np.array([4.0, 1.0]), np.zeros(2)
    y, da = compiled["split"](x, dx, 3.0, 1.0)
    assert (y, da, dx[0]) == (6.0, 2.0, 0.75)


def test_split_halves_are_taken_and_returned_by_functions() -> None:
    """Wrappers that return the tape and take it (what --reverse-wrap with
    split writes) carry the tape's values in their signatures."""
    text = """
func.func @f(%x: memref<?xf64>, %a: f64) -> f64 {""" + KERNELS["product"] + """
}
func.func @fwd(%x: memref<?xf64>, %a: f64) -> (f64, !ad.split_tape) {
  %y, %t = ad.autodiff @f(%x, %a) {activity = [const, active], ret_activity = [active], split = forward}
    : (memref<?xf64>, f64) -> (f64, !ad.split_tape)
  func.return %y, %t : f64, !ad.split_tape
}
func.func @rev(%seed: f64, %t: !ad.split_tape) -> f64 {
  %da = ad.autodiff @f(%seed, %t) {activity = [const, active], ret_activity = [active], split = reverse}
    : (f64, !ad.split_tape) -> f64
  func.return %da : f64
}
func.func @both(%x: memref<?xf64>, %a: f64) -> (f64, f64) {
  %one = arith.constant 1.0 : f64
  %y, %t = func.call @fwd(%x, %a) : (memref<?xf64>, f64) -> (f64, !ad.split_tape)
  %da = func.call @rev(%one, %t) : (f64, !ad.split_tape) -> f64
  func.return %y, %da : f64, f64
}
"""
    module, compiled = _compile(text)
    assert "!ad.split_tape" not in str(module)
    x, a = np.array([0.3, 0.7, 1.1]), 0.4
    y, da = compiled["both"](x, a)
    h = 1e-6
    fd = (compiled["f"](x, a + h) - compiled["f"](x, a - h)) / (2 * h)
    assert y == pytest.approx(compiled["f"](x, a)) and da == pytest.approx(fd, rel=1e-6)


MISUSES = {
    "tape of another request": ("""
  %y, %t = ad.autodiff @f(%x, %a) {activity = [dup, active], ret_activity = [active], split = forward}
    : (memref<?xf64>, f64) -> (f64, !ad.split_tape)
  %da = ad.autodiff @f(%seed, %t) {activity = [const, active], ret_activity = [active], split = reverse}
    : (f64, !ad.split_tape) -> f64""", "reads the tape of a split ad.autodiff of @f with activities [dup, active]"),
    "tape through scf.if": ("""
  %y, %t = ad.autodiff @f(%x, %a) {activity = [dup, active], ret_activity = [active], split = forward}
    : (memref<?xf64>, f64) -> (f64, !ad.split_tape)
  %true = arith.constant true
  %t2 = scf.if %true -> (!ad.split_tape) {
    scf.yield %t : !ad.split_tape
  } else {
    scf.yield %t : !ad.split_tape
  }
  %da = ad.autodiff @f(%dx, %seed, %t2) {activity = [dup, active], ret_activity = [active], split = reverse}
    : (memref<?xf64>, f64, !ad.split_tape) -> f64""", "may only be passed to a `split = reverse` ad.autodiff"),
}


@pytest.mark.parametrize("case", sorted(MISUSES))
def test_a_misused_tape_is_an_error_at_the_op(case: str) -> None:
    body, message = MISUSES[case]
    text = ("func.func @f(%x: memref<?xf64>, %a: f64) -> f64 {" + KERNELS["product"] + "\n}\n"
            "func.func @g(%x: memref<?xf64>, %dx: memref<?xf64>, %a: f64, %seed: f64) -> f64 {"
            + body + "\n  func.return %da : f64\n}\n")
    with pytest.raises(CompileError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _compile(text)


WHILE_BODY = """
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<?xf64>
  %r = math.sqrt %v : f64
  %s = arith.mulf %r, %a : f64
  func.return %s : f64"""
"""A loop whose values go on a growable tape (scf.while)."""


def test_a_while_loop_tape_is_handed_over_in_split_mode() -> None:
    """The values of an scf.while loop (a growable tape) leave the forward
    half as a buffer and a count (`ad.tape.export`), and the reverse half
    rebuilds the tape from them (`ad.tape.import`): split = combined =
    central differences, for trip counts from 0 up (it was an error)."""
    body = """
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<?xf64>
  %lim = arith.constant 10.0 : f64
  %r = scf.while (%w = %v) : (f64) -> f64 {
    %go = arith.cmpf olt, %w, %lim : f64
    scf.condition(%go) %w : f64
  } do {
  ^bb0(%w2: f64):
    %m = arith.mulf %w2, %a : f64
    %e = math.sin %m : f64
    %e2 = arith.mulf %e, %e : f64
    %n = arith.addf %e2, %w2 : f64
    %n2 = arith.addf %n, %a : f64
    scf.yield %n2 : f64
  }
  func.return %r : f64"""
    module, compiled = _compile(_module(body))
    text = str(module)
    assert "ad.tape.export" in text and "ad.tape.import" in text
    f, split, combined = compiled["f"], compiled["split"], compiled["combined"]
    rng = np.random.default_rng(22)
    h = 1e-7
    for start in [11.0, 9.9, *rng.uniform(0.1, 9.0, 4)]:  # 0 and 1 iterations, then many
        x, a = np.array([start, 0.3]), float(rng.uniform(0.4, 0.9))
        seed = float(rng.uniform(0.5, 2.0))
        dxs, dxc = np.zeros(2), np.zeros(2)
        y_s, da_s = split(x.copy(), dxs, a, seed)
        y_c, da_c = combined(x.copy(), dxc, a, seed)
        assert y_s == y_c == f(x.copy(), a)
        assert da_s == pytest.approx(da_c, rel=1e-13, abs=1e-15)
        np.testing.assert_allclose(dxs, dxc, rtol=1e-13, atol=1e-15)
        # The trip count is constant near these points: f is smooth there.
        fd_a = (f(x.copy(), a + h) - f(x.copy(), a - h)) / (2 * h)
        fd_x = (f(x + [h, 0.0], a) - f(x - [h, 0.0], a)) / (2 * h)
        assert da_s == pytest.approx(seed * fd_a, rel=1e-5, abs=1e-6)
        assert dxs[0] == pytest.approx(seed * fd_x, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("text, message", [
    ("%y, %t = ad.autodiff @f(%x, %a) {activity = [dup, active], ret_activity = [active], split = forward}"
     " : (memref<?xf64>, f64) -> (f64, !ad.split_tape)\n  "
     "%d = ad.autodiff @f(%dx, %a, %t) {activity = [dup, active], ret_activity = [active], split = reverse, "
     "with_primal} : (memref<?xf64>, f64, !ad.split_tape) -> f64", "with_primal does not apply to the reverse half"),
    ("%t = ad.autodiff @f(%x, %a) {activity = [dup, active], ret_activity = [active], split = forward, "
     "with_primal = [0]} : (memref<?xf64>, f64) -> !ad.split_tape",
     r"returns the primal results \[0\], then an !ad.split_tape"),
    ("%t = ad.autodiff @f(%x, %a) {activity = [dup, active], ret_activity = [active], split = forward, "
     "with_primal = [1]} : (memref<?xf64>, f64) -> !ad.split_tape", r"with_primal = \[1\] must list distinct"),
    ("%y, %t = ad.autodiff @f(%x, %dx, %a) {activity = [dup, active], ret_activity = [active], split = forward}"
     " : (memref<?xf64>, memref<?xf64>, f64) -> (f64, !ad.split_tape)", "split = forward takes the primal arguments"),
    ("%y = ad.autodiff @f(%x, %a) {activity = [dup, active], ret_activity = [active], split = forward}"
     " : (memref<?xf64>, f64) -> f64", "returns the primal results, then an !ad.split_tape"),
    ("%y = ad.autodiff @f(%x, %a) {activity = [dup, active], ret_activity = [active], split = sideways}"
     " : (memref<?xf64>, f64) -> f64", "unknown split 'sideways'"),
])
def test_the_verifier_names_what_a_split_op_takes(text: str, message: str) -> None:
    from adpasses.core.verify import verify_all

    module_text = ("func.func @f(%x: memref<?xf64>, %a: f64) -> f64 {" + KERNELS["product"] + "\n}\n"
                   "func.func @g(%x: memref<?xf64>, %dx: memref<?xf64>, %a: f64) {\n  " + text
                   + "\n  func.return\n}\n")
    with pytest.raises(Exception, match=message):
        verify_all(parse_module(module_text, "split.mlir"))


@pytest.mark.parametrize("body", [KERNELS["local_array"], WHILE_BODY], ids=["local_array", "while_loop"])
def test_upstream_mlir_reads_the_split_halves(tmp_path, body: str) -> None:  # type: ignore[no-untyped-def]
    """--reverse-wrap with split, then --lower-ad-ops: upstream MLIR's parser
    and verifier (jaxlib's bindings) accept both halves and their wrappers,
    also when a growable tape (scf.while) crosses between them."""
    import contextlib
    import io

    ir = pytest.importorskip("jaxlib.mlir.ir", reason="jaxlib (upstream MLIR) is not installed")
    ext = pytest.importorskip("jaxlib.mlir._mlir_libs._jax_mlir_ext")
    from adpasses.tools.ad_opt import main as ad_opt

    path = tmp_path / "f.mlir"
    path.write_text("func.func @f(%x: memref<?xf64>, %a: f64) -> f64 {" + body + "\n}\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert ad_opt([str(path), "--reverse-wrap=fn=f name=df split", "--lower-ad-ops"]) in (0, None)
    text = out.getvalue()
    import re

    assert "func.func @df_aug(" in text and "func.func @df_rev(" in text
    # No ad op or type is left (discardable ad.* attributes may stay).
    assert not re.search(r"^\s*(%[^=]+= )?ad\.", text, re.M) and "!ad." not in text
    registry = ir.DialectRegistry()
    ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    assert ir.Module.parse(text, ctx).operation.verify()
