"""`ad-forward`: replace every `ad.fwddiff` by a call to a generated tangent
function; and `forward_differentiate`, the same for one request from Python.

For each distinct request (callee, activities, width; in walk order):
1. check it, and copy the primal (the user's function stays as written);
2. inline, transitively, the callees defined in the module into the copy
   (`ad-inline-calls`' `inline_calls`), lower its affine ops and expand
   the upstream ops the reverse pipeline expands (`ad-expand-upstream-ops`:
   sincos, ipowi, scf.parallel);
3. run the activity analysis (forward activities as the analysis's: a
   `dup` float argument is `active`, a `dup` memref `dup`, a `dup`/
   `dupnoneed` result `active`), report an op it cannot see through that
   touches data carrying derivatives, and a const memref that receives
   such data;
4. build the tangent function (`adpasses.forward.tangent.TangentBuilder`,
   rules `adpasses.forward.rules`) in the copy's place, named
   `<f>_fwd_<args>_<results>[_w<N>]` (one letter per activity: `c`onst,
   `d`up, `n` for dupnoneed);
5. with `simplify` (default), canonicalize + cse it, checks pinned
   (`ad-simplify`'s `simplify_pinned`).
Each `ad.fwddiff` then becomes a `func.call` of its tangent function.

The module may still hold `ad.autodiff`: forward over reverse runs the
reverse pipeline first (`ad-opt --forward` runs `ad-reverse`, then this
pass, then `ad-elide-shadow-checks`; docs/forward_mode.md), so the
gradient a function calls is a plain function by now, inlined here like any
callee. A function that still contains an `ad.autodiff` is an error.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import cf, func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

from adpasses.analysis.activity import ActivityAnalysis
from adpasses.cache.tangent_report import TangentTapeReport
from adpasses.core.compile_thread import compile_entry
from adpasses.core.diagnostics import CompileError, error_at
from adpasses.core.types import is_memref_type
from adpasses.core.verify import verify_all
from adpasses.dialects.ad import AutodiffOp, FwddiffOp, check_fwd_activity_signature
from adpasses.transforms.lift_cf import lift_structured_cf
from adpasses.transforms.build_gradients import check_const_memory
from adpasses.transforms.expand_upstream_ops import expand_upstream_ops, has_upstream_only_ops, separate_outputs
from adpasses.transforms.inline_calls import inline_calls
from adpasses.transforms.custom_calls import calling_copy
from adpasses.core.custom_rules import custom_rule_of_function
from adpasses.transforms.lower_affine import has_affine_ops, lower_affine
from adpasses.transforms.lower_linalg import has_linalg_ops, lower_linalg

_CODES = {"const": "c", "dup": "d", "dupnoneed": "n"}


@dataclass(frozen=True)
class ForwardRequest:
    """One tangent function to generate: what an `ad.fwddiff` asks for.
    Equal requests share one function."""

    primal: str
    activity: tuple[str, ...]
    ret_activity: tuple[str, ...]
    width: int = 1

    @staticmethod
    def of_fwddiff(op: FwddiffOp) -> ForwardRequest:
        return ForwardRequest(op.callee.root_reference.data, tuple(op.arg_activities),
                              tuple(op.ret_activities), op.lanes)

    def base_name(self) -> str:
        codes = "".join(_CODES[a] for a in self.activity)
        rcodes = "".join(_CODES[a] for a in self.ret_activity)
        return f"{self.primal}_fwd_{codes}_{rcodes}" + (f"_w{self.width}" if self.width != 1 else "")

    def function_name(self, module: ModuleOp) -> str:
        """`base_name()`, made unique in `module`."""
        base = self.base_name()
        name, k = base, 1
        while SymbolTable.lookup_symbol(module, name) is not None:
            name, k = f"{base}_{k}", k + 1
        return name


@dataclass
class GeneratedTangent:
    """What the forward pass generated for one request."""

    name: str
    function: func.FuncOp
    activity: ActivityAnalysis
    request: ForwardRequest
    tape_report: object = None
    """What the tangent sweep tapes (`adpasses.cache.tangent_report.
    TangentTapeReport`): the float tapes of the gradient it differentiates
    (forward over reverse) and the tangent tapes beside them."""


def analysis_activities(request: ForwardRequest, ftype) -> tuple[list[str], list[str]]:  # type: ignore[no-untyped-def]
    """The forward activities as the activity analysis spells them:
    varied from the dup arguments, useful for the dup results."""
    acts = []
    for act, ty in zip(request.activity, ftype.inputs.data):
        if act == "const":
            acts.append("const")
        else:
            acts.append("dup" if is_memref_type(ty) else "active")
    # (a returned memref's memory is useful as reverse mode's `dup` result)
    rets = ["const" if a == "const" else "dup" if is_memref_type(ty) else "active"
            for a, ty in zip(request.ret_activity, ftype.outputs.data)]
    return acts, rets


def check_forward_structured(function: func.FuncOp) -> None:
    for op in function.walk():
        if op.dialect_name() == "cf" and not isinstance(op, cf.AssertOp):  # a check, not a branch
            raise error_at(op, "unstructured control flow cannot be differentiated: express it with "
                               "scf.for / scf.while / scf.if (cf branches that form an if/else or a chain are "
                               "lifted to scf; these form a loop or join other paths)")
        if isinstance(op, AutodiffOp):
            raise error_at(op, "ad.autodiff inside a function differentiated in forward mode: run "
                               "the reverse pipeline first (ad-opt --forward does: ad-reverse, then "
                               "ad-forward)")
        if isinstance(op, FwddiffOp):
            raise error_at(op, "ad.fwddiff inside a function differentiated in forward mode: run "
                               "ad-forward on the module first (forward over forward: it replaces "
                               "the inner request by a call of its tangent function before the "
                               "outer one; ad-opt --forward does)")
        for region in op.regions:
            if len(region.blocks) > 1:
                raise error_at(op, "has a region with several blocks; only structured (scf) code "
                                   "is supported")


def build_tangent(module: ModuleOp, request: ForwardRequest, *, simplify: bool = True,
                  location_op: Operation | None = None,
                  timings: dict[str, float] | None = None) -> GeneratedTangent:
    """Add to `module` the tangent function of `request` (steps 1-5 of the
    module docstring), after its primal."""
    from adpasses.forward.rules import RULES
    from adpasses.forward.tangent import TangentBuilder
    from adpasses.transforms.simplify import simplify_pinned

    def lap(step: str, start: float) -> float:
        now = time.perf_counter()
        if timings is not None:
            timings[step] = timings.get(step, 0.0) + now - start
        return now

    start = time.perf_counter()
    primal = SymbolTable.lookup_symbol(module, request.primal)
    custom = isinstance(primal, func.FuncOp) and custom_rule_of_function(primal) is not None
    if not isinstance(primal, func.FuncOp) or not (primal.body.blocks or custom):
        raise CompileError(f"no function '@{request.primal}' with a body to differentiate", op=location_op)
    try:
        check_fwd_activity_signature(primal.function_type, request.activity, request.ret_activity)
    except VerifyException as err:
        raise CompileError(f"'@{request.primal}': {err}", op=location_op or primal) from None
    if request.width < 1:
        raise CompileError(f"width must be at least 1, got {request.width}", op=location_op or primal)
    name = request.function_name(module)
    # A function with a custom rule is differentiated by it: its copy calls it.
    work = calling_copy(primal) if custom else primal.clone()
    if not custom:
        lift_structured_cf(work)  # cf diamonds, triangles and chains become scf
        check_forward_structured(work)  # before inlining: errors point at the user's function
    work.sym_name = StringAttr(name)
    Rewriter.insert_op(work, InsertPoint.after(primal))
    start = lap("ad-clone-primals", start)
    inline_calls(work, module, request.primal, mode="forward")
    check_forward_structured(work)
    start = lap("ad-inline-calls", start)
    if has_affine_ops(work):
        lower_affine(work)
    start = lap("ad-lower-affine", start)
    if has_linalg_ops(work):
        lower_linalg(work)
    start = lap("ad-lower-linalg", start)
    if has_upstream_only_ops(work):  # as the reverse pipeline's ad-expand-upstream-ops
        separate = separate_outputs(work)  # products kept for their own forward rule
        expand_upstream_ops(work, keep_matmul=lambda m: m in separate)
    start = lap("ad-expand-upstream-ops", start)
    acts, rets = analysis_activities(request, primal.function_type)
    analysis = ActivityAnalysis(work, acts, rets)
    analysis.check_understood("forward")
    check_const_memory(work, analysis)
    tangent = TangentBuilder(work, analysis, name, request.activity, request.ret_activity,
                             request.width, RULES).build()
    tapes = TangentTapeReport.of(work, analysis, name, request.primal, request.width)
    block = work.parent_block()
    assert block is not None
    block.insert_op_before(tangent, work)
    block.detach_op(work)
    start = lap("ad-build-tangents", start)
    if simplify:
        simplify_pinned(tangent)
        lap("ad-simplify", start)
    return GeneratedTangent(name, tangent, analysis, request, tapes)


@compile_entry
def forward_differentiate(
    module: ModuleOp,
    func_name: str,
    activity: Sequence[str],
    ret_activity: Sequence[str],
    *,
    width: int = 1,
    simplify: bool = False,
    elide_checks: bool = True,
    timings: dict[str, float] | None = None,
) -> GeneratedTangent:
    """Add to `module` the forward-mode derivative of `@func_name` for these
    activities (see `ad.fwddiff`: `const`/`dup`/`dupnoneed` per argument and
    per result) and `width` lanes; return its name and activity. The module
    must hold no `ad.autodiff` in `@func_name`'s call tree: for forward over
    reverse, `differentiate` the inner function first (its gradient is then
    a plain function) and call that. With `elide_checks`, ends with
    `ad-elide-shadow-checks` on the module, like `differentiate`.
    `timings`, if given, gets the seconds of each step."""
    verify_all(module)
    request = ForwardRequest(func_name, tuple(activity), tuple(ret_activity), width)
    generated = build_tangent(module, request, simplify=simplify, timings=timings)
    if elide_checks:
        from adpasses.transforms.elide_shadow_checks import elide_shadow_checks

        start = time.perf_counter()
        elide_shadow_checks(generated.function)
        if timings is not None:
            timings["ad-elide-shadow-checks"] = time.perf_counter() - start
    return generated


@dataclass(frozen=True)
class ForwardPass(ModulePass):
    """`ad-forward`: every `ad.fwddiff` becomes a call to its generated
    tangent function. Option `simplify` (default true): canonicalize + cse
    the generated functions; `report` (`text` or `json`): print on stderr,
    for each generated function that differentiates tapes (forward over
    reverse), what its tangent sweep tapes (`TangentTapeReport`).
    Option `inner` (default false): only the requests whose callee,
    through its calls, holds no `ad.autodiff`; the others stay. `ad-opt
    --forward` runs `ad-forward{inner=true}` before the reverse pipeline,
    so that a function `ad.autodiff` differentiates calls plain tangent
    functions (reverse over forward), and `ad-forward` after it (forward
    over reverse)."""

    name = "ad-forward"

    simplify: bool = True
    report: str = ""
    inner: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_all(op)
        pending = [o for o in op.walk() if isinstance(o, FwddiffOp)
                   and not (self.inner and _reaches(op, o.callee.root_reference.data, AutodiffOp))]
        built: dict[ForwardRequest, GeneratedTangent] = {}
        # Forward over forward: a request whose callee (or a function it
        # calls) holds an ad.fwddiff waits until that one is a call of its
        # tangent function, which the outer request then inlines and
        # differentiates like any callee. Inner requests first, in rounds.
        while pending:
            ready = [fwd for fwd in pending
                     if not _reaches(op, fwd.callee.root_reference.data, FwddiffOp)]
            if not ready:
                raise error_at(pending[0], "differentiates a function that, through its calls, holds "
                                           "an ad.fwddiff of itself (recursive forward mode); "
                                           "differentiate a function without it")
            for fwd in ready:
                request = ForwardRequest.of_fwddiff(fwd)
                if request not in built:
                    built[request] = build_tangent(op, request, simplify=self.simplify, location_op=fwd)
                    tapes = built[request].tape_report
                    if self.report and tapes.entries:
                        print(tapes.to_json() if self.report == "json" else str(tapes), file=sys.stderr)
                generated = built[request]
                call = func.CallOp(generated.name, list(fwd.args), list(fwd.result_types))
                call.location = fwd.location
                Rewriter.replace_op(fwd, call)
            pending = [fwd for fwd in pending if fwd not in ready]


def _reaches(module: ModuleOp, name: str, kind: type) -> bool:
    """Whether `@name`, or a function it calls (transitively), holds an
    op of `kind` (`ad.fwddiff`, `ad.autodiff`)."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        function = SymbolTable.lookup_symbol(module, current)
        if not isinstance(function, func.FuncOp):
            continue
        for inner in function.walk():
            if isinstance(inner, kind):
                return True
            if isinstance(inner, func.CallOp):
                todo.append(inner.callee.root_reference.data)
    return False
