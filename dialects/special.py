"""The `special` dialect: scalar special functions MLIR's math dialect lacks.

`special.lgamma` (log|Gamma(x)|), `special.gamma` (Gamma(x)),
`special.digamma` (psi(x) = d lgamma(x)/dx) and `special.polygamma`
(psi^(n)(x), the n-th derivative of digamma; `%x, %n`, like math.fpowi).
Each is one entry of the op table (`adpasses/ops/special.py`); the
derivative of each is another of them, so derivatives of any order close
over the dialect. Lowered by `adpasses/lowering/special.py`.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import AnyFloat, AnySignlessIntegerType, IndexType
from xdsl.dialects.math import FloatingPointLikeUnaryMathOperation
from xdsl.ir import Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure, SameOperandsAndResultType


@irdl_op_definition
class LgammaOp(FloatingPointLikeUnaryMathOperation):
    """log|Gamma(x)| (C `lgamma`; +inf at the poles x = 0, -1, -2, ...)."""

    name = "special.lgamma"
    traits = traits_def(Pure(), SameOperandsAndResultType())


@irdl_op_definition
class GammaOp(FloatingPointLikeUnaryMathOperation):
    """Gamma(x) (C `tgamma`)."""

    name = "special.gamma"
    traits = traits_def(Pure(), SameOperandsAndResultType())


@irdl_op_definition
class DigammaOp(FloatingPointLikeUnaryMathOperation):
    """psi(x) = Gamma'(x)/Gamma(x) (scipy.special.digamma; nan at the poles)."""

    name = "special.digamma"
    traits = traits_def(Pure(), SameOperandsAndResultType())


@irdl_op_definition
class PolygammaOp(IRDLOperation):
    """psi^(n)(x), the n-th derivative of digamma (scipy.special.polygamma(n, x));
    n = 0 is digamma, n < 0 gives nan.

        %r = special.polygamma %x, %n : f64, i32
    """

    name = "special.polygamma"

    T: ClassVar = VarConstraint("T", base(AnyFloat))

    fastmath = prop_def(FastMathFlagsAttr, default_value=FastMathFlagsAttr("none"))
    x = operand_def(T)
    n = operand_def(base(AnySignlessIntegerType) | base(IndexType))
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$x `,` $n (`fastmath` `` $fastmath^)? attr-dict `:` type($x) `,` type($n)"

    def __init__(self, x: Operation | SSAValue, n: Operation | SSAValue):
        x = SSAValue.get(x)
        super().__init__(operands=[x, n], result_types=[x.type])


SPECIAL = Dialect("special", [LgammaOp, GammaOp, DigammaOp, PolygammaOp], [])
