"""printf dialect -> C printf: `{}` becomes %g for floats, %ld for
integers and index, %d for i1; stdout is flushed after each print so
output interleaves correctly with the Python side.

A print_format marked `ad.python_print` (the frontend's `print`) calls
Python instead (adpasses/native/python_print.py, by the symbol
`print_codes.SYMBOL`), which formats like Python and writes to sys.stdout."""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import printf
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IndexType, IntegerType
from xdsl.ir import Attribute

from xdsl.dialects.builtin import MemRefType, StringAttr

from adpasses.core import print_codes
from adpasses.core.diagnostics import error_at
from adpasses.dialects.ad import PRINT_SPECS_ATTR, PYTHON_PRINT_ATTR
from adpasses.lowering.core import I32, I64, PTR, FunctionTranslator, const_i64


def _printable(t: Attribute) -> bool:
    return (isinstance(t, (Float16Type, Float32Type, Float64Type, IndexType))
            or (isinstance(t, IntegerType) and t.width.data <= 64))


def _python_print(ft: FunctionTranslator, op: printf.PrintFormatOp) -> None:
    """Kinds and i64 slots of the values (print_codes) on the stack, and a
    call of the Python callback."""
    b = ft.b
    kinds: list[int] = []
    slots: list[ir.Value] = []
    for k, value in enumerate(op.format_vals):
        t = value.type
        if isinstance(t, MemRefType):
            name = {"f64": "float64", "f32": "float32", "i64": "int64", "i32": "int32", "i1": "bool"}.get(
                str(t.element_type))
            if name is None:
                raise error_at(op, f"cannot print value {k + 1}: arrays of {t.element_type} are not printed")
            m = ft.get(value)
            kinds.append(print_codes.ARRAY + print_codes.ARRAY_DTYPES.index(name))
            slots += [b.ptrtoint(m.ptr, I64), m.offset, const_i64(len(m.sizes)), *m.sizes, *m.strides]
            continue
        x = ft.get(value)
        if isinstance(t, (Float16Type, Float32Type, Float64Type)):
            kinds.append(print_codes.F64 if isinstance(t, Float64Type) else print_codes.F32)
            if not isinstance(x.type, ir.DoubleType):
                x = b.fpext(x, ir.DoubleType())
            slots.append(b.bitcast(x, I64))
        elif isinstance(t, IntegerType) and t.width.data == 1:
            kinds.append(print_codes.BOOL)
            slots.append(b.zext(x, I64))
        elif _printable(t):
            kinds.append(print_codes.INT)
            slots.append(x if x.type.width == 64 else b.sext(x, I64))
        else:
            raise error_at(op, f"cannot print value {k + 1} of type {t}")
    kind_buffer = ft.entry_alloca(I64, max(1, len(kinds)))
    slot_buffer = ft.entry_alloca(I64, max(1, len(slots)))
    for k, kind in enumerate(kinds):
        b.store(const_i64(kind), b.gep(kind_buffer, [const_i64(k)], source_etype=I64))
    for k, slot in enumerate(slots):
        b.store(slot, b.gep(slot_buffer, [const_i64(k)], source_etype=I64))
    specs = op.attributes.get(PRINT_SPECS_ATTR)
    spec_text = specs.data if isinstance(specs, StringAttr) else ""
    fmt, spec = ft.mt.string(op.format_str.data), ft.mt.string(spec_text)
    callback = ft.mt.declare(print_codes.SYMBOL, ir.VoidType(), [PTR, PTR, I64, PTR, PTR])
    b.call(callback, [b.gep(fmt, [const_i64(0), const_i64(0)], inbounds=True),
                      b.gep(spec, [const_i64(0), const_i64(0)], inbounds=True),
                      const_i64(len(kinds)), kind_buffer, slot_buffer])


def _print_format(ft: FunctionTranslator, op: printf.PrintFormatOp) -> None:
    if PYTHON_PRINT_ATTR in op.attributes:
        _python_print(ft, op)
        return
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
