"""Every scalar rule of every table against central finite differences.

One parametrised test over the whole rule table: a function applying the op
to its arguments (all float operands active) is differentiated, compiled and
compared with finite differences at several random points inside the op's
domain. Adding a rule adds a test case.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, math

from adpasses.reverse.rules import ZERO_DERIVATIVE, ScalarRule, rule_table
from gradcheck import check_gradient

# Operand ranges keeping each op inside its domain and away from kinks.
DOMAIN = {
    math.LogOp: (0.2, 3.0), math.Log2Op: (0.2, 3.0), math.Log10Op: (0.2, 3.0),
    math.Log1pOp: (-0.5, 3.0), math.SqrtOp: (0.2, 3.0), math.RsqrtOp: (0.2, 3.0),
    math.CbrtOp: (0.2, 3.0), math.AsinOp: (-0.8, 0.8), math.AcosOp: (-0.8, 0.8),
    math.PowFOp: (0.3, 2.0), math.TanOp: (-1.2, 1.2),
}


def source_for(cls) -> tuple[str, list[str]]:  # type: ignore[no-untyped-def]
    """MLIR text of @f applying `cls`, and the arguments' activities."""
    name = cls.name
    if cls is arith.SelectOp:
        return ("""func.func @f(%a: f64, %b: f64) -> f64 {
  %c = arith.cmpf olt, %a, %b : f64
  %r = arith.select %c, %a, %b : f64
  func.return %r : f64
}""", ["active", "active"])
    if cls is math.FPowIOp:
        return ("""func.func @f(%a: f64, %n: i32) -> f64 {
  %r = math.fpowi %a, %n : f64, i32
  func.return %r : f64
}""", ["active", "const"])
    if cls is arith.ExtFOp:
        return ("""func.func @f(%h: f32) -> f64 {
  %r = arith.extf %h : f32 to f64
  %s = arith.mulf %r, %r : f64
  %t = arith.truncf %s : f64 to f32
  func.return %s : f64
}""", ["active"])
    if cls is arith.TruncFOp:
        return ("""func.func @f(%a: f64) -> f64 {
  %h = arith.truncf %a : f64 to f32
  %r = arith.extf %h : f32 to f64
  func.return %r : f64
}""", ["active"])
    arity = len(cls.get_irdl_definition().operands)
    args = ", ".join(f"%a{k}: f64" for k in range(arity))
    operands = ", ".join(f"%a{k}" for k in range(arity))
    return (f"""func.func @f({args}) -> f64 {{
  %r = {name} {operands} : f64
  func.return %r : f64
}}""", ["active"] * arity)


def scalar_rules():
    return sorted(
        (cls for cls, r in rule_table().items() if isinstance(r, ScalarRule)),
        key=lambda c: c.name,
    )


@pytest.mark.parametrize("cls", scalar_rules(), ids=lambda c: c.name)
def test_rule_matches_finite_differences(cls):
    text, acts = source_for(cls)
    rng = np.random.default_rng(hash(cls.name) % 2**32)
    lo, hi = DOMAIN.get(cls, (-1.5, 1.5))
    rule = rule_table()[cls]
    for _ in range(4):
        args: list = []
        for act in acts:
            if act == "const":
                args.append(int(rng.integers(-3, 5)))
            else:
                args.append(float(rng.uniform(lo, hi)))
        if cls in (arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp, arith.MinnumfOp,
                   arith.SelectOp) and abs(args[0] - args[1]) < 1e-3:
            args[1] += 0.1  # away from the tie, where the derivative jumps
        if cls in (arith.TruncFOp, arith.ExtFOp):
            # f32 values: finite differences see f32 rounding steps, so use
            # hand derivations (truncf: d = 1; extf then square: d = 2h).
            _check_f32(cls, text, args[0])
            continue
        if cls is math.AbsFOp and abs(args[0]) < 1e-3:
            args[0] = 0.5
        result = check_gradient(text, "f", acts, ["active"], args, rtol=1e-6, atol=1e-8)
        if rule is ZERO_DERIVATIVE:
            assert all(abs(a) == 0.0 for a in result.analytic)


def _check_f32(cls, text: str, a: float) -> None:  # type: ignore[no-untyped-def]
    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import differentiate

    m = parse_module(text)
    g = differentiate(m, "f", ["active"], ["active"])
    d = compile_module(m)[g.name](a, 2.5)
    h = float(np.float32(a))
    expected = 2.5 if cls is arith.TruncFOp else 2.5 * 2 * h
    assert d == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("n, expected", [(0, 0.0), (1, 1.0), (2, 0.0), (3, 0.0)])
@pytest.mark.parametrize("constant", [True, False], ids=["constant-n", "dynamic-n"])
def test_fpowi_derivative_at_zero(n: int, expected: float, constant: bool) -> None:
    """d a^n / da at a = 0: 0 for n = 0 (not 0 * 0^-1 = 0 * inf = NaN;
    fuzzer seeds 2604, 3319, 7520, 7744, 8579, 9373, 9915), with the
    exponent a constant and a runtime value."""
    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import differentiate

    if constant:
        text = f"""func.func @f(%a: f64) -> f64 {{
  %n = arith.constant {n} : i32
  %r = math.fpowi %a, %n : f64, i32
  func.return %r : f64
}}"""
        acts, args = ["active"], (0.0,)
    else:
        text, acts, args = source_for(math.FPowIOp)[0], ["active", "const"], (0.0, n)
    m = parse_module(text)
    g = differentiate(m, "f", acts, ["active"])
    d = compile_module(m)[g.name](*args, 1.0)
    assert d == expected


@pytest.mark.parametrize("a, b, da, db", [
    (0.0, 0.0, 0.0, 0.0),   # a^0 is constant in a; log(0) replaced (JAX's convention)
    (0.0, 2.0, 0.0, 0.0),   # 0^b = 0 for b > 0: both one-sided derivatives are 0
    (0.0, 1.0, 1.0, 0.0),
    (2.0, 0.0, 0.0, float(np.log(2.0))),
    (1.5, 2.5, 2.5 * 1.5 ** 1.5, 1.5 ** 2.5 * float(np.log(1.5))),
])
def test_powf_derivatives_at_the_edges(a: float, b: float, da: float, db: float) -> None:
    """d a^b at a = 0 or b = 0 (hand-derived): finite, never 0 * inf = NaN."""
    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import differentiate

    m = parse_module("""func.func @f(%a: f64, %b: f64) -> f64 {
  %r = math.powf %a, %b : f64
  func.return %r : f64
}""")
    g = differentiate(m, "f", ["active", "active"], ["active"])
    got_a, got_b = compile_module(m)[g.name](a, b, 1.0)
    assert got_a == pytest.approx(da, rel=1e-14, abs=0) and got_b == pytest.approx(db, rel=1e-14, abs=0)
