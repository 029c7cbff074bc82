"""func -> LLVM: calls with memref descriptors expanded, returns.

After a call that may stop (with bounds checks on, any; without, one that
allocates: allocation sizes are always checked), the caller tests its
thread's error slot (adpasses.lowering.thread_state) and returns early too, so an out-of-bounds access or a failed
allocation deep in a callee ends the whole call from Python.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import func

from adpasses.core.diagnostics import error_at
from adpasses.lowering.core import FunctionTranslator, flat_types, packs_results
from adpasses.lowering.thread_state import branch_if_stopped


def _call(ft: FunctionTranslator, op: func.CallOp) -> None:
    name = op.callee.root_reference.data
    callee = ft.mt.functions.get(name)
    if callee is None:
        raise error_at(op, f"calls '@{name}', which is not defined or declared in this module")
    args = [part for a in op.arguments for part in ft.flatten(a)]
    result = ft.b.call(callee, args)
    types = [r.type for r in op.res]
    if types and not packs_results(types):
        ft.set(op.res[0], result)
    elif types:
        k = 0
        for r in op.res:
            n = len(flat_types(r.type))
            ft.set(r, ft.unflatten(r.type, [ft.b.extract_value(result, k + j) for j in range(n)]))
            k += n
    if not callee.is_declaration and ft.mt.may_stop(name):
        # Did this thread's callee stop? (adpasses.lowering.thread_state)
        branch_if_stopped(ft.mt, ft.b, ft.return_early)


def _return(ft: FunctionTranslator, op: func.ReturnOp) -> None:
    types = [v.type for v in op.arguments]
    if not types:
        ft.b.ret_void()
    elif not packs_results(types):
        ft.b.ret(ft.get(op.arguments[0]))
    else:
        # One struct of every result's flattened parts (memref descriptors
        # included): see docs/calling_convention.md.
        parts = [part for v in op.arguments for part in ft.flatten(v)]
        agg = ir.Constant(ft.fn.function_type.return_type, ir.Undefined)
        for k, part in enumerate(parts):
            agg = ft.b.insert_value(agg, part, k)
        ft.b.ret(agg)


LOWERINGS = {func.CallOp: _call, func.ReturnOp: _return}
