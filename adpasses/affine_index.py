"""Index expressions as affine forms c0 + sum(c_k * v_k) over SSA values.

Constants, `arith.addi`, `arith.subi`, multiplication by a constant and
`arith.index_cast` are understood; every other value is an opaque symbol.
The alias analysis compares the forms of two accesses: when their
difference is a nonzero constant they cannot touch the same element.
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import OpResult, SSAValue

Symbol = object
"""An SSAValue, or a fresh marker object standing for an unknown value."""


class Affine:
    __slots__ = ("const", "terms")

    def __init__(self, const: int = 0, terms: Mapping[Symbol, int] | None = None):
        self.const = const
        self.terms = {k: v for k, v in (terms or {}).items() if v != 0}

    def __add__(self, other: Affine) -> Affine:
        terms = dict(self.terms)
        for k, v in other.terms.items():
            terms[k] = terms.get(k, 0) + v
        return Affine(self.const + other.const, terms)

    def scale(self, c: int) -> Affine:
        return Affine(self.const * c, {k: v * c for k, v in self.terms.items()})

    def __sub__(self, other: Affine) -> Affine:
        return self + other.scale(-1)

    def substitute(self, symbol: Symbol, replacement: Affine) -> Affine:
        if symbol not in self.terms:
            return self
        coeff = self.terms[symbol]
        rest = Affine(self.const, {k: v for k, v in self.terms.items() if k is not symbol})
        return rest + replacement.scale(coeff)

    @property
    def is_constant(self) -> bool:
        return not self.terms

    def __repr__(self) -> str:
        parts = [f"{v}*{getattr(k, 'name_hint', None) or 'sym'}" for k, v in self.terms.items()]
        return " + ".join([*parts, str(self.const)])


def constant_of(value: SSAValue) -> int | None:
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def affine_form(value: SSAValue, depth: int = 0) -> Affine:
    c = constant_of(value)
    if c is not None:
        return Affine(c)
    if depth > 32 or not isinstance(value, OpResult):
        return Affine(0, {value: 1})
    op = value.op
    if isinstance(op, arith.AddiOp):
        return affine_form(op.lhs, depth + 1) + affine_form(op.rhs, depth + 1)
    if isinstance(op, arith.SubiOp):
        return affine_form(op.lhs, depth + 1) - affine_form(op.rhs, depth + 1)
    if isinstance(op, arith.MuliOp):
        lhs, rhs = affine_form(op.lhs, depth + 1), affine_form(op.rhs, depth + 1)
        if lhs.is_constant:
            return rhs.scale(lhs.const)
        if rhs.is_constant:
            return lhs.scale(rhs.const)
    if isinstance(op, arith.IndexCastOp):
        return affine_form(op.input, depth + 1)
    return Affine(0, {value: 1})
