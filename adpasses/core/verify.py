"""Verification with clear messages, and the dominance check xDSL lacks.

`verify_module` runs xDSL's per-op verifiers, but reports the first failure
as one `CompileError` at the op's location instead of xDSL's dump of the
whole module. `check_dominance` checks that every operand is defined before
its use and in scope (xDSL's verifier checks neither); tests run it on every
module the transformations produce.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.irdl.dominance import DominanceInfo
from xdsl.utils.exceptions import DiagnosticException

from adpasses.core.diagnostics import CompileError, user_op_name
from adpasses.core.literals import check_literals
from adpasses.core.type_errors import op_type_message


def verify_module(module: Operation) -> None:
    """Verify every op; raise a `CompileError` for the first that fails."""
    for op in module.walk():
        check_literals(op)
        try:
            op.verify(verify_nested_ops=False)
        except (DiagnosticException, ValueError) as err:
            hint = op_type_message(op)  # addf on integers, mixed f32/f64, ...
            if hint is not None:
                raise CompileError(hint, op=op) from None
            text = str(err.args[0]) if err.args else str(err)
            text = text.removeprefix("Operation does not verify: ")
            raise CompileError(f"'{user_op_name(op)}' op {text.strip().splitlines()[0]}", op=op) from None
        except Exception as err:  # noqa: BLE001 - an xDSL verifier tripping on malformed IR
            raise CompileError(
                f"'{user_op_name(op)}' op is malformed (its verifier failed with "
                f"{type(err).__name__}{': ' + str(err) if str(err) else ''})", op=op
            ) from None


def _defining_block(value: SSAValue) -> Block | None:
    if isinstance(value, BlockArgument):
        return value.block
    if isinstance(value, OpResult):
        return value.op.parent_block()
    return None


def _ancestor_in_block(op: Operation, block: Block) -> Operation | None:
    """The ancestor of `op` (or `op` itself) that sits directly in `block`."""
    cur: Operation | None = op
    while cur is not None and cur.parent_block() is not block:
        cur = cur.parent_op()
    return cur


def check_dominance(root: Operation) -> None:
    """Raise `CompileError` if some operand does not dominate its use."""
    dominance: dict[Region, DominanceInfo] = {}
    # Position of each op in its block, numbered once per block (xDSL's
    # is_before_in_block walks the block: quadratic on long functions).
    position: dict[Operation, int] = {}
    numbered: set[Block] = set()

    def info(region: Region) -> DominanceInfo:
        if region not in dominance:
            dominance[region] = DominanceInfo(region)
        return dominance[region]

    def before(a: Operation, b: Operation) -> bool:
        block = a.parent_block()
        if block is not None and block not in numbered:
            numbered.add(block)
            for k, o in enumerate(block.ops):
                position[o] = k
        return position[a] < position[b]

    for op in root.walk():
        for operand in op.operands:
            block = _defining_block(operand)
            if block is None:
                raise CompileError(f"'{user_op_name(op)}' uses a value with no definition", op=op)
            user = _ancestor_in_block(op, block)
            if user is not None:
                if isinstance(operand, OpResult):
                    definer = operand.op
                    if definer is user or not before(definer, user):
                        raise CompileError(
                            f"'{user_op_name(op)}' uses a value of '{user_op_name(definer)}' before its definition",
                            op=op,
                        )
                continue
            # Not in the same block: the defining block must dominate the
            # block (in the same region) that contains the use.
            region = block.parent
            user_block: Block | None = op.parent_block()
            while user_block is not None and user_block.parent is not region:
                parent = user_block.parent_op()
                user_block = parent.parent_block() if parent is not None else None
            if user_block is None:
                raise CompileError(
                    f"'{user_op_name(op)}' uses a value defined in a region that does not enclose it",
                    op=op,
                )
            if isinstance(operand, OpResult) and user_block is block:
                continue
            if not info(region).dominates(block, user_block):
                raise CompileError(
                    f"'{user_op_name(op)}' uses a value whose definition does not dominate it", op=op
                )


def verify_all(module: ModuleOp) -> None:
    """Op verifiers, then dominance."""
    verify_module(module)
    check_dominance(module)
