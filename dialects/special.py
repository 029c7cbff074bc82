"""The `special` dialect: scalar special functions MLIR's math dialect lacks.

`special.lgamma` (log|Gamma(x)|), `special.gamma` (Gamma(x)),
`special.digamma` (psi(x) = d lgamma(x)/dx) and `special.polygamma`
(psi^(n)(x), the n-th derivative of digamma; `%x, %n`, like math.fpowi).
Each is one entry of the op table (`adpasses/ops/special.py`); the
derivative of each is another of them, so derivatives of any order close
over the dialect. Lowered by `adpasses/lowering/special.py`.

The functions of scipy.special the frontend compiles besides those
(`scipy.special.expit`, `log_expit`, `logit`, `erfc`, `xlogy`): the
logistic sigmoid and its log and inverse, the complementary error
function, and x log y with xlogy(0, y) = 0.
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


@irdl_op_definition
class ExpitOp(FloatingPointLikeUnaryMathOperation):
    """1 / (1 + exp(-x)), the logistic sigmoid (scipy.special.expit)."""

    name = "special.expit"
    traits = traits_def(Pure(), SameOperandsAndResultType())


@irdl_op_definition
class LogExpitOp(FloatingPointLikeUnaryMathOperation):
    """log(expit(x)) = min(x, 0) - log1p(exp(-|x|)), without overflow
    (scipy.special.log_expit)."""

    name = "special.log_expit"
    traits = traits_def(Pure(), SameOperandsAndResultType())


@irdl_op_definition
class LogitOp(FloatingPointLikeUnaryMathOperation):
    """log(x / (1 - x)), the inverse of expit (scipy.special.logit)."""

    name = "special.logit"
    traits = traits_def(Pure(), SameOperandsAndResultType())


@irdl_op_definition
class ErfcOp(FloatingPointLikeUnaryMathOperation):
    """1 - erf(x) without its cancellation for large x (C `erfc`)."""

    name = "special.erfc"
    traits = traits_def(Pure(), SameOperandsAndResultType())


@irdl_op_definition
class XlogyOp(IRDLOperation):
    """x * log(y), and 0 where x == 0 and y is not NaN (scipy.special.xlogy).

        %r = special.xlogy %x, %y : f64
    """

    name = "special.xlogy"

    T: ClassVar = VarConstraint("T", base(AnyFloat))

    fastmath = prop_def(FastMathFlagsAttr, default_value=FastMathFlagsAttr("none"))
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$lhs `,` $rhs (`fastmath` `` $fastmath^)? attr-dict `:` type($result)"

    def __init__(self, lhs: Operation | SSAValue, rhs: Operation | SSAValue):
        lhs = SSAValue.get(lhs)
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])


SPECIAL = Dialect("special", [LgammaOp, GammaOp, DigammaOp, PolygammaOp, ExpitOp, LogExpitOp, LogitOp,
                              ErfcOp, XlogyOp], [])
