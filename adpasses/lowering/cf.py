"""cf -> LLVM: branches; block arguments become phis of the target block."""

from __future__ import annotations

from xdsl.dialects import cf
from xdsl.ir import Block, SSAValue

from adpasses.core.diagnostics import error_at
from adpasses.lowering.core import FunctionTranslator


def _pass_arguments(ft: FunctionTranslator, target: Block, values: list[SSAValue]) -> None:
    for phis, value in zip(ft.block_phis.get(target, []), values):
        for phi, part in zip(phis, ft.flatten(value)):
            phi.add_incoming(part, ft.b.block)


def _target(ft: FunctionTranslator, op, block: Block):  # type: ignore[no-untyped-def]
    target = ft.blocks.get(block)
    if target is None:
        raise error_at(op, "branches to a block outside the function body")
    return target


def _br(ft: FunctionTranslator, op: cf.BranchOp) -> None:
    _pass_arguments(ft, op.successor, list(op.arguments))
    ft.b.branch(_target(ft, op, op.successor))


def _cond_br(ft: FunctionTranslator, op: cf.ConditionalBranchOp) -> None:
    then_bb, else_bb = _target(ft, op, op.then_block), _target(ft, op, op.else_block)
    _pass_arguments(ft, op.then_block, list(op.then_arguments))
    if op.then_block is op.else_block:
        # Both edges reach one block: a phi tells edges apart by their
        # predecessor block, so the else edge goes through a block of its own.
        branch_bb = ft.b.block
        else_bb = ft.fn.append_basic_block("cond_br.else")
        ft.b.position_at_end(else_bb)
        _pass_arguments(ft, op.else_block, list(op.else_arguments))
        ft.b.branch(then_bb)
        ft.b.position_at_end(branch_bb)
    else:
        _pass_arguments(ft, op.else_block, list(op.else_arguments))
    ft.b.cbranch(ft.get(op.cond), then_bb, else_bb)


# cf.assert: adpasses.lowering.stops (the stop of an ad.raise_if raising AssertionError).
LOWERINGS = {cf.BranchOp: _br, cf.ConditionalBranchOp: _cond_br}
