"""`ad-print-activity`: the activity of every value, on stderr.

For each `ad.autodiff` in the module, the callee is analysed with that
request's activities (after inlining its calls, as the reverse pass does).
A function no `ad.autodiff` refers to is analysed with the default
activities: memref arguments `dup`, float arguments `active`, float results
`active`, everything else `const`. The module itself is not changed.

Format (one line per block argument and per op with results, in program
order, indented by nesting):

    activity of @f (args: dup, const; results: active)
      arg %x : memref<?xf64>  active memory
      %v = memref.load  active  t.mlir:7:10
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from adpasses.analysis.activity import ActivityAnalysis
from adpasses.core.diagnostics import op_location
from adpasses.dialects.ad import AutodiffOp
from adpasses.core.types import is_float_type, is_memref_type


def default_activities(f: func.FuncOp) -> tuple[list[str], list[str]]:
    args = [
        "dup" if is_memref_type(t) else "active" if is_float_type(t) else "const"
        for t in f.function_type.inputs.data
    ]
    rets = ["active" if is_float_type(t) else "const" for t in f.function_type.outputs.data]
    return args, rets


def _name(value) -> str:  # type: ignore[no-untyped-def]
    return f"%{value.name_hint}" if value.name_hint else "%<anon>"


def format_activity(analysis: ActivityAnalysis, name: str) -> str:
    lines = [
        f"activity of @{name} (args: {', '.join(analysis.arg_activity) or '-'}; "
        f"results: {', '.join(analysis.ret_activity) or '-'})"
    ]

    def block_lines(block: Block, indent: str) -> None:
        for arg in block.args:
            lines.append(f"{indent}arg {_name(arg)} : {arg.type}  {analysis.describe(arg)}")
        for op in block.ops:
            op_lines(op, indent)

    def op_lines(op: Operation, indent: str) -> None:
        loc = op_location(op) or "?"
        if op.results:
            names = ", ".join(_name(r) for r in op.results)
            kinds = ", ".join(analysis.describe(r) for r in op.results)
            lines.append(f"{indent}{names} = {op.name}  {kinds}  {loc}")
        elif not isinstance(op, (scf.YieldOp, scf.ConditionOp)):
            state = "active" if analysis.is_active_op(op) else "const"
            lines.append(f"{indent}{op.name}  {state}  {loc}")
        for region in op.regions:
            for block in region.blocks:
                block_lines(block, indent + "  ")

    block_lines(analysis.function.body.block, "  ")
    return "\n".join(lines)


def analyse(module: ModuleOp, f: func.FuncOp, args: list[str], rets: list[str]) -> ActivityAnalysis:
    from adpasses.transforms.inline_calls import inline_calls
    from adpasses.transforms.expand_upstream_ops import expand_upstream_ops
    from adpasses.transforms.lower_affine import lower_affine

    work = f.clone()
    inline_calls(work, module)
    lower_affine(work)  # as the reverse pass does
    expand_upstream_ops(work)
    return ActivityAnalysis(work, args, rets)


@dataclass(frozen=True)
class PrintActivityPass(ModulePass):
    name = "ad-print-activity"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks}
        requested: dict[tuple, None] = {}
        for autodiff in op.walk():
            if isinstance(autodiff, AutodiffOp):
                key = (autodiff.callee.root_reference.data, tuple(autodiff.arg_activities),
                       tuple(autodiff.ret_activities))
                requested[key] = None
        called = {k[0] for k in requested}
        for name, f in functions.items():
            if name not in called and not any(isinstance(o, AutodiffOp) for o in f.walk()):
                args, rets = default_activities(f)
                requested[(name, tuple(args), tuple(rets))] = None
        for name, args, rets in requested:
            if name in functions:
                analysis = analyse(op, functions[name], list(args), list(rets))
                print(format_activity(analysis, name), file=sys.stderr)
