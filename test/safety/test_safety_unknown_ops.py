"""Ops the differentiator did not understand gave zero gradients (issue 13,
item 5): scf.index_switch, scf.execute_region, memref.alloca_scope,
affine.for, arith.select between memrefs, arith.bitcast round trips.

Each now has a derivative rule (checked against central finite differences
on random inputs, under both cache policies and without activity
analysis), and every op the activity analysis cannot see through that
touches active data is an error at its location, never a zero.
"""

from __future__ import annotations

import numpy as np
import pytest

from adpasses.core.context import parse_module
from adpasses.core.diagnostics import CompileError
from adpasses.transforms.reverse_pass import differentiate
from adpasses.transforms.reverse_pipeline import ReverseOptions
from gradcheck import check_gradient

POLICIES = [("minimal", True), ("tape-all", True), ("minimal", False)]
POLICY_IDS = ["minimal", "tape-all", "no-activity"]


def grad_check(text, name, acts, rets, args, policy=("minimal", True)):
    return check_gradient(text, name, acts, rets, args, policy=policy[0], use_activity=policy[1])


def rand(rng, n, lo=-1.5, hi=1.5):
    return rng.uniform(lo, hi, n)


# -- scf.index_switch ---------------------------------------------------------------

INDEX_SWITCH = """
func.func @f(%x: memref<?xf64>, %y: memref<?xf64>, %w: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %k = arith.remsi %i, %c3 : index
    %v = memref.load %x[%i] : memref<?xf64>
    %t = scf.index_switch %k -> f64
    case 0 {
      %e = math.sin %v : f64
      %p = arith.mulf %e, %w : f64
      scf.yield %p : f64
    }
    case 2 {
      %q = arith.mulf %v, %v : f64
      memref.store %q, %y[%i] : memref<?xf64>
      %s = arith.mulf %q, %acc : f64
      scf.yield %s : f64
    }
    default {
      %e = math.exp %v : f64
      scf.yield %e : f64
    }
    %a = arith.addf %acc, %t : f64
    scf.yield %a : f64
  }
  func.return %r : f64
}
"""


@pytest.mark.parametrize("policy", POLICIES, ids=POLICY_IDS)
@pytest.mark.parametrize("seed", range(3))
def test_index_switch_in_a_loop(policy, seed):
    rng = np.random.default_rng(seed)
    n = 7
    grad_check(INDEX_SWITCH, "f", ["dup", "dup", "active"], ["active"],
               [rand(rng, n, -0.8, 0.8), rand(rng, n), float(rng.uniform(-1, 1))], policy)


INDEX_SWITCH_SCALAR = """
func.func @f(%x: f64, %k: index) -> f64 {
  %r = scf.index_switch %k -> f64
  case 0 {
    %y = arith.mulf %x, %x : f64
    scf.yield %y : f64
  }
  case 5 {
    %y = math.exp %x : f64
    scf.yield %y : f64
  }
  default {
    scf.yield %x : f64
  }
  func.return %r : f64
}
"""


@pytest.mark.parametrize("k,expected", [(0, lambda x: 2 * x), (5, np.exp), (3, lambda x: 1.0)])
def test_index_switch_each_case(k, expected):
    rng = np.random.default_rng(k)
    x = float(rng.uniform(-2, 2))
    r = grad_check(INDEX_SWITCH_SCALAR, "f", ["active", "const"], ["active"], [x, k])
    seed_scale = r.analytic[0] / expected(x)
    assert 0.5 <= seed_scale <= 1.5  # the random seed in [0.5, 1.5]


# -- scf.execute_region ---------------------------------------------------------------

EXECUTE_REGION = """
func.func @f(%x: memref<?xf64>, %w: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %t, %u = scf.execute_region -> (f64, f64) {
      %v = memref.load %x[%i] : memref<?xf64>
      %e = math.sin %v : f64
      %p = arith.mulf %e, %acc : f64
      %q = arith.mulf %v, %w : f64
      memref.store %q, %x[%i] : memref<?xf64>
      scf.yield %p, %e : f64, f64
    }
    %a = arith.addf %t, %u : f64
    %b = arith.addf %a, %w : f64
    scf.yield %b : f64
  }
  func.return %r : f64
}
"""


@pytest.mark.parametrize("policy", POLICIES, ids=POLICY_IDS)
@pytest.mark.parametrize("seed", range(3))
def test_execute_region_in_a_loop_overwriting_its_input(policy, seed):
    rng = np.random.default_rng(10 + seed)
    grad_check(EXECUTE_REGION, "f", ["dup", "active"], ["active"],
               [rand(rng, 6), float(rng.uniform(-1, 1))], policy)


# -- memref.alloca_scope ----------------------------------------------------------------

ALLOCA_SCOPE = """
func.func @f(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %t = "memref.alloca_scope"() ({
      %buf = memref.alloca(%c2) : memref<?xf64>
      %v = memref.load %x[%i] : memref<?xf64>
      %e = math.exp %v : f64
      memref.store %e, %buf[%c0] : memref<?xf64>
      %s = arith.mulf %v, %acc : f64
      memref.store %s, %buf[%c1] : memref<?xf64>
      %a = memref.load %buf[%c0] : memref<?xf64>
      %b = memref.load %buf[%c1] : memref<?xf64>
      %p = arith.mulf %a, %b : f64
      "memref.alloca_scope.return"(%p) : (f64) -> ()
    }) : () -> f64
    %y = arith.addf %acc, %t : f64
    %y2 = arith.addf %y, %acc : f64
    scf.yield %y2 : f64
  }
  func.return %r : f64
}
"""


@pytest.mark.parametrize("policy", POLICIES, ids=POLICY_IDS)
@pytest.mark.parametrize("seed", range(3))
def test_alloca_scope_with_active_local_buffer(policy, seed):
    rng = np.random.default_rng(20 + seed)
    grad_check(ALLOCA_SCOPE, "f", ["dup"], ["active"], [rand(rng, 5, -0.5, 0.5) + 1.0], policy)


ALLOCA_SCOPE_BIG = """
func.func @f(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %big = arith.constant 4096 : index
  %two = arith.constant 2.0 : f64
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %t = "memref.alloca_scope"() ({
      %buf = memref.alloca(%big) : memref<?xf64>
      %v = memref.load %x[%i] : memref<?xf64>
      %e = math.exp %v : f64
      memref.store %e, %buf[%c0] : memref<?xf64>
      %s = arith.mulf %v, %two : f64
      memref.store %s, %buf[%c1] : memref<?xf64>
      %a = memref.load %buf[%c0] : memref<?xf64>
      %b = memref.load %buf[%c1] : memref<?xf64>
      %p = arith.mulf %a, %b : f64
      "memref.alloca_scope.return"(%p) : (f64) -> ()
    }) : () -> f64
    %y = arith.addf %acc, %t : f64
    scf.yield %y : f64
  }
  func.return %r : f64
}
"""


def test_alloca_scope_releases_its_allocas_in_a_long_loop():
    """3000 iterations of a 32 KiB dynamic alloca (96 MiB in all, far over
    the 8 MiB stack) in the forward and the reverse sweep: each scope (the
    reverse of an alloca_scope is an alloca_scope) frees its allocas."""
    from isolate import run_isolated

    r = run_isolated(f"""
        import numpy as np
        from adpasses.core.context import parse_module
        from adpasses.native.llvm_jit import compile_module
        from adpasses.transforms.reverse_pass import differentiate
        m = parse_module({ALLOCA_SCOPE_BIG!r}, "big.mlir")
        g = differentiate(m, "f", ["dup"], ["active"])
        c = compile_module(m)
        x = np.linspace(-1, 1, 3000)
        dx = np.zeros_like(x)
        c[g.name](x, dx, 1.0)
        expected = 2 * np.exp(x) * (x + 1)
        assert np.allclose(c["f"](x), np.sum(2 * x * np.exp(x)))
        assert np.allclose(dx, expected, rtol=1e-12), np.max(np.abs(dx - expected))
        print("ok")
    """)
    assert r.returncode == 0 and "ok" in r.stdout, str(r)


# -- arith.select between memrefs -------------------------------------------------------

SELECT_ARGS = """
func.func @f(%c: i1, %a: memref<3xf64>, %b: memref<3xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %m = arith.select %c, %a, %b : memref<3xf64>
  %u = memref.load %m[%c0] : memref<3xf64>
  %v = memref.load %m[%c2] : memref<3xf64>
  %p = arith.mulf %u, %v : f64
  memref.store %p, %m[%c0] : memref<3xf64>
  %q = memref.load %a[%c0] : memref<3xf64>
  %r = arith.mulf %q, %u : f64
  func.return %r : f64
}
"""


@pytest.mark.parametrize("policy", POLICIES, ids=POLICY_IDS)
@pytest.mark.parametrize("cond", [True, False])
def test_select_between_memref_arguments(policy, cond):
    rng = np.random.default_rng(int(cond))
    grad_check(SELECT_ARGS, "f", ["const", "dup", "dup"], ["active"],
               [cond, rand(rng, 3), rand(rng, 3)], policy)


SELECT_LOCAL = """
func.func @f(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %p = memref.alloc(%n) : memref<?xf64>
  %q = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    memref.store %v, %p[%i] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    memref.store %w, %q[%i] : memref<?xf64>
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %k = arith.remsi %i, %c2 : index
    %even = arith.cmpi eq, %k, %c0 : index
    %m = arith.select %even, %p, %q : memref<?xf64>
    %view = memref.subview %m[%i] [1] [1] : memref<?xf64> to memref<1xf64, strided<[1], offset: ?>>
    %old = memref.load %p[%i] : memref<?xf64>
    %v = memref.load %view[%c0] : memref<1xf64, strided<[1], offset: ?>>
    %s = math.sin %v : f64
    memref.store %s, %view[%c0] : memref<1xf64, strided<[1], offset: ?>>
    %e = memref.load %q[%i] : memref<?xf64>
    %t = arith.mulf %old, %e : f64
    %a = arith.addf %acc, %t : f64
    scf.yield %a : f64
  }
  memref.dealloc %p : memref<?xf64>
  memref.dealloc %q : memref<?xf64>
  func.return %r : f64
}
"""


@pytest.mark.parametrize("policy", POLICIES, ids=POLICY_IDS)
@pytest.mark.parametrize("seed", range(2))
def test_select_between_local_buffers_in_a_loop(policy, seed):
    """The store through the selected view overwrites what %old (from %p)
    and %e (from %q) read: the cache may reload neither after the loop."""
    rng = np.random.default_rng(30 + seed)
    grad_check(SELECT_LOCAL, "f", ["dup"], ["active"], [rand(rng, 6)], policy)


def test_select_result_aliases_both_operands_in_the_cache_plan():
    """The alias analysis knows the select's result is %p or %q: the store
    through it clobbers the loads of both, which are taped, not reloaded
    from memory the store has overwritten; the load of the argument %x is
    not clobbered (neither allocation is %x), so it is reloaded."""
    module = parse_module(SELECT_LOCAL, "t.mlir")
    g = differentiate(module, "f", ["dup"], ["active"])
    entries = {(e.value, e.location): e for e in g.cache_report.entries}
    old = entries[("%old", "t.mlir:21:5")]
    e = entries[("%e", "t.mlir:25:5")]
    x = entries[("%v", "t.mlir:11:5")]
    assert old.decision == "tape" and "%m (arith.select at t.mlir:19:5) is %p or %q: it may be %p" \
        in old.reason
    assert e.decision == "tape" and "it may be %q" in e.reason
    assert x.decision == "reload"


def test_select_alias_answers():
    from xdsl.dialects import func

    from adpasses.analysis.alias import AliasAnalysis, AliasKind

    module = parse_module(SELECT_LOCAL, "t.mlir")
    f = next(op for op in module.ops if isinstance(op, func.FuncOp))
    aa = AliasAnalysis(f)
    values = {v.name_hint: v for v in aa.memref_values()}
    x, p, q, m = values["x"], values["p"], values["q"], values["m"]
    assert aa.alias(m, p).kind is AliasKind.MAY_ALIAS
    assert aa.alias(m, q).kind is AliasKind.MAY_ALIAS
    assert aa.alias(m, x).kind is AliasKind.NO_ALIAS  # two allocations, neither is %x
    assert aa.alias(p, q).kind is AliasKind.NO_ALIAS
    assert aa.escape(p) is None  # through a select is not an escape


# -- arith.bitcast ----------------------------------------------------------------------------

BITCAST = """
func.func @f(%x: f64, %w: f64) -> f64 {
  %i = arith.bitcast %x : f64 to i64
  %y = arith.bitcast %i : i64 to f64
  %r = arith.mulf %y, %x : f64
  %s = math.sin %w : f64
  %j = arith.bitcast %s : f64 to i64
  %t = arith.bitcast %j : i64 to f64
  %u = arith.mulf %r, %t : f64
  func.return %u : f64
}
"""


@pytest.mark.parametrize("policy", POLICIES, ids=POLICY_IDS)
@pytest.mark.parametrize("seed", range(3))
def test_bitcast_round_trip_carries_the_derivative(policy, seed):
    rng = np.random.default_rng(40 + seed)
    x, w = float(rng.uniform(-2, 2)), float(rng.uniform(-1.5, 1.5))
    r = grad_check(BITCAST, "f", ["active", "active"], ["active"], [x, w], policy)
    assert abs(r.analytic[0]) > 1e-3  # not the zero it used to be


BITCAST_F32 = """
func.func @f(%h: f32) -> f32 {
  %j = arith.bitcast %h : f32 to i32
  %k = arith.bitcast %j : i32 to f32
  %r = arith.mulf %k, %h : f32
  func.return %r : f32
}
"""


def test_bitcast_round_trip_in_f32():
    from adpasses.native.llvm_jit import compile_module

    module = parse_module(BITCAST_F32, "f32.mlir")
    g = differentiate(module, "f", ["active"], ["active"])
    c = compile_module(module)
    for h in np.random.default_rng(4).uniform(-3, 3, 5).astype(np.float32):
        assert c[g.name](float(h), 1.0) == pytest.approx(2 * float(h), rel=1e-6)


BITCAST_SIGN_TEST = """
func.func @f(%x: f64) -> f64 {
  %i = arith.bitcast %x : f64 to i64
  %c = arith.constant 0 : i64
  %neg = arith.cmpi slt, %i, %c : i64
  %as_int = arith.sitofp %i : i64 to f64
  %m = arith.mulf %x, %x : f64
  %r = arith.select %neg, %x, %m : f64
  func.return %r : f64
}
"""


@pytest.mark.parametrize("x", [-1.3, 0.7])
def test_float_bits_used_for_control_only_are_fine(x):
    """Bits compared (a sign test) or converted with sitofp (piecewise
    constant) carry no derivative and need none."""
    grad_check(BITCAST_SIGN_TEST, "f", ["active"], ["active"], [x])


BITS_CHANGED = {
    "xori": """
func.func @f(%x: f64) -> f64 {
  %i = arith.bitcast %x : f64 to i64
  %m = arith.constant -9223372036854775808 : i64
  %j = arith.xori %i, %m : i64
  %y = arith.bitcast %j : i64 to f64
  func.return %y : f64
}""",
    "memory": """
func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %buf = memref.alloca() : memref<1xi64>
  %i = arith.bitcast %x : f64 to i64
  memref.store %i, %buf[%c0] : memref<1xi64>
  %j = memref.load %buf[%c0] : memref<1xi64>
  %y = arith.bitcast %j : i64 to f64
  func.return %y : f64
}""",
    "loop": """
func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %i = arith.bitcast %x : f64 to i64
  %j = scf.for %k = %c0 to %c3 step %c1 iter_args(%b = %i) -> (i64) {
    scf.yield %b : i64
  }
  %y = arith.bitcast %j : i64 to f64
  func.return %y : f64
}""",
    "branch": """
func.func @f(%x: f64, %c: i1) -> f64 {
  %i = arith.bitcast %x : f64 to i64
  %one = arith.constant 1 : i64
  %j = scf.if %c -> (i64) {
    %k = arith.addi %i, %one : i64
    scf.yield %k : i64
  } else {
    scf.yield %i : i64
  }
  %y = arith.bitcast %j : i64 to f64
  func.return %y : f64
}""",
}


@pytest.mark.parametrize("case", sorted(BITS_CHANGED))
def test_float_bits_changed_or_moved_are_an_error(case):
    text = BITS_CHANGED[case]
    acts = ["active", "const"] if case == "branch" else ["active"]
    module = parse_module(text, "bits.mlir")
    # ad-scalar-replace turns the one-element buffer of "memory" into a
    # direct round trip (accepted: test_bits_through_a_small_buffer_...);
    # with the buffer kept, its bits must still be refused.
    options = ReverseOptions(scalar_replace=False)
    with pytest.raises(CompileError) as err:
        differentiate(module, "f", acts, ["active"], options=options)
    msg = str(err.value)
    assert msg.startswith("bits.mlir:")
    assert "'arith.bitcast'" in msg and "direct round trip" in msg and "float ops" in msg
    line = int(msg.split(":")[1])
    assert "arith.bitcast %j" in text.splitlines()[line - 1] or "i64 to f64" in text.splitlines()[line - 1]


def test_bits_through_a_small_buffer_become_a_direct_round_trip():
    """By default the one-element buffer is scalar-replaced before the sweep
    is planned: the bits go straight back to the float, an exact copy whose
    derivative is 1 (as the direct round trip's)."""
    for x in np.random.default_rng(7).uniform(-3, 3, 4):
        grad_check(BITS_CHANGED["memory"], "f", ["active"], ["active"], [float(x)])


# -- affine --------------------------------------------------------------------------------

AFFINE = """
func.func @f(%x: memref<?xf64>, %n: index) -> f64 {
  %z = arith.constant 0.0 : f64
  %r = affine.for %i = 1 to %n iter_args(%acc = %z) -> (f64) {
    %v = affine.load %x[%i - 1] : memref<?xf64>
    %u = affine.load %x[%i] : memref<?xf64>
    %p = arith.mulf %v, %u : f64
    %s = arith.addf %acc, %p : f64
    affine.yield %s : f64
  }
  affine.for %i = 0 to min affine_map<()[s0] -> (s0, 4)>()[%n] step 2 {
    %m = affine.apply affine_map<(d0) -> (d0 mod 3)>(%i)
    %v = affine.load %x[%m + 1] : memref<?xf64>
    %w = math.sin %v : f64
    affine.store %w, %x[%i] : memref<?xf64>
  }
  "affine.if"(%n) <{condition = affine_set<(d0) : (d0 - 3 >= 0)>}> ({
    %v = affine.load %x[2] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    affine.store %w, %x[0] : memref<?xf64>
    affine.yield
  }, {}) : (index) -> ()
  %last = affine.load %x[0] : memref<?xf64>
  %t = arith.addf %r, %last : f64
  func.return %t : f64
}
"""


@pytest.mark.parametrize("policy", POLICIES, ids=POLICY_IDS)
@pytest.mark.parametrize("n", [2, 3, 6])
def test_affine_loops_loads_stores_and_ifs(policy, n):
    rng = np.random.default_rng(50 + n)
    grad_check(AFFINE, "f", ["dup", "const"], ["active"], [rand(rng, n + 1), n], policy)


def test_affine_gradient_of_the_repro_is_not_zero():
    text = """
func.func @pow4(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %r = affine.for %i = 0 to 4 iter_args(%acc = %one) -> (f64) {
    %n = arith.mulf %acc, %x : f64
    affine.yield %n : f64
  }
  return %r : f64
}"""
    r = grad_check(text, "pow4", ["active"], ["active"], [1.5])
    assert r.analytic[0] > 10


def test_affine_op_without_lowering_is_an_error():
    text = """
func.func @f(%x: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %v = affine.vector_load %x[%c0] : memref<4xf64>, vector<2xf64>
  %s = memref.load %x[%c0] : memref<4xf64>
  func.return %s : f64
}"""
    module = parse_module(text, "vec.mlir")
    with pytest.raises(CompileError, match=r"vec.mlir:4:\d+: error: 'affine.vector_load': "
                                           r"is not supported by adpasses .*scf.for"):
        differentiate(module, "f", ["dup"], ["active"])


# -- scf.for with a non-index induction variable -----------------------------------------------

LOOP_IN = """
func.func @f(%x: f64, %ub: {T}) -> f64 {{
  %lb = arith.constant 1 : {T}
  %step = arith.constant 2 : {T}
  %one = arith.constant 1.0 : f64
  %p = scf.for %i = %lb to %ub step %step iter_args(%acc = %one) -> (f64) : {T} {{
    %f = arith.sitofp %i : {T} to f64
    %m = arith.mulf %acc, %x : f64
    %s = arith.addf %m, %f : f64
    scf.yield %s : f64
  }}
  func.return %p : f64
}}
"""


@pytest.mark.parametrize("itype", ["i32", "i64", "i16"])
@pytest.mark.parametrize("ub", [0, 1, 6, 9])
@pytest.mark.parametrize("policy", POLICIES[:2], ids=POLICY_IDS[:2])
def test_scf_for_with_integer_induction_variable(itype, ub, policy):
    rng = np.random.default_rng(ub)
    grad_check(LOOP_IN.format(T=itype), "f", ["active", "const"], ["active"],
               [float(rng.uniform(0.5, 1.2)), ub], policy)


# -- ops the analysis does not understand: errors, never zeros ---------------------------------

UNKNOWN = {
    "memref.atomic_rmw": ("""
func.func @f(%x: memref<4xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %old = "memref.atomic_rmw"(%a, %x, %c0) <{kind = 0 : i64}> : (f64, memref<4xf64>, index) -> f64
  %v = memref.load %x[%c0] : memref<4xf64>
  func.return %v : f64
}""", ["dup", "active"], ["active"], 4, "the value %a"),
    "memref.view": ("""
func.func @f(%x: memref<32xi8>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.view %x[%c0][] : memref<32xi8> to memref<4xf64>
  memref.store %a, %v[%c0] : memref<4xf64>
  %r = memref.load %v[%c0] : memref<4xf64>
  func.return %r : f64
}""", ["const", "active"], ["active"], 4, "the memref %x"),
    "llvm.store": ("""
func.func @f(%a: f64) -> f64 {
  %one = arith.constant 1 : i64
  %p = llvm.alloca %one x f64 : (i64) -> !llvm.ptr
  llvm.store %a, %p : f64, !llvm.ptr
  %r = llvm.load %p : !llvm.ptr -> f64
  func.return %r : f64
}""", ["active"], ["active"], 5, "the value %a"),
}


@pytest.mark.parametrize("name", sorted(UNKNOWN))
def test_unknown_op_touching_active_data_is_an_error(name):
    text, acts, rets, line, touched = UNKNOWN[name]
    module = parse_module(text, "u.mlir")
    with pytest.raises(CompileError) as err:
        differentiate(module, "f", acts, rets)
    msg = str(err.value)
    assert msg.startswith(f"u.mlir:{line}:"), msg
    assert f"'{name}': is not understood by reverse mode" in msg
    assert touched in msg and "rewrite it with scf.for" in msg
    assert "\n" not in msg


def test_call_without_body_writing_active_memory_is_an_error():
    text = """
func.func private @fill(memref<4xf64>, f64)
func.func @f(%x: memref<4xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  func.call @fill(%x, %a) : (memref<4xf64>, f64) -> ()
  %v = memref.load %x[%c0] : memref<4xf64>
  func.return %v : f64
}"""
    module = parse_module(text, "c.mlir")
    with pytest.raises(CompileError, match=r"^c.mlir:5:3: error: 'func.call': calls '@fill', "
                                           r"which has no body to differentiate, with the memref %x"):
        differentiate(module, "f", ["dup", "active"], ["active"])


def test_unknown_op_on_const_data_is_fine():
    """An op the analysis does not understand is an error only when it
    touches active data: here memref.atomic_rmw updates a const buffer.
    (scf.parallel, the earlier example, is differentiated now: it becomes
    scf.for loops, `ad-expand-upstream-ops`.)"""
    text = """
func.func @f(%x: memref<4xf64>, %t: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f64
  %old = "memref.atomic_rmw"(%two, %t, %c1) <{kind = 0 : i64}> : (f64, memref<4xf64>, index) -> f64
  %a = memref.load %x[%c1] : memref<4xf64>
  %b = memref.load %t[%c1] : memref<4xf64>
  %r = arith.mulf %a, %b : f64
  func.return %r : f64
}"""
    module = parse_module(text, "ok.mlir")
    g = differentiate(module, "f", ["dup", "const"], ["active"])
    assert g.activity.unknown and g.activity.unknown[0].name == "memref.atomic_rmw"


def test_memref_carried_through_an_if_is_an_error_not_a_zero():
    text = """
func.func @f(%c: i1, %a: memref<f64>, %b: memref<f64>) -> f64 {
  %m = scf.if %c -> (memref<f64>) {
    scf.yield %a : memref<f64>
  } else {
    scf.yield %b : memref<f64>
  }
  %v = memref.load %m[] : memref<f64>
  func.return %v : f64
}"""
    module = parse_module(text, "if.mlir")
    with pytest.raises(CompileError, match=r"^if.mlir:3:\d+: error: an active memref that is not "
                                           r"an argument, an allocation or a view"):
        differentiate(module, "f", ["const", "dup", "dup"], ["active"])


def test_select_with_a_const_memref_is_an_error_naming_it():
    text = """
func.func @f(%c: i1, %a: memref<f64>, %b: memref<f64>) -> f64 {
  %m = arith.select %c, %a, %b : memref<f64>
  %v = memref.load %m[] : memref<f64>
  func.return %v : f64
}"""
    module = parse_module(text, "s.mlir")
    with pytest.raises(CompileError, match=r"^s.mlir:3:\d+: error: memory of argument %b receives "
                                           r"derivatives but has no shadow: declare it 'dup'"):
        differentiate(module, "f", ["const", "dup", "const"], ["active"])
