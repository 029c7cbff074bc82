"""`ad-count-while`: every scf.while of a function being differentiated
counts its iterations.

The reverse of an scf.while runs as many iterations as the forward loop
did, and nothing else in the IR says how many: this step adds a
loop-carried index to each scf.while of the reverse pipeline's copies of
the primals (functions marked `ad.gradient_of`), returned as the loop's
last result, and marks the loop `ad.counted`; the scf.while rule
(adpasses/reverse/rules/scf.py, `iteration_count`) reads it. First it checks that
what inlining and affine lowering produced is still structured code (a
callee may bring what the primal did not have).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, UnitAttr
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from adpasses.dialects.ad import COUNTED_ATTR
from adpasses.transforms.clone_primals import check_structured
from adpasses.transforms.gradient_marks import marked_functions


def count_while_iterations(op: scf.WhileOp) -> scf.WhileOp:
    """Rebuild `op` with one more loop-carried index counting the iterations
    of its `after` region; returns the new op (marked `ad.counted`)."""
    index = IndexType()
    rewriter = Rewriter()
    zero = arith.ConstantOp(IntegerAttr(0, index))
    rewriter.insert_op(zero, InsertPoint.before(op))
    before_region, after_region = op.detach_region(0), op.detach_region(0)
    before, after = before_region.block, after_region.block
    count_before = before.insert_arg(index, len(before.args))
    count_after = after.insert_arg(index, len(after.args))
    condition = before.last_op
    assert isinstance(condition, scf.ConditionOp)
    condition.operands = [*condition.operands, count_before]
    yield_op = after.last_op
    assert isinstance(yield_op, scf.YieldOp)
    one = arith.ConstantOp(IntegerAttr(1, index))
    incremented = arith.AddiOp(count_after, one)
    after.insert_ops_before([one, incremented], yield_op)
    yield_op.operands = [*yield_op.operands, incremented.result]
    new = scf.WhileOp(
        [*op.arguments, zero.result],
        [*op.result_types, index],
        before_region,
        after_region,
    )
    new.attributes.update(op.attributes)
    new.attributes[COUNTED_ATTR] = UnitAttr()
    new.location = op.location
    for opv in (zero, one, incremented):
        opv.location = op.location
    new.results[-1].name_hint = "trips"
    rewriter.replace_op(op, new, new.results[:-1])
    return new


@dataclass(frozen=True)
class CountWhilePass(ModulePass):
    name = "ad-count-while"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in marked_functions(op):
            check_structured(function)
            for loop in [o for o in function.walk() if isinstance(o, scf.WhileOp)]:
                count_while_iterations(loop)
