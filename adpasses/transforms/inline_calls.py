"""`ad-inline-calls`: inline, into each function being differentiated, every
call to a function defined in the module.

Reverse mode differentiates one self-contained body, so the gradient of a
function that calls others is built from a copy with its callees inlined
(the reverse pipeline's copy, marked `ad.gradient_of`; the pass inlines
into marked functions only)
(locations of inlined ops stay those of the callee's source). Recursion
cannot be inlined: a recursive call must be checkpointed (`ad.checkpoint`,
whose reverse calls the callee's gradient, so the gradient recurses as the
primal does), else it is reported at the call.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import SymbolTable

from adpasses.core.custom_rules import custom_rule_of_function
from adpasses.core.diagnostics import error_at
from adpasses.transforms.custom_calls import custom_calls, is_kept_call, keep_custom_call
from adpasses.dialects.ad import CHECKPOINT_ATTR
from adpasses.transforms.expand_upstream_ops import resolve_indirect_calls
from adpasses.transforms.gradient_marks import GradientRequest, marked_functions


def _callee(module: Operation, call: func.CallOp) -> func.FuncOp | None:
    found = SymbolTable.lookup_symbol(module, call.callee)
    if isinstance(found, func.FuncOp) and found.body.blocks:
        return found
    return None


def check_no_recursion(module: Operation, root: func.FuncOp, root_name: str | None = None,
                       mode: str = "reverse") -> None:
    """Raise at the first call that closes a cycle reachable from `root`
    (named `root_name`: a copy of a primal stands for its primal). In
    forward mode checkpointed calls are inlined too, so they count."""
    on_path: list[str] = []
    done: set[str] = set()

    def visit(f: func.FuncOp) -> None:
        name = root_name if f is root and root_name is not None else f.sym_name.data
        on_path.append(name)
        for op in f.walk():
            if isinstance(op, func.CallOp):
                callee = _callee(module, op)
                if callee is None or custom_rule_of_function(callee) is not None:
                    continue  # not inlined: a custom rule differentiates it
                if CHECKPOINT_ATTR in op.attributes and mode == "reverse":
                    continue  # not inlined: its reverse calls the callee's gradient (recursion allowed)
                cname = callee.sym_name.data
                if cname in on_path:
                    chain = " -> ".join([*on_path[on_path.index(cname) :], cname])
                    if mode == "forward":
                        raise error_at(op, f"recursive call ({chain}) cannot be inlined for forward-mode "
                                           "differentiation (ad.checkpoint helps reverse mode only): "
                                           "rewrite the recursion as a loop")
                    raise error_at(
                        op,
                        f"recursive call ({chain}) cannot be inlined for differentiation: "
                        "mark it {ad.checkpoint} (its reverse calls the callee's gradient, "
                        "one call frame at a time) or rewrite the recursion as a loop",
                    )
                if cname not in done:
                    visit(callee)
        on_path.pop()
        done.add(name)

    visit(root)


def inline_call(call: func.CallOp, callee: func.FuncOp) -> None:
    """Replace `call` by a copy of `callee`'s single-block body (a callee
    whose cf blocks lift to scf is lifted on a copy first)."""
    if len(callee.body.blocks) != 1:
        from adpasses.transforms.lift_cf import lift_structured_cf

        lifted = callee.clone()
        lift_structured_cf(lifted)
        if len(lifted.body.blocks) == 1:
            callee = lifted
    if len(callee.body.blocks) != 1:
        raise error_at(
            call,
            f"calls '@{callee.sym_name.data}', whose body has several blocks (cf); "
            "only structured (scf) functions can be inlined for differentiation",
        )
    body = callee.body.block
    vmap: dict[SSAValue, SSAValue] = dict(zip(body.args, call.arguments))
    block = call.parent_block()
    assert block is not None
    results: list[SSAValue] = []
    for op in body.ops:
        if isinstance(op, func.ReturnOp):
            results = [vmap.get(v, v) for v in op.arguments]
            continue
        block.insert_op_before(op.clone(value_mapper=vmap), call)
    Rewriter.replace_op(call, [], results)


def inline_calls(function: func.FuncOp, module: Operation, name: str | None = None,
                 mode: str = "reverse") -> None:
    """Inline, transitively, every call in `function` (a copy of `@name`)
    to a defined function, except checkpointed calls in reverse `mode`
    (`ad.checkpoint`: the reverse sweep calls the callee's own gradient) and
    calls of functions with a custom rule (reverse or forward `mode`): those
    stay calls, tagged `ad.custom_call` (adpasses/transforms/custom_calls.py).
    Forward mode tapes nothing, so a checkpoint has nothing to save there:
    its calls are inlined like any other (jvp, jacfwd, and the forward sweep
    over a gradient in hessian/hvp)."""
    resolve_indirect_calls(function)
    check_no_recursion(module, function, name, mode)
    inline_checkpointed = mode == "forward"
    while True:
        resolve_indirect_calls(function)  # inlined bodies may call func.constant values
        for call, callee, rule in custom_calls(function, module, mode):
            keep_custom_call(call, callee, rule, mode)
        calls = [
            (op, callee)
            for op in function.walk()
            if isinstance(op, func.CallOp) and (inline_checkpointed or CHECKPOINT_ATTR not in op.attributes)
            and not is_kept_call(op, mode)
            and (callee := _callee(module, op)) is not None
        ]
        if not calls:
            return
        for call, callee in calls:
            inline_call(call, callee)


@dataclass(frozen=True)
class InlineCallsPass(ModulePass):
    """A step of the reverse pipeline: inlines into the functions it is
    working on (marked `ad.gradient_of`: its copies of the primals), never
    into the user's functions."""

    name = "ad-inline-calls"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in marked_functions(op):
            request = GradientRequest.of_function(f)
            assert request is not None
            inline_calls(f, op, request.primal)
