"""`ad-fold-overlap-checks`: the run-time overlap tests (`ad.overlaps`)
that the alias analysis answers at compile time, folded away.

The frontend guards an in-place update whose source may be the target's
memory only at run time (two arguments: `f(x, x)`) with

    %o = ad.overlaps %a, %b  (several sources: arith.ori of the tests)
    scf.if %o { the update reading copies } else { the update in place }

(frontend/overlap.py). Where `AliasAnalysis.alias(%a, %b)` is no-alias
(`ad.noalias` arguments: the version the API compiles for arrays that
share no memory; an argument and a local array after inlining), the test
is `false`: it is replaced by `arith.constant false`, an `arith.ori` with
a false operand by its other operand, and an `scf.if` on false by its
else block. So the update that cannot overlap runs in place with no test
and no temporary. A test the analysis cannot answer stays (lowered to a
bounds comparison: adpasses/lowering/overlaps.py, or by `ad-lower-ad-ops`
for upstream MLIR).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from adpasses.analysis.alias import AliasAnalysis, AliasKind
from adpasses.dialects.ad import OverlapsOp


def fold_overlap_checks(module: Operation) -> int:
    """Fold the tests the alias analysis answers; the number folded."""
    folded = 0
    for function in [op for op in module.walk() if isinstance(op, func.FuncOp)]:
        checks = [op for op in function.walk() if isinstance(op, OverlapsOp)]
        if not checks:
            continue
        alias = AliasAnalysis(function)
        disjoint = [op for op in checks if alias.alias(op.lhs, op.rhs).kind is AliasKind.NO_ALIAS]
        for op in disjoint:
            false = arith.ConstantOp(IntegerAttr(0, 1))
            Rewriter.insert_op(false, InsertPoint.before(op))
            op.result.replace_all_uses_with(false.result)
            Rewriter.erase_op(op)
            _fold_users(false.result)
            folded += 1
    return folded


def _is_false(value: SSAValue) -> bool:
    op = value.owner
    return isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) and op.value.value.data == 0


def _fold_users(false: SSAValue) -> None:
    """`x | false` -> x, `scf.if false` -> its else block, then the
    constant itself when nothing uses it."""
    for use in list(false.uses):
        user = use.operation
        if isinstance(user, arith.OrIOp):
            other = user.rhs if _is_false(user.lhs) else user.lhs
            result = user.result
            result.replace_all_uses_with(other)
            Rewriter.erase_op(user)
            if _is_false(other):
                _fold_users(other)
        elif isinstance(user, scf.IfOp) and not user.results:
            if user.false_region.blocks:
                block = user.false_region.blocks.first
                assert block is not None
                terminator = block.last_op
                assert isinstance(terminator, scf.YieldOp)
                Rewriter.erase_op(terminator)
                Rewriter.inline_block(block, InsertPoint.before(user))
            Rewriter.erase_op(user)
    owner = false.owner
    if isinstance(owner, Operation) and not false.uses:
        Rewriter.erase_op(owner)


@dataclass(frozen=True)
class FoldOverlapChecksPass(ModulePass):
    name = "ad-fold-overlap-checks"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fold_overlap_checks(op)
