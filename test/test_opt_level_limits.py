"""LLVM's optimisation effort is bounded by function size
(adpasses.native.llvm_jit.OPT_LEVEL_LIMITS, `affordable_level`): a module
whose largest function is past a limit is optimised at a cheaper level,
logged, and recorded in its CompileTimes. The fallback levels are
exercised here on real compilations (with the limits lowered), their
results and bounds checks checked."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from adpasses.native import llvm_jit
from adpasses.native.llvm_jit import affordable_level, compile_module, largest_function_lines


def _ir(*sizes):
    return "".join(f"define void @f{k}() {{\n" + "  ret void\n" * n + "}\n\n" for k, n in enumerate(sizes))


def test_largest_function_lines():
    assert largest_function_lines("; no functions\ndeclare void @g()\n") == 0
    assert largest_function_lines(_ir(5, 40, 7)) == largest_function_lines(_ir(40)) == 41


def test_levels_follow_the_limits(monkeypatch):
    monkeypatch.setattr(llvm_jit, "OPT_LEVEL_LIMITS", ((3, 100), (2, 200), (1, 300)))
    assert affordable_level(_ir(10, 99), 3) == (3, "")
    level, why = affordable_level(_ir(10, 150), 3)
    assert level == 2 and "151 lines of LLVM IR" in why and "O2" in why
    assert affordable_level(_ir(250), 3)[0] == 1
    assert affordable_level(_ir(250), 2)[0] == 1
    assert affordable_level(_ir(301), 3)[0] == 0
    # A level asked for below the one the size allows stays.
    assert affordable_level(_ir(150), 1) == (1, "")
    assert affordable_level(_ir(10**6), 0) == (0, "")


def test_the_shipped_limits_are_decreasing_levels_with_increasing_sizes():
    levels = [lvl for lvl, _ in llvm_jit.OPT_LEVEL_LIMITS]
    sizes = [n for _, n in llvm_jit.OPT_LEVEL_LIMITS]
    assert levels == [3, 2, 1] and sizes == sorted(sizes) and sizes[0] >= 10_000


KERNEL = """func.func @f(%x: memref<?xf64>, %i: index) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %zero = arith.constant {zero} : f64
  %s = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {{
    %v = memref.load %x[%k] : memref<?xf64>
    %t = math.tanh %v : f64
    %a = arith.addf %acc, %t : f64
    scf.yield %a : f64
  }}
  %e = memref.load %x[%i] : memref<?xf64>
  %r = arith.addf %s, %e : f64
  func.return %r : f64
}}"""


@pytest.mark.parametrize("limits, expected", [
    (((3, 10**6), (2, 10**6), (1, 10**6)), 3),
    (((3, 5), (2, 10**6), (1, 10**6)), 2),
    (((3, 5), (2, 5), (1, 10**6)), 1),
    (((3, 5), (2, 5), (1, 5)), 0),
])
def test_a_module_past_a_limit_is_compiled_at_the_cheaper_level(monkeypatch, caplog, limits, expected):
    monkeypatch.setattr(llvm_jit, "OPT_LEVEL_LIMITS", limits)
    # A text of its own per case: no module compiled by another case is reused.
    text = KERNEL.format(zero=f"{expected}.0e-300")
    with caplog.at_level(logging.WARNING, logger="adpasses"):
        compiled = compile_module(text)
    assert compiled.times.opt_level == expected
    reduced = [r.getMessage() for r in caplog.records if "optimised at O" in r.getMessage()]
    if expected == 3:
        assert compiled.times.reduced == "" and not reduced
    else:
        assert f"optimised at O{expected}" in compiled.times.reduced
        assert len(reduced) == 1 and "@f" in reduced[0] and compiled.times.reduced in reduced[0]
    x = np.random.default_rng(expected).uniform(-1, 1, 1000)
    got = compiled["f"](x, 7)
    assert got == pytest.approx(float(np.sum(np.tanh(x)) + x[7]), rel=1e-12)
    with pytest.raises(IndexError):  # bounds checks stay at every level
        compiled["f"](x, 1000)


def test_optimized_module_uses_the_same_limits(monkeypatch, caplog):
    """`ad-opt --emit=llvm-ir-opt`'s path (optimized_module)."""
    from adpasses.core.context import parse_module
    from adpasses.lowering import emit_llvm_ir

    monkeypatch.setattr(llvm_jit, "OPT_LEVEL_LIMITS", ((3, 5), (2, 5), (1, 5)))
    ir = emit_llvm_ir(parse_module(KERNEL.format(zero="0.0"), "<test>"))
    with caplog.at_level(logging.WARNING, logger="adpasses"):
        mod = llvm_jit.optimized_module(ir)
    assert any("optimised at O0" in r.getMessage() for r in caplog.records)
    # At O0 the loop is still there, as written.
    assert "tanh" in str(mod)
