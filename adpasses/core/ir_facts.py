"""Facts about xDSL IR that several layers ask, in one place.

Where a value lives (`home_block`), whether it is a constant or a function
argument. (Loop trip counts, which must not wrap, are built by
`adpasses.core.index_arith`; what flows where through region ops, induction
variables included, is `adpasses.core.region_flow`.)
The analyses, the cache planner and the reverse builder all read these, so
they live below all of them: this module imports nothing from adpasses.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Block, BlockArgument, OpResult, SSAValue
from xdsl.traits import ConstantLike


def home_block(value: SSAValue) -> Block:
    """The block that defines `value` (its reverse context makes it available)."""
    if isinstance(value, BlockArgument):
        return value.block
    assert isinstance(value, OpResult)
    block = value.op.parent_block()
    assert block is not None
    return block


def is_constant(value: SSAValue) -> bool:
    """The result of a `ConstantLike` op (arith.constant, ...)."""
    return isinstance(value, OpResult) and value.op.has_trait(ConstantLike)


def is_function_parameter(value: SSAValue) -> bool:
    """An argument of the function itself: its entry block's argument."""
    if not isinstance(value, BlockArgument):
        return False
    parent = value.block.parent_op()
    return isinstance(parent, func.FuncOp) and value.block is parent.body.blocks.first


def is_function_block_argument(value: SSAValue) -> bool:
    """An argument of any block of a `func.func` body: a parameter, or the
    argument of a branch target in a multi-block body."""
    return isinstance(value, BlockArgument) and isinstance(value.block.parent_op(), func.FuncOp)

