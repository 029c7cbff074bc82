"""`arith.remf`, which MLIR has and xDSL 0.74 lacks.

Floating-point remainder with the sign of the dividend (C `fmod`, LLVM
`frem`). Loaded into the context under the arith namespace so that MLIR text
using it parses.
"""

from xdsl.dialects.arith import FloatingPointLikeBinaryOperation
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Pure


@irdl_op_definition
class RemFOp(FloatingPointLikeBinaryOperation):
    name = "arith.remf"

    traits = traits_def(Pure())
