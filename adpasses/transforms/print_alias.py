"""`ad-print-alias`: alias classes and may-overwrite facts, on stderr.

For every function with a body, in module order (format: docs/alias.md):

    alias analysis of @scale
      objects:
        %a: argument #0, ad.noalias
        %buf: memref.alloc at t.mlir:4:3
      classes:
        class 0 (objects %a):
          %a  argument
        class 1 (objects %buf):
          %buf  memref.alloc at t.mlir:4:3
          %lo  memref.subview at t.mlir:5:3
      pairs:
        %a, %buf: no-alias: allocation %buf never overlaps argument %a
      loads:
        %x = memref.load %a[%i] at t.mlir:8:5: not overwritten
        %l = memref.load %lo[%i] at t.mlir:15:5: overwritten by
          store at t.mlir:13:5 (in a later iteration of the scf.for at t.mlir:7:3): writes %buf[%i - 1], which may be %buf[%i]

Everything is in program order and deterministic. The module is not
changed, so stdout still shows it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from itertools import combinations

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from adpasses.analysis.alias import AliasAnalysis, MemoryObject
from adpasses.core.diagnostics import op_location


def _defined_by(value: SSAValue) -> str:
    """`argument`, `memref.subview at t.mlir:5:3`, `block argument of scf.for at ...`."""
    owner = value.owner
    if isinstance(owner, Operation):
        return f"{owner.name} at {op_location(owner) or '?'}"
    assert isinstance(value, BlockArgument)
    parent = owner.parent_op()
    if isinstance(parent, func.FuncOp):
        return "argument"
    return f"block argument of {parent.name if parent else '?'} at {op_location(parent) or '?'}"


def _objects(analysis: AliasAnalysis) -> list[MemoryObject]:
    """The memory objects behind the function's memrefs, in program order."""
    objects: list[MemoryObject] = []
    for value in analysis.memref_values():
        obj = analysis.underlying(value)
        if obj not in objects:
            objects.append(obj)
    return objects


def _pairs(analysis: AliasAnalysis, objects: list[MemoryObject]) -> list[tuple[SSAValue, SSAValue]]:
    """Pairs worth printing: every two memory objects, then every two views
    (other than the object itself) of one object."""
    views: dict[MemoryObject, list[SSAValue]] = {}
    for value in analysis.memref_values():
        obj = analysis.underlying(value)
        if obj.value is not value:
            views.setdefault(obj, []).append(value)
    pairs = list(combinations([obj.value for obj in objects], 2))
    for obj in objects:
        pairs.extend(combinations(views.get(obj, []), 2))
    return pairs


def format_alias(analysis: AliasAnalysis) -> str:
    name = analysis.name
    lines = [f"alias analysis of @{analysis.function.sym_name.data}", "  objects:"]
    objects = _objects(analysis)
    lines += [f"    {name(obj.value)}: {analysis.origin(obj)}" for obj in objects]

    lines.append("  classes:")
    for k, members in enumerate(analysis.classes()):
        bases = dict.fromkeys(name(analysis.underlying(v).value) for v in members)
        lines.append(f"    class {k} (objects {', '.join(bases)}):")
        lines += [f"      {name(v)}  {_defined_by(v)}" for v in members]

    pairs = _pairs(analysis, objects)
    lines.append("  pairs:" if pairs else "  pairs: none")
    for a, b in pairs:
        result = analysis.alias(a, b)
        lines.append(f"    {name(a)}, {name(b)}: {result.kind.value}: {result.reason}")

    loads = [op for op in analysis.function.walk() if isinstance(op, memref.LoadOp)]
    lines.append("  loads:" if loads else "  loads: none")
    for load in loads:
        indices = ", ".join(name(i) for i in load.indices)
        head = (
            f"    {name(load.res)} = memref.load {name(load.memref)}[{indices}] "
            f"at {op_location(load) or '?'}"
        )
        clobbers = analysis.clobbers(load)
        lines.append(f"{head}: overwritten by" if clobbers else f"{head}: not overwritten")
        lines += [f"      {c.reason}" for c in clobbers]
    return "\n".join(lines)


@dataclass(frozen=True)
class PrintAliasPass(ModulePass):
    name = "ad-print-alias"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                print(format_alias(AliasAnalysis(f)), file=sys.stderr)
