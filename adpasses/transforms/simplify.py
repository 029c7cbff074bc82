"""`ad-simplify`: xDSL's canonicalize and cse on each gradient being built,
without losing a bounds check.

Both erase a load whose value is unused, check and all. So every checked op
is pinned (`ad.keep`, `dead_forward.pin_checks`) while they run, and
unpinned after; the reverse pipeline runs `ad-dead-forward` before this
step (checks of dead loads hoisted out of their loops) and after it (what
the rewriting left dead goes, checks kept). It acts on the functions marked
`ad.gradient_of` only: the user's functions stay as written. Optional
(`ad-reverse{simplify=false}`, the Python API's choice): LLVM does the same
work at -O3; it makes the gradient readable.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from adpasses.transforms.gradient_marks import marked_functions

# Rounds of canonicalisation (each: every op through the patterns, then dead
# code elimination) until nothing changes, at most this many. Gradients of the
# lit tests need 1 to 3; a nest of d loops needs about d rounds of O(d^2) work
# each (300 nested loops: minutes), and simplifying is optional (LLVM does the
# same work), so deep nests keep what 16 rounds did.
MAX_SIMPLIFY_ROUNDS = 16


def simplify_pinned(function: func.FuncOp) -> None:
    """Canonicalize (at most MAX_SIMPLIFY_ROUNDS rounds) and cse `function`
    with every checked op pinned."""
    from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
    from xdsl.transforms.canonicalize import CanonicalizationRewritePattern

    from adpasses.core.context import shared_context
    # xDSL's, without their O(depth^2) effect queries
    from adpasses.core.effects import cse, region_dce
    from adpasses.transforms.dead_forward import pin_checks, unpin

    pins = pin_checks(function)
    pattern = GreedyRewritePatternApplier(
        [CanonicalizationRewritePattern()], ctx=shared_context(), folding_enabled=True
    )
    walker = PatternRewriteWalker(pattern, apply_recursively=False, post_walk_func=region_dce)
    for _ in range(MAX_SIMPLIFY_ROUNDS):
        if not walker.rewrite_module(function):
            break
    cse(function)
    unpin(pins)


@dataclass(frozen=True)
class SimplifyPass(ModulePass):
    name = "ad-simplify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in marked_functions(op):
            simplify_pinned(function)
