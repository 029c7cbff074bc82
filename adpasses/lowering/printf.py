"""printf dialect -> C printf: `{}` becomes %g for floats, %ld for
integers and index, %d for i1; stdout is flushed after each print so
output interleaves correctly with the Python side."""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import printf
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IndexType, IntegerType
from xdsl.ir import Attribute

from adpasses.core.diagnostics import error_at
from adpasses.lowering.core import I32, I64, PTR, FunctionTranslator, const_i64


def _printable(t: Attribute) -> bool:
    return (isinstance(t, (Float16Type, Float32Type, Float64Type, IndexType))
            or (isinstance(t, IntegerType) and t.width.data <= 64))


def _print_format(ft: FunctionTranslator, op: printf.PrintFormatOp) -> None:
    for k, value in enumerate(op.format_vals):
        if not _printable(value.type):
            hint = ("print its elements, loaded with memref.load" if "memref" in value.type.name
                    else "convert it first (arith.extf/truncf, arith.trunci)")
            raise error_at(op, f"cannot print value {k + 1} of type {value.type}: it prints floats "
                               f"(f16, f32, f64), integers of up to 64 bits and index; {hint}")
    pieces = op.format_str.data.replace("%", "%%").split("{}")
    args: list[ir.Value] = []
    text = pieces[0]
    for value, rest in zip(op.format_vals, pieces[1:]):
        x = ft.get(value)
        if isinstance(x.type, (ir.FloatType, ir.HalfType)):
            x = ft.b.fpext(x, ir.DoubleType())
        if isinstance(x.type, ir.DoubleType):
            text += "%g"
        elif isinstance(value.type, IntegerType) and value.type.width.data == 1:
            x = ft.b.zext(x, I32)
            text += "%d"
        else:
            if x.type.width < 64:
                x = ft.b.sext(x, I64)
            text += "%ld"
        args.append(x)
        text += rest
    fmt = ft.mt.string(text)
    c_printf = ft.mt.declare("printf", I32, [PTR], var_arg=True)
    ft.b.call(c_printf, [ft.b.gep(fmt, [const_i64(0), const_i64(0)], inbounds=True), *args])
    fflush = ft.mt.declare("fflush", I32, [PTR])
    ft.b.call(fflush, [ir.Constant(PTR, None)])


LOWERINGS = {printf.PrintFormatOp: _print_format}
