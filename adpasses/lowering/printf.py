"""printf dialect -> C printf: `{}` becomes %g for floats, %ld for
integers and index, %d for i1; stdout is flushed after each print so
output interleaves correctly with the Python side."""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import printf
from xdsl.dialects.builtin import IntegerType

from adpasses.lowering.core import I32, I64, PTR, FunctionTranslator, const_i64


def _print_format(ft: FunctionTranslator, op: printf.PrintFormatOp) -> None:
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
