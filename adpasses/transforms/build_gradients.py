"""`ad-build-gradients`: the reverse sweep proper, on each function being
differentiated.

For each function marked `ad.gradient_of` (the reverse pipeline's prepared
copy of a primal: callees inlined, affine lowered, scf.while counted): run
the activity analysis, check what it cannot differentiate, collect the
primal values the reverse rules read, plan the cache, and build the
gradient (`gradient.GradientBuilder`). The gradient takes the copy's place
and mark; every `ad.autodiff` becomes a call to its gradient.

The gradient leaves here with its tapes as `ad.tape` ops, every access
bounds-checked, and the reverse sweep's repeats of forward accesses tagged
with their twins; the later steps lower tapes, remove dead code and decide
which checks the final IR proves redundant.

Options: `cache-policy` (`minimal`: min-cut cache minimisation, default;
`min-memory`: the min-cut with free recomputation, Enzyme's choice;
`tape-all`: tape every needed in-loop value), `activity` (false: treat every
float as active, for comparison), `report` (`text` or `json`: print the
cache report of every generated function on stderr).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import SymbolTable

from adpasses.analysis.activity import ActivityAnalysis
from adpasses.core.diagnostics import CompileError, error_at
from adpasses.core.region_flow import is_region_terminator
from adpasses.dialects.ad import GRADIENT_OF_ATTR, AutodiffOp
from adpasses.reverse.rules import RULES, rule_for
from adpasses.transforms.gradient_marks import GradientRequest, marked_functions

CACHE_POLICIES = ("minimal", "min-memory", "tape-all")


@dataclass
class GeneratedGradient:
    """What the reverse pipeline generated for one request: the new
    function's name and the reports of the decisions behind it."""

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


def check_cache_policy(policy: str) -> None:
    if policy not in CACHE_POLICIES:
        raise CompileError(f"unknown cache-policy '{policy}' ({', '.join(CACHE_POLICIES)})")


def check_const_memory(function: func.FuncOp, activity: ActivityAnalysis) -> None:
    """A `const` memref argument must not receive values that carry
    derivatives: they would have no shadow to flow through."""
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
        if is_region_terminator(op):
            continue  # its parent's rule reverses it
        rule = rule_for(op)
        if rule is None:
            raise error_at(
                op,
                "has no reverse-mode rule, but it computes an active value; "
                "rewrite it with supported ops or mark its inputs const",
            )
        needs.extend(rule.needs(op, activity))
    return needs


def collect_memory_needs(function: func.FuncOp, activity: ActivityAnalysis) -> list:
    """The memory some active op's reverse reruns on (`memory_needs` of a
    rule: a checkpointed call's memref operands), as `MemoryNeed`s."""
    from adpasses.cache.plan import MemoryNeed

    found = []
    for op in function.walk():
        if op is function or not activity.is_active_op(op) or is_region_terminator(op):
            continue
        rule = rule_for(op)
        memory_needs = getattr(rule, "memory_needs", None)
        if memory_needs is not None:
            found += [MemoryNeed(op, m) for m in memory_needs(op, activity)]
    return found


def build_gradient(work: func.FuncOp, request: GradientRequest, cache_policy: str,
                   use_activity: bool, callee_gradient=None,  # type: ignore[no-untyped-def]
                   loop_local: bool = True) -> GeneratedGradient:
    """Build the gradient of the prepared copy `work` and put it in
    `work`'s place (the copy is detached, intact: the activity analysis
    returned refers to its ops). `callee_gradient(callee, activities,
    result activities)` names the gradient a checkpointed call's reverse
    calls (`CheckpointRequests.gradient_name`)."""
    from adpasses.reverse.gradient import GradientBuilder
    from adpasses.cache.planner import plan_cache
    from adpasses.cache.report import CacheReport

    analysis = ActivityAnalysis(work, list(request.activity), list(request.ret_activity),
                                enabled=use_activity)
    analysis.check_understood()  # an op it cannot see through touches active data
    check_const_memory(work, analysis)
    needed = collect_needs(work, analysis)
    # A split gradient's reverse sweep must follow its whole forward sweep
    # (they become two functions): no loop reversed inside its forward loop.
    plan = plan_cache(work, needed, analysis, cache_policy,
                      memory_needs=collect_memory_needs(work, analysis),
                      loop_local=loop_local and not request.split)
    name = work.sym_name.data
    sweep = GradientBuilder(work, analysis, plan, name, request.primal_choice, RULES, callee_gradient,
                            width=request.width, strong_zero=request.strong_zero, split=request.split)
    gradient = sweep.build()
    gradient.attributes[GRADIENT_OF_ATTR] = work.attributes[GRADIENT_OF_ATTR]
    block = work.parent_block()
    assert block is not None
    block.insert_op_before(gradient, work)
    block.detach_op(work)
    report = CacheReport.from_plan(plan, gradient_name=name, primal_name=request.primal,
                                   policy=cache_policy, shared_tapes=sweep.shared_tapes)
    report.checkpointed = list(sweep.checkpointed_calls)
    return GeneratedGradient(name, gradient, analysis, report, request.primal,
                            list(request.activity), list(request.ret_activity))


@dataclass(frozen=True)
class BuildGradientsPass(ModulePass):
    name = "ad-build-gradients"

    cache_policy: str = "minimal"
    activity: bool = True
    report: str = ""
    loop_local: bool = True
    """Reverse top-level loops whose iterations are independent one
    iteration at a time, inside the forward loop (`cache/loop_local.py`)."""

    def build(self, op: ModuleOp) -> list[GeneratedGradient]:
        """The pass, returning what it built for the requests of the module
        (`differentiate` reports it)."""
        return self.build_all(op)[0]

    def build_all(self, op: ModuleOp) -> tuple[list[GeneratedGradient], list[GeneratedGradient]]:
        """What it built for the module's requests, and the gradients of
        checkpointed callees their reverse sweeps call."""
        check_cache_policy(self.cache_policy)
        work: dict[GradientRequest, func.FuncOp] = {}
        for function in marked_functions(op):
            request = GradientRequest.of_function(function)
            assert request is not None
            primal = SymbolTable.lookup_symbol(op, request.primal)
            if isinstance(primal, func.FuncOp) and primal.function_type != function.function_type:
                raise error_at(function, f"is marked ad.gradient_of @{request.primal} but has type "
                                         f"{function.function_type}, not the primal's "
                                         f"{primal.function_type}: ad-build-gradients differentiates "
                                         "the marked copies ad-clone-primals makes (run the steps "
                                         "after ad-build-gradients on a built gradient)")
            if request in work:
                raise error_at(function, f"is marked as a second copy of '@{request.primal}' for the "
                                         f"same request as '@{work[request].sym_name.data}'; "
                                         "remove one of them")
            work[request] = function
        autodiffs = [o for o in op.walk() if isinstance(o, AutodiffOp)]
        # In the order of the requests (that of the reports), then any
        # marked function no ad.autodiff asks for (`differentiate`'s).
        order = dict.fromkeys(GradientRequest.of_autodiff(a) for a in autodiffs)
        order.update(dict.fromkeys(work))
        built: dict[GradientRequest, GeneratedGradient] = {}
        nested = CheckpointRequests(op, work)
        for request in order:
            if request in work:
                built[request] = build_gradient(work[request], request, self.cache_policy,
                                                self.activity, nested.gradient_name,
                                                self.loop_local)
        # The gradients checkpointed calls asked for (and those their own
        # checkpointed calls ask for), each built once.
        nested_built: dict[GradientRequest, GeneratedGradient] = {}
        while (pending := nested.next_pending()) is not None:
            request, copy = pending
            nested_built[request] = build_gradient(copy, request, self.cache_policy,
                                                        self.activity, nested.gradient_name,
                                                        self.loop_local)
        for autodiff in autodiffs:
            g = built.get(GradientRequest.of_autodiff(autodiff))
            if g is None:
                raise error_at(autodiff, "has no copy of its primal to build a gradient from: "
                                         "run ad-clone-primals before ad-build-gradients (or ad-reverse)")
            if autodiff.split is not None:
                continue  # its halves are calls once ad-split-sweeps has cut the gradient
            call = func.CallOp(g.name, list(autodiff.args), list(autodiff.result_types))
            call.location = autodiff.location
            Rewriter.replace_op(autodiff, call)
        # Each report names the reports of the callee gradients it calls.
        reports = {g.name: g.cache_report for g in [*built.values(), *nested_built.values()]}
        for report in reports.values():
            report.link_callees(reports)
        if self.report:
            for g in [*built.values(), *nested_built.values()]:
                text = g.cache_report.to_json() if self.report == "json" else str(g.cache_report)
                print(text, file=sys.stderr)
        return list(built.values()), list(nested_built.values())

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.build(op)


class CheckpointRequests:
    """The gradients of checkpointed callees (`ad.checkpoint` calls) that
    the gradients being built call in their reverse sweeps. A request is
    cloned (a marked copy, named as its gradient) when first asked for and
    prepared as the pipeline's earlier steps prepare a copy (callees
    inlined, affine and linalg lowered, upstream ops expanded, scf.while counted);
    `ad-build-gradients` then builds it like any other."""

    def __init__(self, module: ModuleOp, work: dict[GradientRequest, func.FuncOp]):
        self.module = module
        self.names: dict[GradientRequest, str] = {r: f.sym_name.data for r, f in work.items()}
        self.pending: list[tuple[GradientRequest, func.FuncOp]] = []

    def gradient_name(self, callee: str, activity, ret_activity,  # type: ignore[no-untyped-def]
                      strong_zero: bool = False) -> str:
        from adpasses.transforms.clone_primals import clone_primal

        request = GradientRequest(callee, tuple(activity), tuple(ret_activity), False,
                                  strong_zero=strong_zero)
        if request not in self.names:
            copy = clone_primal(self.module, request)
            prepare_copy(copy, self.module, request)
            self.names[request] = copy.sym_name.data
            self.pending.append((request, copy))
        return self.names[request]

    def next_pending(self) -> tuple[GradientRequest, func.FuncOp] | None:
        return self.pending.pop(0) if self.pending else None


def prepare_copy(copy: func.FuncOp, module: ModuleOp, request: GradientRequest) -> None:
    """What the reverse pipeline's steps before `ad-build-gradients` do to
    one marked copy (see `reverse_pipeline`)."""
    from xdsl.dialects import scf

    from adpasses.dialects.ad import COUNTED_ATTR
    from adpasses.transforms.count_while import count_while_iterations
    from adpasses.transforms.expand_upstream_ops import expand_upstream_ops
    from adpasses.transforms.inline_calls import inline_calls
    from adpasses.transforms.lower_affine import lower_affine
    from adpasses.transforms.lower_linalg import lower_linalg

    inline_calls(copy, module, request.primal)
    lower_affine(copy)
    lower_linalg(copy)  # array expressions of a checkpointed callee (ad-lower-linalg's step)
    expand_upstream_ops(copy)
    for loop in [o for o in copy.walk() if isinstance(o, scf.WhileOp)]:
        if COUNTED_ATTR not in loop.attributes:
            count_while_iterations(loop)
