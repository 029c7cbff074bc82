"""The float ops programs use: every op with a reverse rule in
`adpasses/reverse/rules/arith.py` and `math.py` (select, fpowi, extf/truncf and
sitofp have their own nodes in `program.py`).

Per op: its MLIR name, its Python spelling in the oracle (helpers starting
with `_` are defined in `to_python.py`; they record how close a value came
to a kink or a discontinuity), and per operand the domain the generator
guards it into:

- `any`: no restriction;
- `pos`: strictly positive, away from 0 (log, sqrt, the base of powf, ...);
- `nonzero`: away from 0 (a divisor);
- `unit`: inside (-0.9, 0.9) (asin, acos);
- `small`: inside about (-2.5, 2.5) (exp, sinh, tan, ...: no overflow, no pole).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpSpec:
    mlir: str
    python: str
    domains: tuple[str, ...]

    @property
    def arity(self) -> int:
        return len(self.domains)


def _u(mlir: str, python: str, domain: str = "any") -> OpSpec:
    return OpSpec(mlir, python, (domain,))


def _b(mlir: str, python: str, d0: str = "any", d1: str = "any") -> OpSpec:
    return OpSpec(mlir, python, (d0, d1))


OPS: dict[str, OpSpec] = {
    "addf": _b("arith.addf", "({0} + {1})"),
    "subf": _b("arith.subf", "({0} - {1})"),
    "mulf": _b("arith.mulf", "({0} * {1})"),
    "divf": _b("arith.divf", "({0} / {1})", "any", "nonzero"),
    "negf": _u("arith.negf", "(-{0})"),
    "remf": _b("arith.remf", "_remf({0}, {1})", "any", "nonzero"),
    "maximumf": _b("arith.maximumf", "_maximum({0}, {1})"),
    "maxnumf": _b("arith.maxnumf", "_maxnum({0}, {1})"),
    "minimumf": _b("arith.minimumf", "_minimum({0}, {1})"),
    "minnumf": _b("arith.minnumf", "_minnum({0}, {1})"),
    "exp": _u("math.exp", "_m.exp({0})", "small"),
    "exp2": _u("math.exp2", "_m.exp2({0})", "small"),
    "expm1": _u("math.expm1", "_m.expm1({0})", "small"),
    "log": _u("math.log", "_m.log({0})", "pos"),
    "log2": _u("math.log2", "_m.log2({0})", "pos"),
    "log10": _u("math.log10", "_m.log10({0})", "pos"),
    "log1p": _u("math.log1p", "_m.log1p({0})", "pos"),
    "sin": _u("math.sin", "_m.sin({0})"),
    "cos": _u("math.cos", "_m.cos({0})"),
    "tan": _u("math.tan", "_m.tan({0})", "unit"),
    "tanh": _u("math.tanh", "_m.tanh({0})"),
    "sinh": _u("math.sinh", "_m.sinh({0})", "small"),
    "cosh": _u("math.cosh", "_m.cosh({0})", "small"),
    "asin": _u("math.asin", "_m.asin({0})", "unit"),
    "acos": _u("math.acos", "_m.acos({0})", "unit"),
    "atan": _u("math.atan", "_m.atan({0})"),
    "atan2": _b("math.atan2", "_m.atan2({0}, {1})", "any", "pos"),
    "sqrt": _u("math.sqrt", "_m.sqrt({0})", "pos"),
    "rsqrt": _u("math.rsqrt", "(1.0 / _m.sqrt({0}))", "pos"),
    "cbrt": _u("math.cbrt", "_m.cbrt({0})", "pos"),
    "powf": _b("math.powf", "_m.pow({0}, {1})", "pos", "small"),
    "absf": _u("math.absf", "_abs({0})"),
    "erf": _u("math.erf", "_m.erf({0})"),
    "fma": OpSpec("math.fma", "_fma({0}, {1}, {2})", ("any", "any", "any")),
    "copysign": _b("math.copysign", "_copysign({0}, {1})"),
    "floor": _u("math.floor", "_floor({0})"),
    "ceil": _u("math.ceil", "_ceil({0})"),
    "round": _u("math.round", "_round({0})"),
    "roundeven": _u("math.roundeven", "_roundeven({0})"),
    "trunc": _u("math.trunc", "_trunc({0})"),
}

FCMP_PREDICATES = {
    # MLIR predicate -> Python comparison (no NaNs reach a comparison: the
    # oracle rejects inputs giving non-finite values).
    "olt": "<", "ole": "<=", "ogt": ">", "oge": ">=", "ult": "<", "uge": ">=",
}
ICMP_PREDICATES = {"slt": "<", "sle": "<=", "sgt": ">", "sge": ">=", "eq": "==", "ne": "!="}
