"""Every entry of the op table against central finite differences.

One parametrised test over the whole op table (`adpasses/ops/`), every
entry checked the same way (JAX-style): a function applying the op to its
arguments (all float operands active) is differentiated, compiled and
compared with finite differences at random points of each operand's domain
(the entry's `domains`, the same the fuzzer guards operands into). Adding an
entry adds a test case; an entry whose partials are wrong fails here.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, math

from adpasses.ops import DOMAINS, OP_TABLE
from adpasses.ops.entry import INTEGER_DOMAINS
from adpasses.ops.partials import trace
from gradcheck import check_gradient


def source_for(cls) -> tuple[str, list[str]]:  # type: ignore[no-untyped-def]
    """MLIR text of @f applying `cls`, and the arguments' activities. An
    i1 operand (domain "cond") compares the two float arguments; an
    integer one ("int", "order": INTEGER_DOMAINS) is a const i32 argument."""
    entry = OP_TABLE[cls]
    name = cls.name
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
    floats = [i for i, d in enumerate(entry.domains) if d != "cond" and d not in INTEGER_DOMAINS]
    params = [f"%a{i}: f64" for i in floats] + [f"%a{i}: i32" for i, d in enumerate(entry.domains)
                                                  if d in INTEGER_DOMAINS]
    body, operands, types = [], [], []
    for i, d in enumerate(entry.domains):
        if d == "cond":
            body.append(f"  %a{i} = arith.cmpf olt, %a{floats[0]}, %a{floats[1]} : f64")
        operands.append(f"%a{i}")
        types.append("i32" if d in INTEGER_DOMAINS else "f64")
    signature = f" : f64, {types[1]}" if set(entry.domains) & set(INTEGER_DOMAINS) else " : f64"
    body.append(f"  %r = {name} {', '.join(operands)}{signature}")
    text = f"func.func @f({', '.join(params)}) -> f64 {{\n" + "\n".join(body) + "\n  func.return %r : f64\n}"
    acts = ["active"] * len(floats) + ["const"] * sum(d in INTEGER_DOMAINS for d in entry.domains)
    return text, acts


def sample(domain: str, rng: np.random.Generator) -> float | int:
    lo, hi = DOMAINS[domain]
    if domain in INTEGER_DOMAINS:
        return int(rng.integers(lo, hi + 1))
    x = float(rng.uniform(lo, hi))
    return x if domain != "nonzero" or rng.random() < 0.5 else -x


def entries():
    return sorted(OP_TABLE, key=lambda c: c.name)


@pytest.mark.parametrize("cls", entries(), ids=lambda c: c.name)
def test_partials_match_finite_differences(cls):
    entry = OP_TABLE[cls]
    text, acts = source_for(cls)
    rng = np.random.default_rng(sum(map(ord, cls.name)))
    partials, _ = trace(entry.partials, None, entry.arity)
    floats = [d for d in entry.domains if d != "cond" and d not in INTEGER_DOMAINS]
    ints = [d for d in entry.domains if d in INTEGER_DOMAINS]
    for _ in range(4):
        args = [sample(d, rng) for d in floats] + [sample(d, rng) for d in ints]
        if cls in (arith.TruncFOp, arith.ExtFOp):
            # f32 values: finite differences see f32 rounding steps, so use
            # hand derivations (truncf: d = 1; extf then square: d = 2h).
            _check_f32(cls, text, args[0])
            continue
        result = check_gradient(text, "f", acts, ["active"], args, rtol=1e-6, atol=1e-8)
        if all(p is None for p in partials):  # piecewise constant
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
