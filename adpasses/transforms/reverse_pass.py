"""`ad-reverse`: replace every `ad.autodiff` by a call to a generated gradient.

For each distinct (function, activities, with_primal) request, once:
copy the function, inline its callees, count scf.while iterations, run the
activity analysis, collect what the reverse sweep needs, plan the cache,
build the gradient function next to the primal one, and (by default) lower
the static tapes to memrefs. `differentiate()` is the same as a Python call.

Options: `cache-policy` (`minimal`: min-cut cache minimisation, default;
`tape-all`: tape every needed in-loop value), `activity` (false: treat every
float as active, for comparison), `report` (`text` or `json`: print the
cache report of every generated function on stderr), `lower-tapes`,
`simplify`.

The pass leaves every access of the gradient bounds-checked (except tape
accesses) and tags the reverse sweep's repeats of forward accesses with
their twins; `ad-elide-shadow-checks`, run after every other pass
(`ad-opt --reverse` does), drops the checks the final IR proves redundant.
`differentiate()` runs that step itself, last (`ReverseOptions.elide_checks`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

from adpasses.analysis.activity import ActivityAnalysis
from adpasses.core.compile_thread import compile_entry
from adpasses.core.context import shared_context
from adpasses.core.diagnostics import CompileError, error_at
from adpasses.dialects.ad import AutodiffOp, check_activity_signature
from adpasses.reverse.rules import RULES, rule_for
from adpasses.core.verify import verify_all
from adpasses.reverse.rules.scf import count_while_iterations
from adpasses.transforms.inline_calls import inline_calls
from adpasses.transforms.lower_affine import lower_affine

ACTIVITY_CODES = {"const": "c", "active": "a", "dup": "d", "dupnoneed": "n"}


@dataclass(frozen=True)
class ReverseOptions:
    cache_policy: str = "minimal"
    activity: bool = True
    lower_tapes: bool = True
    """Lower tapes of known capacity to memrefs (`ad-lower-tapes`)."""
    simplify: bool = True
    """Run canonicalize + cse on the generated function (readable IR; LLVM
    would do the same work at -O3, so the JIT path may skip it)."""
    elide_checks: bool = True
    """Run `ad-elide-shadow-checks` on the generated function, last. The
    pass `ad-reverse` does not (the pipeline runs it after every other
    pass: `ad-opt --reverse` is `ad-reverse,ad-elide-shadow-checks`)."""


# Rounds of canonicalisation (each: every op through the patterns, then dead
# code elimination) until nothing changes, at most this many. Gradients of the
# lit tests need 1 to 3; a nest of d loops needs about d rounds of O(d^2) work
# each (300 nested loops: minutes), and simplifying is optional (LLVM does the
# same work), so deep nests keep what 16 rounds did.
MAX_SIMPLIFY_ROUNDS = 16


def simplify_function(function: func.FuncOp) -> None:
    """xDSL's canonicalize and cse, on one function, without losing a
    bounds check: both erase loads whose values are unused, checks and all,
    so dead code goes first as on the no-simplify path (checks of dead
    loads hoisted out of their loops, transforms/dead_forward), every
    checked op is pinned (`ad.keep`) while they run, and what they left dead
    goes last, the same way."""
    from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
    from xdsl.transforms.canonicalize import CanonicalizationRewritePattern

    # xDSL's, without their O(depth^2) effect queries
    from adpasses.core.effects import cse, region_dce

    from adpasses.transforms.dead_forward import pin_checks, remove_dead_code, unpin

    remove_dead_code(function)
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
    remove_dead_code(function)


@dataclass
class GeneratedGradient:
    """What `differentiate` generated: the new function's name and the
    reports of the decisions behind it."""

    name: str
    function: func.FuncOp
    activity: ActivityAnalysis
    cache_report: object
    primal_name: str
    arg_activity: list[str] = field(default_factory=list)
    ret_activity: list[str] = field(default_factory=list)

    @property
    def activity_report(self) -> str:
        from adpasses.transforms.print_activity import format_activity

        return format_activity(self.activity, self.primal_name)


def gradient_name(module: ModuleOp, primal: str, acts: Sequence[str], rets: Sequence[str],
                  with_primal: bool) -> str:
    base = (
        f"{primal}_grad_{''.join(ACTIVITY_CODES[a] for a in acts)}"
        f"_{''.join(ACTIVITY_CODES[a] for a in rets)}{'_p' if with_primal else ''}"
    )
    name, k = base, 1
    while SymbolTable.lookup_symbol(module, name) is not None:
        name, k = f"{base}_{k}", k + 1
    return name


def check_structured(function: func.FuncOp) -> None:
    """Reverse mode differentiates structured control flow only."""
    ops = list(function.walk())
    for op in ops:
        if op.dialect_name() == "cf":
            raise error_at(
                op,
                "unstructured control flow cannot be differentiated: express it with "
                "scf.for / scf.while / scf.if",
            )
        if isinstance(op, AutodiffOp):
            raise error_at(op, "nested ad.autodiff (higher-order derivatives) is not supported")
    for op in ops:
        for region in op.regions:
            if len(region.blocks) > 1:
                raise error_at(
                    op, "has a region with several blocks; only structured (scf) code is supported"
                )


def check_const_memory(function: func.FuncOp, activity: ActivityAnalysis) -> None:
    """A `const` memref argument must not receive values that carry
    derivatives: they would have no shadow to flow through."""
    from xdsl.dialects import memref

    from adpasses.analysis.memref_views import memory_object

    for arg, act in zip(function.body.block.args, activity.arg_activity):
        if act != "const" or not activity.is_active_memory(arg):
            continue
        for op in function.walk():
            target = getattr(op, "memref", None) if isinstance(op, memref.StoreOp) else (
                op.destination if isinstance(op, memref.CopyOp) else None)
            if target is not None and memory_object(target) is arg:
                raise error_at(
                    op,
                    f"writes values that carry derivatives into argument %{arg.name_hint or arg.index}, "
                    "which is const; declare it dup (adpasses.Duplicated) so that their derivatives "
                    "have a shadow to flow through",
                )


def collect_needs(function: func.FuncOp, activity: ActivityAnalysis) -> list[SSAValue]:
    """Every primal value some active op's reverse rule reads."""
    needs: list[SSAValue] = []
    for op in function.walk():
        if op is function or not activity.is_active_op(op):
            continue
        if isinstance(op, (scf.YieldOp, scf.ConditionOp)):
            continue
        rule = rule_for(op)
        if rule is None:
            raise error_at(
                op,
                "has no reverse-mode rule, but it computes an active value; "
                "rewrite it with supported ops or mark its inputs const",
            )
        needs.extend(rule.needs(op, activity))
    return needs


@compile_entry
def differentiate(
    module: ModuleOp,
    func_name: str,
    activity: Sequence[str],
    ret_activity: Sequence[str],
    *,
    with_primal: bool = False,
    options: ReverseOptions | None = None,
    location_op: Operation | None = None,
) -> GeneratedGradient:
    """Add to `module` the reverse-mode derivative of `@func_name` for these
    activities (see `ad.autodiff`); return its name and reports."""
    from adpasses.cache.report import CacheReport
    from adpasses.reverse.gradient import GradientBuilder
    from adpasses.cache.planner import plan_cache

    options = options or ReverseOptions()
    primal = SymbolTable.lookup_symbol(module, func_name)
    if not isinstance(primal, func.FuncOp) or not primal.body.blocks:
        raise CompileError(f"no function '@{func_name}' with a body to differentiate", op=location_op)
    try:
        check_activity_signature(primal.function_type, activity, ret_activity)
    except VerifyException as err:
        raise CompileError(f"'@{func_name}': {err}", op=location_op or primal) from None

    work = primal.clone()
    check_structured(work)  # before inlining, so errors point at the user's function
    inline_calls(work, module)
    lower_affine(work)  # affine.for/load/store as the scf/memref ops the rules know
    check_structured(work)
    for op in list(work.walk()):
        if isinstance(op, scf.WhileOp):
            count_while_iterations(op)

    analysis = ActivityAnalysis(work, activity, ret_activity, enabled=options.activity)
    analysis.check_understood()  # an op it cannot see through touches active data
    check_const_memory(work, analysis)
    needed = collect_needs(work, analysis)
    plan = plan_cache(work, needed, analysis, options.cache_policy)
    name = gradient_name(module, func_name, activity, ret_activity, with_primal)
    sweep = GradientBuilder(work, analysis, plan, name, with_primal, RULES)
    gradient = sweep.build()
    Rewriter.insert_op(gradient, InsertPoint.after(primal))
    if options.lower_tapes:
        from adpasses.transforms.lower_tapes import lower_tapes

        lower_tapes(gradient)
    if options.simplify:
        simplify_function(gradient)
    else:
        from adpasses.transforms.dead_forward import remove_dead_code

        remove_dead_code(gradient)
    if options.elide_checks:
        # Last: which shadow accesses need no check is read off the final IR.
        from adpasses.transforms.elide_shadow_checks import elide_shadow_checks

        elide_shadow_checks(gradient)
    report = CacheReport.from_plan(plan, gradient_name=name, primal_name=func_name,
                                   policy=options.cache_policy)
    return GeneratedGradient(name, gradient, analysis, report, func_name,
                            list(activity), list(ret_activity))


@dataclass(frozen=True)
class ReversePass(ModulePass):
    name = "ad-reverse"

    cache_policy: str = "minimal"
    activity: bool = True
    report: str = ""
    lower_tapes: bool = True
    simplify: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.cache_policy not in ("minimal", "tape-all"):
            raise CompileError(f"unknown cache-policy '{self.cache_policy}' (minimal or tape-all)")
        # Check elision is the pipeline's last pass (ad-elide-shadow-checks),
        # so that no pass after this one can remove a check it relies on.
        options = ReverseOptions(self.cache_policy, self.activity, self.lower_tapes, self.simplify,
                                 elide_checks=False)
        # Differentiating invalid IR gives wrong code, not an error: verify
        # the ops and SSA dominance first (xDSL's verifier skips dominance).
        verify_all(op)
        generated: dict[tuple, GeneratedGradient] = {}
        for autodiff in [o for o in op.walk() if isinstance(o, AutodiffOp)]:
            key = (
                autodiff.callee.root_reference.data,
                tuple(autodiff.arg_activities),
                tuple(autodiff.ret_activities),
                autodiff.with_primal is not None,
            )
            if key not in generated:
                generated[key] = differentiate(
                    op, key[0], key[1], key[2], with_primal=key[3], options=options,
                    location_op=autodiff,
                )
            g = generated[key]
            call = func.CallOp(g.name, list(autodiff.args), list(autodiff.result_types))
            call.location = autodiff.location
            Rewriter.replace_op(autodiff, call)
        if self.report:
            for g in generated.values():
                text = g.cache_report.to_json() if self.report == "json" else str(g.cache_report)
                print(text, file=sys.stderr)
