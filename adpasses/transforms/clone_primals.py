"""`ad-clone-primals`: the first step of the reverse pipeline.

Verifies the module (ops and SSA dominance: differentiating invalid IR
gives wrong code, not an error), then, for each distinct request of an
`ad.autodiff` (callee, activities, with_primal; in walk order), checks it
and inserts after its primal a copy named as the gradient will be
(`GradientRequest.gradient_name`), marked `ad.gradient_of`. The later
steps change the copy, never the user's function; `ad-build-gradients`
replaces it by the gradient and each `ad.autodiff` by a call.
`differentiate` (the Python API) clones its one request with
`clone_primal`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import cf, func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

from adpasses.core.custom_rules import custom_rule_of_function
from adpasses.core.diagnostics import CompileError, error_at
from adpasses.transforms.custom_calls import calling_copy
from adpasses.dialects.ad import GRADIENT_OF_ATTR, AutodiffOp, check_activity_signature
from adpasses.transforms.gradient_marks import GradientRequest, marked_functions
from adpasses.core.verify import verify_all
from adpasses.transforms.lift_cf import lift_structured_cf


def check_structured(function: func.FuncOp) -> None:
    """Reverse mode differentiates structured control flow only."""
    ops = list(function.walk())
    for op in ops:
        if op.dialect_name() == "cf" and not isinstance(op, cf.AssertOp):  # a check, not a branch
            raise error_at(
                op,
                "unstructured control flow cannot be differentiated: express it with "
                "scf.for / scf.while / scf.if (cf branches that form an if/else, a chain or a loop "
                "with one entry, one back edge and one exit are lifted to scf; these form a loop with "
                "a second exit or back edge, or join other paths)",
            )
        if isinstance(op, AutodiffOp):
            raise error_at(op, "nested ad.autodiff (higher-order derivatives) is not supported")
    for op in ops:
        for region in op.regions:
            if len(region.blocks) > 1:
                raise error_at(
                    op, "has a region with several blocks; only structured (scf) code is supported"
                )


def clone_primal(module: ModuleOp, request: GradientRequest,
                 location_op: Operation | None = None) -> func.FuncOp:
    """Insert after the primal of `request` its marked copy, named as its
    gradient will be; errors point at `location_op` (the `ad.autodiff`)."""
    name = request.primal
    if type(request.width) is not int or request.width < 1:
        raise CompileError(f"width must be an integer of at least 1, got {request.width!r}",
                           op=location_op)
    primal = SymbolTable.lookup_symbol(module, name)
    custom = isinstance(primal, func.FuncOp) and custom_rule_of_function(primal) is not None
    if not isinstance(primal, func.FuncOp) or not (primal.body.blocks or custom):
        raise CompileError(f"no function '@{name}' with a body to differentiate", op=location_op)
    try:
        check_activity_signature(primal.function_type, request.activity, request.ret_activity)
    except VerifyException as err:
        raise CompileError(f"'@{name}': {err}", op=location_op or primal) from None
    if custom:  # differentiated by its rule: the copy calls it (transforms/custom_calls.py)
        copy = calling_copy(primal)
    else:
        copy = primal.clone()
        lift_structured_cf(copy)  # cf diamonds, triangles and chains become scf
        check_structured(copy)  # before inlining, so errors point at the user's function
    copy.sym_name = StringAttr(request.gradient_name(module))
    copy.attributes[GRADIENT_OF_ATTR] = request.mark()
    Rewriter.insert_op(copy, InsertPoint.after(primal))
    return copy


@dataclass(frozen=True)
class ClonePrimalsPass(ModulePass):
    name = "ad-clone-primals"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # The ops and SSA dominance (xDSL's verifier skips dominance).
        verify_all(op)
        # A request whose copy is already here (a module part-way through
        # the pipeline) keeps it: running this step twice changes nothing.
        seen = {GradientRequest.of_function(f) for f in marked_functions(op)}
        for autodiff in [o for o in op.walk() if isinstance(o, AutodiffOp)]:
            request = GradientRequest.of_autodiff(autodiff)
            if request not in seen:
                seen.add(request)
                clone_primal(op, request, location_op=autodiff)
