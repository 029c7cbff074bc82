"""`ad-print-alias`: alias classes and may-overwrite facts, on stderr.

Format, per function (stdout keeps the module unchanged):

    alias analysis of @f
      class 0: %x (argument 0), %a (memref.subview at t.mlir:4:8)
      class 1: %buf (memref.alloc at t.mlir:5:10)
      %x vs %y: may-alias (arguments %x and %y may alias (no noalias attribute))
      load %a = %x[%i] at t.mlir:7:10: overwritten by store at t.mlir:9:5 later in the same iteration: same element of %x
      load %b = %y[%i] at t.mlir:8:10: not overwritten

Pairs are printed for the function's memref arguments and allocations.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass

from adpasses.alias import AliasAnalysis
from adpasses.diagnostics import op_location
from adpasses.memref_views import is_allocation


def _name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else "%<anon>"


def _describe(v: SSAValue) -> str:
    if isinstance(v, BlockArgument):
        return f"{_name(v)} (argument {v.index})"
    return f"{_name(v)} ({v.owner.name} at {op_location(v.owner) or '?'})"


def format_alias(f: func.FuncOp) -> str:
    aa = AliasAnalysis(f)
    lines = [f"alias analysis of @{f.sym_name.data}"]
    for k, cls in enumerate(aa.classes()):
        lines.append(f"  class {k}: " + ", ".join(_describe(v) for v in cls))
    roots = [a for a in f.body.block.args if isinstance(a.type, MemRefType)]
    roots += [r for op in f.walk() for r in op.results if is_allocation(r)]
    for i, a in enumerate(roots):
        for b in roots[i + 1 :]:
            r = aa.alias(a, b)
            lines.append(f"  {_name(a)} vs {_name(b)}: {r.kind.value} ({r.reason})")
    views = [r for op in f.walk() for r in op.results
             if isinstance(r.type, MemRefType) and not is_allocation(r)]
    for i, a in enumerate(views):
        for b in views[i + 1 :]:
            if aa.underlying(a) is aa.underlying(b):
                r = aa.alias(a, b)
                lines.append(f"  {_name(a)} vs {_name(b)}: {r.kind.value} ({r.reason})")
    for op in f.walk():
        if isinstance(op, memref.LoadOp):
            idx = ", ".join(_name(i) for i in op.indices)
            head = f"  load {_name(op.res)} = {_name(op.memref)}[{idx}] at {op_location(op) or '?'}: "
            found = aa.clobbers(op)
            if not found:
                lines.append(head + "not overwritten")
            for c in found:
                lines.append(head + f"overwritten by {c.reason}")
    return "\n".join(lines)


@dataclass(frozen=True)
class PrintAliasPass(ModulePass):
    name = "ad-print-alias"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp) and f.body.blocks:
                print(format_alias(f), file=sys.stderr)
