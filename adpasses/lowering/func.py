"""func -> LLVM: calls with memref descriptors expanded, returns.

After a call, when bounds checks are on, the caller tests the error slot
and returns early too, so an out-of-bounds access deep in a callee ends the
whole call from Python.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import func

from adpasses.diagnostics import error_at
from adpasses.lowering.core import I64, FunctionTranslator, const_i64


def _call(ft: FunctionTranslator, op: func.CallOp) -> None:
    name = op.callee.root_reference.data
    callee = ft.mt.functions.get(name)
    if callee is None:
        raise error_at(op, f"calls '@{name}', which is not defined or declared in this module")
    args = [part for a in op.arguments for part in ft.flatten(a)]
    result = ft.b.call(callee, args)
    if len(op.res) == 1:
        ft.set(op.res[0], result)
    else:
        for k, r in enumerate(op.res):
            ft.set(r, ft.b.extract_value(result, k))
    if ft.mt.boundscheck and not callee.is_declaration:
        slot = ft.mt.global_ref("adpasses_error_slot", ir.ArrayType(I64, 5))
        flag = ft.b.load(ft.b.gep(slot, [const_i64(0), const_i64(0)], inbounds=True), typ=I64)
        with ft.b.if_then(ft.b.icmp_unsigned("!=", flag, const_i64(0)), likely=False):
            ft.return_early()


def _return(ft: FunctionTranslator, op: func.ReturnOp) -> None:
    values = [ft.get(v) for v in op.arguments]
    if not values:
        ft.b.ret_void()
    elif len(values) == 1:
        ft.b.ret(values[0])
    else:
        ret_type = ft.fn.function_type.return_type
        agg = ir.Constant(ret_type, ir.Undefined)
        for k, v in enumerate(values):
            agg = ft.b.insert_value(agg, v, k)
        ft.b.ret(agg)


LOWERINGS = {func.CallOp: _call, func.ReturnOp: _return}
