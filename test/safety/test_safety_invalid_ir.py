"""Invalid IR and one dialect registry (issue 13, item 10).

- `ad-reverse` verifies the module (op verifiers and SSA dominance, which
  xDSL's verifier skips) before differentiating: a non-dominating use is a
  one-line error at its location, not a wrong gradient, in `ad-opt`,
  `ad-run`, and with `--disable-verify`.
- `scf.for` with an integer (non-index) induction variable is
  differentiated (the reverse loop counts in the same type).
- `ad-opt`, `ad-run` and `compile_module` parse with one registry
  (`adpasses.core.context.make_context`): the same inputs are accepted by all
  three, and affine code is lowered to scf where it runs.
"""

from __future__ import annotations

import numpy as np
import pytest

from adpasses.core.context import make_context, parse_module
from adpasses.core.diagnostics import CompileError
from adpasses.native.llvm_jit import compile_module
from adpasses.core.verify import check_dominance
from isolate import run_tool

WRAPPER = """
func.func @main() {
  %a = arith.constant 3.0 : f64
  %s = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%a, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "df = {}\\n", %d : f64
  func.return
}
"""

NON_DOMINATING = {
    # r15: a use before its definition in the same block.
    "same_block": ("""func.func @f(%x: f64) -> f64 {
  %y = "arith.addf"(%x, %z) : (f64, f64) -> f64
  %z = arith.mulf %x, %x : f64
  func.return %y : f64
}""", 2, "'arith.addf' uses a value of 'arith.mulf' before its definition"),
    # A loop body using a value defined after the loop.
    "nested_region": ("""func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> (f64) {
    %t = arith.mulf %a, %late : f64
    scf.yield %t : f64
  }
  %late = arith.addf %x, %x : f64
  func.return %r : f64
}""", 6, "'arith.mulf' uses a value of 'arith.addf' before its definition"),
    # The bad use is in a callee that the reverse pass inlines.
    "callee": ("""func.func private @h(%v: f64) -> f64 {
  %y = "arith.mulf"(%v, %w) : (f64, f64) -> f64
  %w = arith.addf %v, %v : f64
  func.return %y : f64
}
func.func @f(%x: f64) -> f64 {
  %r = func.call @h(%x) : (f64) -> f64
  func.return %r : f64
}""", 2, "'arith.mulf' uses a value of 'arith.addf' before its definition"),
    # One op's result used by an op in its own region.
    "own_region": ("""func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %x) -> (f64) {
    %t = arith.mulf %a, %r : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}""", 5, "'arith.mulf' uses a value of 'scf.for' before its definition"),
}


@pytest.fixture
def write(tmp_path):
    def _write(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return _write


@pytest.mark.parametrize("case", sorted(NON_DOMINATING))
@pytest.mark.parametrize("how", ["ad-opt --reverse", "ad-opt -p ad-reverse --disable-verify",
                                 "ad-run"])
def test_non_dominating_use_is_a_one_line_error(write, case, how):
    text, line, message = NON_DOMINATING[case]
    path = write(f"{case}.mlir", text + WRAPPER)
    tool, *flags = how.split()
    r = run_tool(tool, *flags, path)
    assert r.returncode == 1, str(r)
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert lines == [f"{path}:{line}:{lines[0].split(':')[2]}: error: {message}"], str(r)


def test_dominance_check_is_linear():
    """A 20000-op function with far-apart uses: the check numbers each
    block once (xDSL's is_before_in_block walks the block per query)."""
    import time

    n = 20000
    body = ["func.func @f(%x: f64) -> f64 {", "  %v0 = arith.mulf %x, %x : f64"]
    body += [f"  %v{i} = arith.addf %v{i - 1}, %v{i // 2} : f64" for i in range(1, n)]
    body.append(f"  func.return %v{n - 1} : f64\n}}")
    module = parse_module("\n".join(body))
    start = time.perf_counter()
    check_dominance(module)
    assert time.perf_counter() - start < 2.0


def test_op_verifier_failure_under_disable_verify(write):
    text = """func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = "scf.for"(%c0, %c1, %c1, %x) ({
  ^bb0(%i: index, %a: f64):
    "scf.yield"() : () -> ()
  }) : (index, index, index, f64) -> f64
  func.return %r : f64
}"""
    path = write("yield.mlir", text + WRAPPER)
    r = run_tool("ad-opt", "-p", "ad-reverse", "--disable-verify", path)
    assert r.returncode == 1
    assert r.stderr.strip() == (f"{path}:4:3: error: 'scf.for' op scf.yield expected 1 args, "
                                "but got 0. The scf.for must yield its loop-carried variables.")


# -- scf.for over iN -------------------------------------------------------------------------


def test_scf_for_i32_induction_variable_is_differentiated(write):
    """The repro `scf_for_i32_iv_assertion.mlir` raised AssertionError
    without a location; x^ub at x = 1.5, ub = 4 has derivative 13.5."""
    text = """func.func @reduce_i32(%x: f32, %ub: i32) -> f32 {
  %lb = arith.constant 0 : i32
  %step = arith.constant 1 : i32
  %sum_0 = arith.constant 1.0 : f32
  %sum = scf.for %iv2 = %lb to %ub step %step iter_args(%sum_iter = %sum_0) -> (f32) : i32 {
    %sum_next = arith.mulf %sum_iter, %x : f32
    scf.yield %sum_next : f32
  }
  return %sum : f32
}
func.func @main() {
  %x = arith.constant 1.5 : f32
  %ub = arith.constant 4 : i32
  %one = arith.constant 1.0 : f32
  %d = ad.autodiff @reduce_i32(%x, %ub, %one) {activity = [active, const], ret_activity = [active]} : (f32, i32, f32) -> f32
  %e = arith.extf %d : f32 to f64
  printf.print_format "{}\\n", %e : f64
  func.return
}"""
    path = write("i32.mlir", text)
    r = run_tool("ad-opt", "--reverse", path)
    assert r.returncode == 0 and "AssertionError" not in r.stderr, str(r)
    r = run_tool("ad-run", path)
    assert r.returncode == 0, str(r)
    assert float(r.stdout) == pytest.approx(13.5)


# -- one registry ------------------------------------------------------------------------------

REGISTRY_INPUTS = {
    "ub.poison": ("""func.func @f(%x: f64) -> f64 {
  %p = ub.poison : f64
  %c = arith.constant false
  %y = arith.select %c, %p, %x : f64
  %z = arith.mulf %y, %x : f64
  func.return %z : f64
}""", 2.0 * 3.0),
    "affine": ("""func.func @f(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %r = affine.for %i = 0 to 2 iter_args(%acc = %one) -> (f64) {
    %n = arith.mulf %acc, %x : f64
    affine.yield %n : f64
  }
  func.return %r : f64
}""", 2.0 * 3.0),
}


@pytest.mark.parametrize("name", sorted(REGISTRY_INPUTS))
def test_every_tool_accepts_the_same_dialects(write, name):
    text, derivative = REGISTRY_INPUTS[name]
    path = write(f"{name}.mlir", text + WRAPPER)
    r = run_tool("ad-opt", path)
    assert r.returncode == 0, str(r)
    r = run_tool("ad-opt", "--reverse", path)
    assert r.returncode == 0, str(r)
    r = run_tool("ad-run", path)
    assert r.returncode == 0, str(r)
    assert r.stdout.strip() == f"df = {derivative:g}"
    compiled = compile_module(text)
    assert compiled["f"](3.0) == pytest.approx(9.0)


def test_every_tool_rejects_the_same_unknown_dialect(write):
    text = """func.func @f(%x: f64) -> f64 {
  %y = "nosuch.op"(%x) : (f64) -> f64
  func.return %y : f64
}"""
    path = write("unknown.mlir", text)
    expected = f"{path}:2:19: error: Operation nosuch.op is not registered"
    for tool in ("ad-opt", "ad-run"):
        r = run_tool(tool, path)
        assert r.returncode == 1 and r.stderr.strip() == expected, str(r)
    with pytest.raises(CompileError, match="<compile_module>:2:19: error: Operation nosuch.op is "
                                           "not registered"):
        compile_module(text)


def test_the_registry_is_one_function():
    """ad-opt, ad-run and compile_module all build their context with
    `make_context` (ad-opt adds --allow-unregistered-dialect to it)."""
    import inspect

    import adpasses.native.llvm_jit
    import adpasses.tools.ad_opt
    import adpasses.tools.ad_run
    from adpasses.core import context

    assert "make_context(" in inspect.getsource(adpasses.tools.ad_opt.ADOptMain.__init__)
    assert "make_context()" in inspect.getsource(adpasses.tools.ad_run.run)
    assert "parse_module(" in inspect.getsource(adpasses.native.llvm_jit._compile)
    assert "make_context()" in inspect.getsource(context.parse_module)
    names = set(make_context().registered_dialect_names)
    assert {"affine", "ub", "vector", "ad", "printf", "scf"} <= names


def test_compile_module_leaves_the_callers_affine_module_unchanged():
    text, _ = REGISTRY_INPUTS["affine"]
    module = parse_module(text)
    before = str(module)
    assert compile_module(module)["f"](2.0) == pytest.approx(4.0)
    assert str(module) == before


@pytest.mark.parametrize("n", [0, 1, 5])
def test_affine_runs_through_compile_module(n):
    text = """func.func @f(%x: memref<?xf64>, %n: index) -> f64 {
  %z = arith.constant 0.0 : f64
  %r = affine.for %i = 0 to %n iter_args(%acc = %z) -> (f64) {
    %v = affine.load %x[%i] : memref<?xf64>
    %s = arith.addf %acc, %v : f64
    affine.yield %s : f64
  }
  func.return %r : f64
}"""
    x = np.arange(1.0, n + 1.0)
    assert compile_module(text)["f"](x, n) == pytest.approx(float(np.sum(x)))


@pytest.mark.parametrize("text", ["", "  \n\t\n", "// only a comment\n// and another\n"])
def test_input_with_no_ops_is_an_empty_module(text):
    """As for mlir-opt: nothing to compile is no error (xDSL reported "Could
    not parse entire input!" at the end of the input)."""
    assert list(parse_module(text).ops) == []
    assert compile_module(text).functions == {}


@pytest.mark.parametrize("text, col", [("module {} }", 11), ("42", 1), ("func.func @f() { }\n)", 1)])
def test_a_token_that_starts_no_op_says_what_was_expected(text, col):
    with pytest.raises(CompileError, match=r"expected an operation here \(such as `func.func`") as err:
        parse_module(text, "in.mlir")
    assert f":{col}: error:" in str(err.value) and "Could not parse" not in str(err.value)
