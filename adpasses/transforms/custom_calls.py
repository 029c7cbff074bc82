"""Calls of functions with a custom rule (`ad.custom_rule`), in the copies
the differentiation steps work on.

`ad-inline-calls` inlines every callee, except a function whose custom rule
serves the mode (adpasses/core/custom_rules.py): its call stays a call,
tagged `ad.custom_call` with the rule functions, and the call's rule
(`reverse/rules/func.py`, `forward/rules/func.py`) differentiates it:

- reverse mode, with a reverse rule: the call becomes a call of the
  augmented primal, whose extra results are the residuals
  (`%y, %r = func.call @f_fwd(%x) {ad.custom_call = {primal = @f,
  augmented_primal = @f_fwd, reverse = @f_bwd, residuals = 1}}`); the cache
  planner sees them as values the reverse rule needs (taped in a loop);
- reverse mode with only a forward rule, and forward mode: the call of @f
  stays, tagged (forward mode without a forward rule: an error if the call
  carries derivatives, else a plain call).

A function with a custom rule that is itself differentiated (grad of it)
gets a copy whose body calls it (`calling_copy`), so the same rule applies.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Block, Operation, Region
from xdsl.rewriter import Rewriter

from adpasses.core.custom_rules import (
    CustomRule,
    check_rule_signatures,
    custom_rule_of_call,
    custom_rule_of_function,
    lookup_function,
)
from adpasses.dialects.ad import CUSTOM_CALL_ATTR


def rule_of_callee(module: Operation, call: func.CallOp) -> tuple[func.FuncOp, CustomRule] | None:
    from xdsl.traits import SymbolTable

    callee = SymbolTable.lookup_symbol(module, call.callee)
    if not isinstance(callee, func.FuncOp):
        return None
    rule = custom_rule_of_function(callee)
    return None if rule is None else (callee, rule)


def is_kept_call(call: Operation, mode: str) -> bool:
    """A call already tagged for `mode` (a step ran before)."""
    rule = custom_rule_of_call(call)
    if rule is None:
        return False
    # In forward mode a call of an augmented primal (reverse mode's) is a
    # plain call again: the augmented primal is inlined and differentiated.
    return rule.residuals is None if mode == "forward" else True


def keep_custom_call(call: func.CallOp, callee: func.FuncOp, rule: CustomRule, mode: str) -> None:
    """Tag `call` (rewritten as a call of the augmented primal in reverse
    mode with a reverse rule), after checking the rule's signatures."""
    residuals = check_rule_signatures(callee, rule)
    if mode == "reverse" and rule.reverse is not None:
        assert rule.augmented_primal is not None and residuals is not None
        aug = lookup_function(callee, rule.augmented_primal, callee)
        new = func.CallOp(rule.augmented_primal, list(call.arguments),
                          list(aug.function_type.outputs.data))
        new.location = call.location
        new.attributes[CUSTOM_CALL_ATTR] = rule.call_attribute(residuals=IntegerAttr(residuals, i64))
        n = len(call.results)
        for old, res in zip(call.results, new.results[:n]):
            res.name_hint = old.name_hint
        for k, res in enumerate(new.results[n:]):
            res.name_hint = f"{rule.primal}_residual{k}"
        Rewriter.replace_op(call, new, list(new.results[:n]))
        return
    call.attributes[CUSTOM_CALL_ATTR] = rule.call_attribute()


def custom_calls(function: func.FuncOp, module: Operation, mode: str) -> list[tuple[func.CallOp, func.FuncOp, CustomRule]]:
    """The calls in `function` to functions with a custom rule that are not
    tagged yet. All are kept, whichever rules they have: a call whose rule
    lacks what the mode needs is an error of the call's rule if it carries
    derivatives (a function with only a reverse rule in forward mode), and a
    plain call if it does not."""
    found = []
    for op in function.walk():
        if isinstance(op, func.CallOp) and not is_kept_call(op, mode):
            hit = rule_of_callee(module, op)
            if hit is not None:
                found.append((op, *hit))
    return found


def calling_copy(primal: func.FuncOp) -> func.FuncOp:
    """A function of `primal`'s type whose body calls `primal` (a function
    with a custom rule, differentiated itself: the call takes the rule)."""
    ftype = primal.function_type
    block = Block(arg_types=list(ftype.inputs.data))
    call = func.CallOp(primal.sym_name.data, list(block.args), list(ftype.outputs.data))
    call.location = primal.location
    ret = func.ReturnOp(*call.results)
    ret.location = primal.location
    block.add_ops([call, ret])
    copy = func.FuncOp(primal.sym_name.data, ftype, Region([block]), arg_attrs=primal.arg_attrs)
    copy.location = primal.location
    return copy
