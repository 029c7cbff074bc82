"""The arith dialect's float ops, one entry each (see `adpasses/ops/entry.py`).

Integer, index and comparison ops are never active and are not here;
`arith.bitcast` (a round trip through integer bits) has a rule of its own
(`adpasses/reverse/rules/arith.py`). sitofp/uitofp take an integer, so their float
result never depends on an active value.
"""

from __future__ import annotations

import ast

import numpy as np
from xdsl.dialects import arith, math

from adpasses.dialects.arith_ext import RemFOp
from adpasses.ops.entry import CHEAP, DIVISION, Cast, Custom, Instruction, Intrinsic, ScalarOp
from adpasses.ops.partials import call, cmpf, select


def _divf(a, b, r):  # type: ignore[no-untyped-def]
    # d(a/b) = da/b - (a/b) db/b: the quotient is reused, not recomputed.
    inv = 1 / b
    return [inv, -(inv * r)]


def _max_like(lhs_wins: str):  # type: ignore[no-untyped-def]
    """max/min: the derivative goes to the operand that was selected (lhs on ties)."""

    def partials(a, b, r):  # type: ignore[no-untyped-def]
        pick_lhs = cmpf(lhs_wins, a, b)
        return [select(pick_lhs, 1, 0), select(pick_lhs, 0, 1)]

    return partials


ENTRIES = [
    ScalarOp(arith.AddfOp, python=(ast.Add,), partials=lambda a, b, r: [1, 1],
             llvm=Instruction("fadd"), cost=CHEAP, domains=("any", "any"), oracle="({0} + {1})"),
    ScalarOp(arith.SubfOp, python=(ast.Sub,), partials=lambda a, b, r: [1, -1],
             llvm=Instruction("fsub"), cost=CHEAP, domains=("any", "any"), oracle="({0} - {1})"),
    ScalarOp(arith.MulfOp, python=(ast.Mult,), partials=lambda a, b, r: [b, a],
             llvm=Instruction("fmul"), cost=CHEAP, domains=("any", "any"), oracle="({0} * {1})"),
    ScalarOp(arith.DivfOp, python=(ast.Div,), partials=_divf,
             llvm=Instruction("fdiv"), cost=DIVISION, domains=("any", "nonzero"), oracle="({0} / {1})"),
    ScalarOp(arith.NegfOp, python=(ast.USub,), partials=lambda a, r: [-1],
             llvm=Instruction("fneg"), cost=CHEAP, domains=("any",), oracle="(-{0})"),
    ScalarOp(RemFOp, python=(),
             # a rem b = a - b*trunc(a/b): d/da = 1, d/db = -trunc(a/b).
             partials=lambda a, b, r: [1, -call(math.TruncOp, a / b)],
             llvm=Instruction("frem"), cost=DIVISION, domains=("any", "nonzero"), oracle="_remf({0}, {1})"),
    ScalarOp(arith.MaximumfOp, python=(np.maximum,), partials=_max_like("oge"),
             llvm=Intrinsic("llvm.maximum"), cost=CHEAP, domains=("any", "any"), oracle="_maximum({0}, {1})"),
    ScalarOp(arith.MaxnumfOp, python=(), partials=_max_like("oge"),
             llvm=Intrinsic("llvm.maxnum"), cost=CHEAP, domains=("any", "any"), oracle="_maxnum({0}, {1})"),
    ScalarOp(arith.MinimumfOp, python=(np.minimum,), partials=_max_like("ole"),
             llvm=Intrinsic("llvm.minimum"), cost=CHEAP, domains=("any", "any"), oracle="_minimum({0}, {1})"),
    ScalarOp(arith.MinnumfOp, python=(), partials=_max_like("ole"),
             llvm=Intrinsic("llvm.minnum"), cost=CHEAP, domains=("any", "any"), oracle="_minnum({0}, {1})"),
    # Operands: cond (i1, no derivative), lhs (taken when true), rhs. A
    # select between memrefs also has a shadow rule (rules/arith.py); its
    # lowering handles every type (lowering/arith.py).
    ScalarOp(arith.SelectOp, python=(), partials=lambda cond, a, b, r: [None, select(cond, 1, 0), select(cond, 0, 1)],
             llvm=Custom(), cost=CHEAP, domains=("cond", "any", "any"), oracle=None),
    # The adjoint is converted to the operand's type (extf's adjoint is truncf'd).
    ScalarOp(arith.ExtFOp, python=(), partials=lambda x, r: [1],
             llvm=Cast("fpext"), cost=CHEAP, domains=("any",), oracle=None),
    ScalarOp(arith.TruncFOp, python=(), partials=lambda x, r: [1],
             llvm=Cast("fptrunc"), cost=CHEAP, domains=("any",), oracle=None),
]
