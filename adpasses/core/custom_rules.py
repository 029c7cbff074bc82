"""Custom derivative rules: reading and checking `ad.custom_rule`.

A function carrying `ad.custom_rule` (dialects/ad.py, CUSTOM_RULE_ATTR) is
differentiated by the functions it names, not through its body (it may
have none: an external C function). The calling conventions, for
`@f : (A1, ..., An) -> (R1, ..., Rm)`:

- `augmented_primal : (A1..An) -> (R1..Rm, residuals...)`: f's results,
  then whatever the reverse rule needs (any number, any scalar types);
- `reverse : (residuals..., cotangent of each float Rj, shadow of each
  float memref Ai) -> (cotangent of each float scalar Ai)`: an array
  argument's cotangent is accumulated into its shadow, as Enzyme's rules do;
  a memref residual must be an argument the augmented primal returns
  unchanged;
- `forward : (A1..An, tangent of each float Ai) -> (R1..Rm, tangent of
  each float Rj)` (a float memref argument's tangent is a memref of its
  type).

`augmented_primal` and `reverse` come together. A function with only a
`forward` rule is differentiated in reverse mode by calling that rule
once per float scalar argument, and once per element of a float memref
argument, with a unit tangent (its tangents are linear in the input
tangents, as JAX assumes of a custom_jvp rule).

This module only reads and checks the attributes: the steps that keep such
calls (`transforms/inline_calls.py`), the analyses and the rules
(`reverse/rules/func.py`, `forward/rules/func.py`) ask it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, SymbolRefAttr
from xdsl.ir import Attribute, Operation
from xdsl.traits import SymbolTable

from adpasses.core.diagnostics import error_at
from adpasses.core.types import is_float_type, is_memref_type
from adpasses.dialects.ad import CUSTOM_CALL_ATTR, CUSTOM_RULE_ATTR

RULE_KEYS = ("augmented_primal", "reverse", "forward")


@dataclass(frozen=True)
class CustomRule:
    """The rule functions of `@primal` (None where not given)."""

    primal: str
    augmented_primal: str | None = None
    reverse: str | None = None
    forward: str | None = None
    residuals: int | None = None  # on a reverse-mode call of the augmented primal

    @property
    def has_reverse(self) -> bool:
        return self.reverse is not None

    def serves(self, mode: str) -> bool:
        """Whether a call can be differentiated by this rule in `mode`
        (reverse: a reverse rule, or a forward rule to call per argument)."""
        if mode == "forward":
            return self.forward is not None
        return self.reverse is not None or self.forward is not None

    def call_attribute(self, **extra: Attribute) -> DictionaryAttr:
        entries: dict[str, Attribute] = {"primal": SymbolRefAttr(self.primal)}
        for key in RULE_KEYS:
            name = getattr(self, key)
            if name is not None:
                entries[key] = SymbolRefAttr(name)
        entries.update(extra)
        return DictionaryAttr(entries)


def _symbol(attr: Attribute | None) -> str | None:
    if isinstance(attr, SymbolRefAttr):
        return attr.root_reference.data
    return None


def custom_rule_of_function(f: func.FuncOp) -> CustomRule | None:
    """The rule `@f` declares (`ad.custom_rule`), its keys checked."""
    attr = f.attributes.get(CUSTOM_RULE_ATTR)
    if attr is None:
        return None
    name = f.sym_name.data
    if not isinstance(attr, DictionaryAttr):
        raise error_at(f, f"'{CUSTOM_RULE_ATTR}' must be a dictionary of symbols "
                          "{augmented_primal = @f_fwd, reverse = @f_bwd, forward = @f_jvp}")
    entries = attr.data
    for key, value in entries.items():
        if key not in RULE_KEYS:
            raise error_at(f, f"'{CUSTOM_RULE_ATTR}' has an unknown key '{key}'; the keys are "
                              + ", ".join(RULE_KEYS))
        if _symbol(value) is None:
            raise error_at(f, f"'{CUSTOM_RULE_ATTR}': '{key}' must name a function (@name), got {value}")
    rule = CustomRule(name, *(_symbol(entries.get(key)) for key in RULE_KEYS))
    if (rule.augmented_primal is None) != (rule.reverse is None):
        raise error_at(f, f"'{CUSTOM_RULE_ATTR}' of @{name} needs both 'augmented_primal' and "
                          "'reverse' (the forward sweep's call and the reverse sweep's), or neither")
    if rule.reverse is None and rule.forward is None:
        raise error_at(f, f"'{CUSTOM_RULE_ATTR}' of @{name} names no rule")
    return rule


def custom_rule_of_call(call: Operation) -> CustomRule | None:
    """The rule a differentiation step attached to `call` (`ad.custom_call`)."""
    attr = call.attributes.get(CUSTOM_CALL_ATTR)
    if not isinstance(attr, DictionaryAttr):
        return None
    entries = attr.data
    primal = _symbol(entries.get("primal"))
    if primal is None:
        raise error_at(call, f"'{CUSTOM_CALL_ATTR}' must name its primal function (primal = @f)")
    residuals = entries.get("residuals")
    count = residuals.value.data if isinstance(residuals, IntegerAttr) else None
    return CustomRule(primal, *(_symbol(entries.get(key)) for key in RULE_KEYS), residuals=count)


def lookup_function(anchor: Operation, name: str, user: Operation) -> func.FuncOp:
    found = SymbolTable.lookup_symbol(anchor, name)
    if not isinstance(found, func.FuncOp):
        raise error_at(user, f"names '@{name}' as a custom rule, but the module has no such function")
    return found


def float_scalar_positions(types: list[Attribute]) -> list[int]:
    return [k for k, t in enumerate(types) if is_float_type(t)]


def tangent_positions(types: list[Attribute]) -> list[int]:
    """Arguments/results that have a tangent: float scalars and float memrefs."""
    return [k for k, t in enumerate(types)
            if is_float_type(t) or (is_memref_type(t) and is_float_type(t.element_type))]


def _types_text(types: list[Attribute]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"


def check_rule_signatures(f: func.FuncOp, rule: CustomRule) -> int | None:
    """Check the rule functions' types against f's (the conventions in the
    module docstring); return the number of residuals (None without a
    reverse rule). Errors are located at f."""
    ftype = f.function_type
    args, results = list(ftype.inputs.data), list(ftype.outputs.data)
    name = f.sym_name.data

    def expect(rule_name: str, role: str, inputs: list[Attribute] | None,
               outputs: list[Attribute] | None, prefix_outputs: int | None = None) -> func.FuncOp:
        g = lookup_function(f, rule_name, f)
        gtype = g.function_type
        gin, gout = list(gtype.inputs.data), list(gtype.outputs.data)
        ok = (inputs is None or gin == inputs) and (outputs is None or gout == outputs)
        if prefix_outputs is not None:
            ok = ok and gout[:prefix_outputs] == results
        if not ok:
            want_in = _types_text(inputs) if inputs is not None else "(...)"
            want_out = (_types_text(outputs) if outputs is not None
                        else _types_text(results)[:-1] + (", " if results else "") + "residuals...)")
            raise error_at(f, f"the {role} rule @{rule_name} of @{name} has type "
                              f"{_types_text(gin)} -> {_types_text(gout)}, but the convention asks "
                              f"{want_in} -> {want_out} (docs/custom_rules.md)")
        return g

    float_results = [results[k] for k in float_scalar_positions(results)]
    residuals = None
    if rule.reverse is not None and rule.augmented_primal is not None:
        aug = expect(rule.augmented_primal, "augmented primal", args, None, prefix_outputs=len(results))
        residual_types = list(aug.function_type.outputs.data)[len(results):]
        residuals = len(residual_types)
        forwarded = _forwarded(aug, residuals)
        for k, t in enumerate(residual_types):
            if is_memref_type(t) and k not in forwarded:
                raise error_at(f, f"the augmented primal @{rule.augmented_primal} of @{name} returns a "
                                  f"memref residual (residual {k}) that is not one of its arguments; an "
                                  "array residual must be an argument, unchanged (save the numbers you "
                                  "need otherwise)")
        shadows = [t for t in args if is_memref_type(t) and is_float_type(t.element_type)]
        expect(rule.reverse, "reverse", residual_types + float_results + shadows,
               [args[k] for k in float_scalar_positions(args)])
    if rule.forward is not None:
        tangents = [args[k] for k in tangent_positions(args)]
        expect(rule.forward, "forward", args + tangents, results + float_results)
    return residuals


def residual_note(value: Attribute) -> str | None:
    """For a residual of a reverse-mode custom call (a result of the
    augmented primal beyond f's results): what it is, for the cache report."""
    from xdsl.ir import OpResult

    if not isinstance(value, OpResult):
        return None
    rule = custom_rule_of_call(value.op)
    if rule is None or rule.residuals is None:
        return None
    first = len(value.op.results) - rule.residuals
    if value.index < first:
        return None
    return (f"residual {value.index - first} of the custom rule of @{rule.primal} (returned by "
            f"@{rule.augmented_primal} for @{rule.reverse})")


def _forwarded(aug: func.FuncOp, residuals: int) -> dict[int, int]:
    """Residual k -> argument j where the augmented primal returns its
    argument j unchanged as residual k."""
    if not aug.body.blocks:
        return {}
    ret = aug.body.blocks[-1].last_op
    if not isinstance(ret, func.ReturnOp):
        return {}
    first = len(ret.arguments) - residuals
    args = list(aug.body.block.args)
    return {k: args.index(v) for k, v in enumerate(list(ret.arguments)[first:]) if v in args}


def forwarded_arguments(call: Operation, rule: CustomRule) -> dict[int, int]:
    """Residuals that the augmented primal returns unchanged from its
    arguments (residual k is argument j): the reverse rule reads the call's
    operand j instead, which the cache planner may reuse or reload rather
    than tape."""
    if rule.augmented_primal is None or rule.residuals is None:
        return {}
    aug = SymbolTable.lookup_symbol(call, rule.augmented_primal)
    if not isinstance(aug, func.FuncOp):
        return {}
    return _forwarded(aug, rule.residuals)
