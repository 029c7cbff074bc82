"""Upstream MLIR ops that xDSL 0.74 lacks, defined here so that what
`mlir-opt` prints for func/arith/math/affine parses (docs/mlir_interop.md
lists them for upstreaming to xDSL).

- `arith.index_castui`: an index cast that zero-extends (index_cast
  sign-extends);
- `math.sincos`: sine and cosine of one operand (two results);
- `func.constant`: a function as a value; `func.call_indirect`: a call of
  such a value;
- `affine.max`: the largest result of an affine map (xDSL has affine.min).

Each is loaded by `adpasses.core.context.make_context()` into its upstream
namespace, with upstream's custom assembly format.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.affine import MinOp
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import AffineMapAttr, FunctionType, IndexType, IntegerType, SymbolRefAttr
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.dialects.math import floatingPointLike
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class IndexCastUIOp(IRDLOperation):
    """`arith.index_castui`: like `arith.index_cast`, but the integer is
    read (and extended) as unsigned."""

    name = "arith.index_castui"

    input = operand_def(base(IntegerType) | base(IndexType))
    result = result_def(base(IntegerType) | base(IndexType))

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def verify_(self) -> None:
        if isinstance(self.input.type, IndexType) == isinstance(self.result.type, IndexType):
            raise VerifyException(
                f"'arith.index_castui' op operand type '{self.input.type}' and result type "
                f"'{self.result.type}' are cast incompatible (exactly one must be index)")


@irdl_op_definition
class SinCosOp(IRDLOperation):
    """`math.sincos %x : f64` -> `%sin, %cos`."""

    name = "math.sincos"

    T: ClassVar = VarConstraint("T", floatingPointLike)
    operand = operand_def(T)
    sin = result_def(T)
    cos = result_def(T)
    fastmath = prop_def(FastMathFlagsAttr, default_value=FastMathFlagsAttr("none"))

    traits = traits_def(Pure())

    assembly_format = "$operand (`fastmath` `` $fastmath^)? attr-dict `:` type($operand)"


@irdl_op_definition
class FuncConstantOp(IRDLOperation):
    """`func.constant @f : (f64) -> f64`: the function `@f` as a value."""

    name = "func.constant"

    value = prop_def(SymbolRefAttr)
    result = result_def(FunctionType)

    traits = traits_def(Pure())

    assembly_format = "attr-dict $value `:` type($result)"


@irdl_op_definition
class CallIndirectOp(IRDLOperation):
    """`func.call_indirect %f(%x) : (f64) -> f64`."""

    name = "func.call_indirect"

    callee = operand_def(FunctionType)
    callee_operands = var_operand_def()
    results_ = var_result_def()

    @classmethod
    def parse(cls, parser):  # type: ignore[no-untyped-def]
        callee = parser.parse_unresolved_operand()
        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        ftype = parser.parse_type()
        if not isinstance(ftype, FunctionType):
            parser.raise_error(f"func.call_indirect expects a function type, not {ftype}", pos, parser.pos)
        op = cls.build(operands=[parser.resolve_operand(callee, ftype),
                                 parser.resolve_operands(args, ftype.inputs.data, pos)],
                       result_types=[ftype.outputs.data], attributes=attrs)
        return op

    def print(self, printer):  # type: ignore[no-untyped-def]
        printer.print_string(" ")
        printer.print_operand(self.callee)
        printer.print_string("(")
        printer.print_list(self.callee_operands, printer.print_operand)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.callee.type)

    def verify_(self) -> None:
        ftype = self.callee.type
        assert isinstance(ftype, FunctionType)
        if tuple(ftype.inputs.data) != tuple(o.type for o in self.callee_operands):
            raise VerifyException("'func.call_indirect' operand types do not match the callee's type")
        if tuple(ftype.outputs.data) != tuple(r.type for r in self.results):
            raise VerifyException("'func.call_indirect' result types do not match the callee's type")


@irdl_op_definition
class AffineMaxOp(IRDLOperation):
    """`affine.max #map(%dims)[%syms]`: the largest result of the map
    (xDSL has affine.min; the format is the same)."""

    name = "affine.max"

    arguments = var_operand_def(IndexType())
    result = result_def(IndexType())
    map = prop_def(AffineMapAttr)

    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser):  # type: ignore[no-untyped-def]
        parsed = MinOp.parse(parser)
        op = cls.build(operands=[parsed.arguments], properties={"map": parsed.map},
                       result_types=[IndexType()])
        parsed.drop_all_references()
        return op

    def print(self, printer):  # type: ignore[no-untyped-def]
        MinOp.print(self, printer)  # type: ignore[arg-type]


UPSTREAM_OPS = (IndexCastUIOp, SinCosOp, FuncConstantOp, CallIndirectOp, AffineMaxOp)
