"""The `ad` dialect: requests for derivatives, and the tapes that serve them.

Ops:
- `ad.autodiff @f(args) {activity = [...], ret_activity = [...]}`: the
  reverse-mode derivative of `@f`, replaced by `--reverse` with a call to a
  generated gradient function. See docs/dialect.md.
- `ad.fwddiff @f(args) {activity = [...], ret_activity = [...], width = N}`:
  the forward-mode derivative (tangents) of `@f`, replaced by `--forward`
  with a call to a generated tangent function. See docs/dialect.md and
  docs/forward_mode.md.
- `ad.tape.create`, `ad.tape.push`, `ad.tape.pop`, `ad.tape.free`: a LIFO
  stack of scalars written by the forward sweep and read back, in reverse
  order, by the reverse sweep. With a capacity operand the tape never grows;
  without one it doubles on demand (scf.while loops).
- `ad.shadow_check %x, %dx`: stops the call with an error unless shadow
  `%dx` has exactly the sizes of its primal `%x` (emitted by `--reverse` at
  the entry of gradient functions, so that shadow accesses need no bounds
  checks; a no-op when the module is compiled with boundscheck off).
- `ad.keep %v, ...`: keeps the ops that define its operands, and with them
  their bounds checks, through dead-code elimination (written by
  `ad-elide-shadow-checks` on the accesses whose checks it relied on);
  lowered to nothing.

Memory effects (xDSL traits, read by `adpasses.core.effects.effects_of`): the
tape ops touch their tape (`ad.tape.push` writes it, `ad.tape.pop` reads and
writes it, `ad.tape.free` frees it, `ad.tape.create` allocates), never a
memref; `ad.shadow_check`, `ad.tape.create` and `ad.tape.push` may end the
call with an error (a write of `STOP`); `ad.keep` writes `PINNED`, which
nothing reads, so no pass erases it. `ad.autodiff` declares none: its
effects are its callee's, unknown here (like `func.call`).

Attributes on memref accesses (the `*_ATTR` names below): `ad.unchecked`
(no bounds check), and the tags by which `ad-elide-shadow-checks` decides
which reverse-sweep accesses may drop their checks: `ad.twin_id`,
`ad.twin_of`, `ad.twin_end`, `ad.own_sizes` (docs/reverse_mode.md).

Argument attribute `ad.noalias` (unit) on a `func.func` argument promises that
no other argument's memory overlaps this one's, like `llvm.noalias`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    FlatSymbolRefAttrConstr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.dialects import memref
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    attr_def,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    result_def,
    var_operand_def,
    traits_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    EffectInstance,
    MemoryAllocEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    MemoryEffect,
    MemoryEffectKind,
    Pure,
    Resource,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from adpasses.core.types import is_float_type, is_memref_type

# ---------------------------------------------------------------------------
# Activities
# ---------------------------------------------------------------------------

ARG_ACTIVITIES = ("const", "active", "dup", "dupnoneed")
"""Per-argument activities, as in Enzyme: `const` is not differentiated;
`active` is a float scalar whose derivative is returned; `dup` is a memref
followed by its shadow, into which the derivative is accumulated (`+=`);
`dupnoneed` is like `dup` but the primal contents need not be right after."""

RET_ACTIVITIES = ("const", "active", "dup")
"""Per-result activities: `active` results (floats) take a seed scalar,
passed after the arguments; `dup` results (memrefs) take a seed memref of
the result's type and sizes (its cotangent, read, not written), passed in
the same place; `const` results are not differentiated."""


@irdl_attr_definition
class TapeType(ParametrizedAttribute, TypeAttribute):
    """`!ad.tape<T>`: a LIFO stack of values of scalar type T."""

    name = "ad.tape"

    element_type: Attribute = param_def()

    def __init__(self, element_type: Attribute):
        super().__init__(element_type)


@irdl_attr_definition
class SplitTapeType(ParametrizedAttribute, TypeAttribute):
    """`!ad.split_tape`: what the forward half of a split `ad.autodiff`
    (`split = forward`) hands its reverse half (`split = reverse`): the
    values the reverse sweep reads, opaque here. `ad-split-sweeps` replaces
    it by those values (the augmented primal returns them, the reverse
    function takes them)."""

    name = "ad.split_tape"


SPLIT_MODES = ("forward", "reverse")
"""`split` of `ad.autodiff`: its forward half (the augmented primal: primal
results and a tape) or its reverse half (shadows and seeds, and the tape)."""


# ---------------------------------------------------------------------------
# What the differentiation calls share (ad.autodiff, ad.fwddiff)
# ---------------------------------------------------------------------------


class DiffCallSyntax:
    """What ad.autodiff and ad.fwddiff share: per-argument and per-result
    activities, the callee lookup, and the textual form
    `@f(%a, ...) {activity = [..], ret_activity = [..], EXTRAS} : (...) -> (...)`
    (each op names its extra entries). The ops define `callee`, `activity`
    and `ret_activity` as properties (IRDL reads them from the op class)."""

    @property
    def arg_activities(self) -> list[str]:
        return [a.data for a in self.activity.data]  # type: ignore[attr-defined]

    @property
    def ret_activities(self) -> list[str]:
        return [a.data for a in self.ret_activity.data]  # type: ignore[attr-defined]

    def callee_func(self) -> FuncOp:
        callee = SymbolTable.lookup_symbol(self, self.callee)  # type: ignore[arg-type]
        if not isinstance(callee, FuncOp):
            raise VerifyException(f"'{self.callee}' does not name a func.func in this module")
        return callee

    def print_call(self, printer: Printer, extras: Sequence[str]) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.callee)
        printer.print_string("(")
        printer.print_list(self.args, printer.print_operand)  # type: ignore[attr-defined]
        printer.print_string(") {activity = [")
        printer.print_string(", ".join(self.arg_activities))
        printer.print_string("], ret_activity = [")
        printer.print_string(", ".join(self.ret_activities))
        printer.print_string("]")
        for extra in extras:
            printer.print_string(f", {extra}")
        printer.print_string("} : ")
        printer.print_function_type(
            [a.type for a in self.args], self.result_types  # type: ignore[attr-defined]
        )


def parse_diff_call(parser: Parser, op_name: str, extras: dict[str, Callable[[Parser], object] | None]):
    """Parse `@f(%a, ...) {activity = [...], ret_activity = [...], ...} : type`.
    `extras` maps each extra entry's name to the parser of its value (after
    `=`), or to None for a bare flag. Returns (callee, operands, activity,
    ret_activity, the extra entries given, function type)."""
    callee = parser.parse_attribute()
    if not isinstance(callee, SymbolRefAttr):
        parser.raise_error("expected a function symbol such as @f")
    pos = parser.pos
    operands = parser.parse_comma_separated_list(
        parser.Delimiter.PAREN, parser.parse_unresolved_operand
    )
    names = ("activity", "ret_activity", *extras)
    entries: dict[str, object] = {}

    def parse_entry() -> None:
        key = parser.parse_identifier(f"{op_name} entry ({', '.join(names)})")
        if key not in names:
            parser.raise_error(f"unknown {op_name} entry '{key}' (expected {', '.join(names)})")
        if key in extras and extras[key] is None:
            entries[key] = True
            return
        if getattr(extras.get(key), "optional_value", False) and parser.parse_optional_punctuation("=") is None:
            entries[key] = True  # a flag that may also take a value
            return
        if not getattr(extras.get(key), "optional_value", False):
            parser.parse_punctuation("=")
        value_parser = extras.get(key)
        entries[key] = value_parser(parser) if value_parser is not None else \
            parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, lambda: parser.parse_identifier("activity"))

    parser.parse_comma_separated_list(parser.Delimiter.BRACES, parse_entry)
    parser.parse_punctuation(":")
    ftype = parser.parse_function_type()
    args = parser.resolve_operands(operands, ftype.inputs.data, pos)
    for key in ("activity", "ret_activity"):
        if key not in entries:
            parser.raise_error(f"{op_name} needs '{key} = [...]'")
    given = {k: v for k, v in entries.items() if k in extras}
    return callee, args, entries["activity"], entries["ret_activity"], given, ftype


def _parse_primal_results(parser: Parser) -> tuple[int, ...]:
    """The value of `with_primal = [0, 2]` (the bare flag means every result)."""
    return tuple(parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False, allow_negative=False)))


_parse_primal_results.optional_value = True  # type: ignore[attr-defined]


def _parse_split(parser: Parser) -> str:
    start = parser.pos
    mode = parser.parse_identifier("split mode (forward or reverse)")
    if mode not in SPLIT_MODES:
        parser.raise_error(f"unknown split '{mode}'; expected forward or reverse", start, parser.pos)
    return mode


def _parse_width(parser: Parser) -> int:
    start = parser.pos
    n = parser.parse_integer(allow_boolean=False, allow_negative=False)
    if n < 1:
        parser.raise_error(f"width must be at least 1, got {n}", start, parser.pos)
    return n


# ---------------------------------------------------------------------------
# ad.autodiff
# ---------------------------------------------------------------------------


@irdl_op_definition
class AutodiffOp(DiffCallSyntax, IRDLOperation):
    """Calls the reverse-mode derivative of `callee`.

    Operands: per argument its primal value, followed by `width` shadows
    (lane 0 first) when the activity is `dup`/`dupnoneed`; then `width`
    seeds per `active`/`dup` result (lane 0 first).
    Results: the callee's results when `with_primal` is set, then `width`
    derivatives (lane 0 first) per `active` argument, in argument order.
    With `width` N (vector reverse mode) one forward sweep serves N
    cotangents: lane k's seeds give lane k's shadows and derivatives.
    """

    name = "ad.autodiff"

    callee = prop_def(FlatSymbolRefAttrConstr)
    activity = prop_def(ArrayAttr[StringAttr])
    ret_activity = prop_def(ArrayAttr[StringAttr])
    with_primal = opt_prop_def(UnitAttr)
    primal_results = opt_prop_def(ArrayAttr[IntegerAttr])
    """With `with_primal`: the results whose primal is returned (in the
    syntax `with_primal = [0, 2]`; Enzyme's per-result `active` /
    `activenoneed`); absent: all of them."""
    width = opt_prop_def(IntegerAttr)
    strong_zero = opt_prop_def(UnitAttr)
    """Enzyme's `strong_zero`: an adjoint whose seed is zero is zero, even
    where the partial derivative is inf or nan (0 * inf gives 0, not nan)."""
    split = opt_prop_def(StringAttr)
    """Split mode (`SPLIT_MODES`): `forward` takes the primal arguments and
    returns the primal results and an `!ad.split_tape`; `reverse` takes the
    shadows, the seeds and that tape, and returns the derivatives."""

    args = var_operand_def()
    res = var_result_def()

    def __init__(
        self,
        callee: str | SymbolRefAttr,
        args: Sequence[SSAValue | Operation],
        activity: Sequence[str],
        ret_activity: Sequence[str],
        result_types: Sequence[Attribute],
        with_primal: bool | Sequence[int] = False,
        width: int = 1,
        strong_zero: bool = False,
        split: str | None = None,
    ):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        props: dict[str, Attribute] = {
            "callee": callee,
            "activity": ArrayAttr([StringAttr(a) for a in activity]),
            "ret_activity": ArrayAttr([StringAttr(a) for a in ret_activity]),
        }
        if with_primal is not False:
            props["with_primal"] = UnitAttr()
        if with_primal is not True and with_primal is not False:
            props["primal_results"] = ArrayAttr([IntegerAttr(k, 64) for k in with_primal])
        if width != 1:
            props["width"] = IntegerAttr(width, 64)
        if strong_zero:
            props["strong_zero"] = UnitAttr()
        if split is not None:
            props["split"] = StringAttr(split)
        super().__init__(operands=[args], result_types=[result_types], properties=props)

    @property
    def lanes(self) -> int:
        """`width`: cotangents per sweep (1 when absent)."""
        return 1 if self.width is None else self.width.value.data

    @property
    def primal_choice(self) -> bool | tuple[int, ...]:
        """`with_primal` as given: False, True (every result) or the
        indices of the results whose primal is returned."""
        if self.with_primal is None:
            return False
        if self.primal_results is None:
            return True
        return tuple(a.value.data for a in self.primal_results.data)

    @property
    def split_mode(self) -> str | None:
        """`forward`, `reverse`, or None (not split)."""
        return None if self.split is None else self.split.data

    # -- syntax ------------------------------------------------------------
    # ad.autodiff @f(%x, %dx, %s) {activity = [dup], ret_activity = [active]}
    #     : (memref<?xf64>, memref<?xf64>, f64) -> f64

    def print(self, printer: Printer) -> None:
        choice = self.primal_choice
        extras = [] if choice is False else ["with_primal"] if choice is True else [
            f"with_primal = [{', '.join(map(str, choice))}]"]
        if self.lanes != 1:
            extras.append(f"width = {self.lanes}")
        if self.strong_zero is not None:
            extras.append("strong_zero")
        if self.split is not None:
            extras.append(f"split = {self.split.data}")
        self.print_call(printer, extras)

    @classmethod
    def parse(cls, parser: Parser) -> AutodiffOp:
        callee, args, acts, rets, extras, ftype = parse_diff_call(
            parser, "ad.autodiff",
            {"with_primal": _parse_primal_results, "width": _parse_width, "strong_zero": None,
             "split": _parse_split})
        return cls(callee, args, acts, rets, ftype.outputs.data,
                   with_primal=extras.get("with_primal", False), width=extras.get("width", 1),
                   strong_zero="strong_zero" in extras, split=extras.get("split"))

    # -- verification --------------------------------------------------------

    def verify_(self) -> None:
        if self.lanes < 1:
            raise VerifyException(f"width must be at least 1, got {self.lanes}")
        self.verify_against(self.callee_func().function_type)

    def verify_against(self, ftype: FunctionType) -> None:
        """Check activities, operands and results against the callee's type."""
        acts, rets, n = self.arg_activities, self.ret_activities, self.lanes
        check_activity_signature(ftype, acts, rets)
        if self.split is not None:
            self._verify_split(ftype)
            return
        expected = autodiff_operand_types(ftype, acts, rets, n)
        got = [a.type for a in self.args]
        if len(got) != len(expected):
            n_shadow = n * sum(a in ("dup", "dupnoneed") for a in acts)
            n_seed = n * sum(a in ("active", "dup") for a in rets)
            raise VerifyException(
                f"expected {len(expected)} operands ({len(acts)} arguments, {n_shadow} shadows, "
                f"{n_seed} seeds{f'; width {n}' if n != 1 else ''}), got {len(got)}; "
                "is a shadow or a seed missing?"
            )
        for k, (e, g) in enumerate(zip(expected, got)):
            if e != g:
                raise VerifyException(f"operand {k} has type {g}, expected {e}")
        with_primal = self.primal_choice
        if with_primal is not True and with_primal is not False:
            n_out = len(ftype.outputs.data)
            if any(k < 0 or k >= n_out for k in with_primal) or list(with_primal) != sorted(set(with_primal)):
                raise VerifyException(
                    f"with_primal = [{', '.join(map(str, with_primal))}] must list distinct result "
                    f"indices in increasing order, each below {n_out} (the callee's result count)")
        want_res = autodiff_result_types(ftype, acts, with_primal, n)
        if list(self.result_types) != want_res:
            raise VerifyException(
                "results must be "
                + ("" if with_primal is False else "the primal results, then " if with_primal is True
                   else f"the primal results {list(with_primal)}, then ")
                + (f"{n} derivatives" if n != 1 else "one derivative")
                + f" per active argument: expected ({', '.join(map(str, want_res))}), "
                f"got ({', '.join(map(str, self.result_types))})"
            )


    def _verify_split(self, ftype: FunctionType) -> None:
        mode = self.split_mode
        if mode not in SPLIT_MODES:
            raise VerifyException(f"unknown split '{mode}'; expected forward or reverse")
        choice = self.primal_choice
        if choice is not False and mode == "reverse":
            raise VerifyException("with_primal does not apply to the reverse half of a split ad.autodiff "
                                  "(it returns the derivatives); choose the primal results on its forward "
                                  "half: split = forward, with_primal = [...]")
        chosen = None if isinstance(choice, bool) else choice
        if chosen is not None:
            n_out = len(ftype.outputs.data)
            if any(k < 0 or k >= n_out for k in chosen) or list(chosen) != sorted(set(chosen)):
                raise VerifyException(
                    f"with_primal = [{', '.join(map(str, chosen))}] must list distinct result "
                    f"indices in increasing order, each below {n_out} (the callee's result count)")
        acts, rets, n = self.arg_activities, self.ret_activities, self.lanes
        expected, want_res = split_types(ftype, acts, rets, mode, n, chosen)
        got = [a.type for a in self.args]
        what = ("the primal arguments" if mode == "forward"
                else "the shadows, the seeds, then the !ad.split_tape of the forward half")
        if got != expected:
            raise VerifyException(
                f"split = {mode} takes {what}: expected ({', '.join(map(str, expected))}), "
                f"got ({', '.join(map(str, got))})")
        if list(self.result_types) != want_res:
            what = ("one derivative per active argument" if mode == "reverse" else
                    "the primal results, then an !ad.split_tape" if chosen is None else
                    f"the primal results {list(chosen)}, then an !ad.split_tape")
            raise VerifyException(
                f"split = {mode} returns {what}: expected ({', '.join(map(str, want_res))}), "
                f"got ({', '.join(map(str, self.result_types))})")


def split_types(ftype: FunctionType, acts: Sequence[str], rets: Sequence[str], mode: str,
                width: int = 1, chosen: Sequence[int] | None = None) -> tuple[list[Attribute], list[Attribute]]:
    """Operand and result types of a split `ad.autodiff` (`mode` forward or
    reverse). Forward: the primal arguments -> the primal results (those
    `chosen` by `with_primal = [...]`, else all) and an `!ad.split_tape`.
    Reverse: `width` shadows per dup argument and seeds per active or dup
    result, then the tape -> `width` derivatives per active argument."""
    if mode == "forward":
        outputs = list(ftype.outputs.data)
        primal = outputs if chosen is None else [outputs[k] for k in chosen]
        return list(ftype.inputs.data), [*primal, SplitTapeType()]
    shadows = [ty for act, ty in zip(acts, ftype.inputs.data) if act in ("dup", "dupnoneed")
               for _ in range(width)]
    seeds = [ty for act, ty in zip(rets, ftype.outputs.data) if act in ("active", "dup")
             for _ in range(width)]
    return [*shadows, *seeds, SplitTapeType()], autodiff_result_types(ftype, acts, False, width)


def check_activity_signature(ftype: FunctionType, acts: Sequence[str], rets: Sequence[str]) -> None:
    """Activities fit the function: counts, dup only on memrefs, active only
    on floats. Raises VerifyException with the remedy."""
    inputs, outputs = list(ftype.inputs.data), list(ftype.outputs.data)
    for a in acts:
        if a not in ARG_ACTIVITIES:
            raise VerifyException(
                f"unknown argument activity '{a}'; expected one of {', '.join(ARG_ACTIVITIES)}"
            )
    for a in rets:
        if a not in RET_ACTIVITIES:
            raise VerifyException(
                f"unknown result activity '{a}'; expected one of {', '.join(RET_ACTIVITIES)}"
            )
    if len(acts) != len(inputs):
        raise VerifyException(f"expected {len(inputs)} argument activities, got {len(acts)}")
    if len(rets) != len(outputs):
        raise VerifyException(f"expected {len(outputs)} result activities, got {len(rets)}")
    for i, (act, ty) in enumerate(zip(acts, inputs)):
        if act in ("dup", "dupnoneed") and not is_memref_type(ty):
            raise VerifyException(
                f"argument {i} is '{act}' but has scalar type {ty}; "
                "use 'active' for a float scalar or 'const'"
            )
        if act == "active" and not is_float_type(ty):
            raise VerifyException(
                f"argument {i} is 'active' but has type {ty}; "
                + (_UNSUPPORTED_FLOAT if _other_float(ty) else
                   "only float scalars can be active (use 'dup' for a memref, 'const' for integers)")
            )
    for j, (act, ty) in enumerate(zip(rets, outputs)):
        if act == "active" and not is_float_type(ty):
            raise VerifyException(
                f"result {j} is 'active' but has type {ty}; "
                + (_UNSUPPORTED_FLOAT if _other_float(ty) else
                   "only float results can be active" + ("; use 'dup' for a memref result (its seed "
                                                        "is a memref)" if is_memref_type(ty) else ""))
            )
        if act == "dup" and not is_memref_type(ty):
            raise VerifyException(
                f"result {j} is 'dup' but has scalar type {ty}; use 'active' for a float result "
                "(its seed is a scalar) or 'const'"
            )


_UNSUPPORTED_FLOAT = "derivatives are computed in f16, f32 or f64 only; convert to one of them"


def _other_float(ty: Attribute) -> bool:
    """A float type adpasses does not differentiate (bf16, f80, f128, ...)."""
    from adpasses.core.type_errors import type_kind

    return not is_memref_type(ty) and type_kind(str(ty)) == "float"


def autodiff_operand_types(
    ftype: FunctionType, acts: Sequence[str], rets: Sequence[str], width: int = 1
) -> list[Attribute]:
    """Primal arguments, `width` shadows after each dup one, `width` seeds
    per active or dup result (a scalar or a memref of the result's type),
    in result order."""
    types: list[Attribute] = []
    for act, ty in zip(acts, ftype.inputs.data):
        types.append(ty)
        if act in ("dup", "dupnoneed"):
            types += [ty] * width
    for act, ty in zip(rets, ftype.outputs.data):
        if act in ("active", "dup"):
            types += [ty] * width
    return types


def autodiff_result_types(
    ftype: FunctionType, acts: Sequence[str], with_primal: bool | Sequence[int], width: int = 1
) -> list[Attribute]:
    """The primal results if asked (all of them for True, those listed for
    a sequence of indices), then `width` derivatives per active argument."""
    outputs = list(ftype.outputs.data)
    types = (outputs if with_primal is True else [] if with_primal is False
             else [outputs[k] for k in with_primal if 0 <= k < len(outputs)])
    for act, ty in zip(acts, ftype.inputs.data):
        if act == "active":
            types += [ty] * width
    return types


# ---------------------------------------------------------------------------
# ad.fwddiff
# ---------------------------------------------------------------------------

FWD_ARG_ACTIVITIES = ("const", "dup", "dupnoneed")
"""Per-argument activities of `ad.fwddiff`: `dup` is followed by its
tangent(s) (a float scalar's tangent is a float, a memref's a memref of the
same type); `dupnoneed` is the same for arguments (the tangent is what is
differentiated along)."""

FWD_RET_ACTIVITIES = ("const", "dup", "dupnoneed")
"""Per-result activities of `ad.fwddiff`: `const` gives the primal result;
`dup` the primal result, then its tangent(s); `dupnoneed` the tangent(s)
only."""


@irdl_op_definition
class FwddiffOp(DiffCallSyntax, IRDLOperation):
    """Calls the forward-mode derivative (tangent) of `callee`.

    Operands: per argument its primal value, followed by `width` tangents
    (lane 0 first) when the activity is `dup`/`dupnoneed`; a tangent has
    its primal's type (a memref tangent has its primal's sizes).
    Results, per result of the callee in order: the primal result unless
    it is `dupnoneed`, then `width` tangents (lane 0 first) when it is
    `dup`/`dupnoneed`. A `dup` memref argument's tangents are updated in
    place (the tangent of the memory's final contents).
    """

    name = "ad.fwddiff"

    callee = prop_def(FlatSymbolRefAttrConstr)
    activity = prop_def(ArrayAttr[StringAttr])
    ret_activity = prop_def(ArrayAttr[StringAttr])
    width = prop_def(IntegerAttr)

    args = var_operand_def()
    res = var_result_def()

    def __init__(
        self,
        callee: str | SymbolRefAttr,
        args: Sequence[SSAValue | Operation],
        activity: Sequence[str],
        ret_activity: Sequence[str],
        result_types: Sequence[Attribute],
        width: int = 1,
    ):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        props: dict[str, Attribute] = {
            "callee": callee,
            "activity": ArrayAttr([StringAttr(a) for a in activity]),
            "ret_activity": ArrayAttr([StringAttr(a) for a in ret_activity]),
            "width": IntegerAttr(width, 64),
        }
        super().__init__(operands=[args], result_types=[result_types], properties=props)

    @property
    def lanes(self) -> int:
        return self.width.value.data

    # -- syntax ------------------------------------------------------------
    # ad.fwddiff @f(%x, %dx) {activity = [dup], ret_activity = [dup], width = 2}
    #     : (f64, f64, f64) -> (f64, f64, f64)

    def print(self, printer: Printer) -> None:
        self.print_call(printer, [f"width = {self.lanes}"] if self.lanes != 1 else [])

    @classmethod
    def parse(cls, parser: Parser) -> FwddiffOp:
        callee, args, acts, rets, extras, ftype = parse_diff_call(
            parser, "ad.fwddiff", {"width": _parse_width})
        return cls(callee, args, acts, rets, ftype.outputs.data, extras.get("width", 1))

    # -- verification --------------------------------------------------------

    def verify_(self) -> None:
        if self.lanes < 1:
            raise VerifyException(f"width must be at least 1, got {self.lanes}")
        self.verify_against(self.callee_func().function_type)

    def verify_against(self, ftype: FunctionType) -> None:
        """Check activities, operands and results against the callee's type."""
        acts, rets, n = self.arg_activities, self.ret_activities, self.lanes
        check_fwd_activity_signature(ftype, acts, rets)
        expected = fwddiff_operand_types(ftype, acts, n)
        got = [a.type for a in self.args]
        if len(got) != len(expected):
            n_tangent = n * sum(a in ("dup", "dupnoneed") for a in acts)
            raise VerifyException(
                f"expected {len(expected)} operands ({len(acts)} arguments, {n_tangent} tangents"
                f"{f' (width {n})' if n != 1 else ''}), got {len(got)}; is a tangent missing?"
            )
        for k, (e, g) in enumerate(zip(expected, got)):
            if e != g:
                raise VerifyException(f"operand {k} has type {g}, expected {e}")
        want = fwddiff_result_types(ftype, rets, n)
        if list(self.result_types) != want:
            raise VerifyException(
                "results must be, per result of the callee, the primal (unless dupnoneed) then "
                f"{n} tangent(s) (dup, dupnoneed): expected ({', '.join(map(str, want))}), "
                f"got ({', '.join(map(str, self.result_types))})"
            )


def check_fwd_activity_signature(ftype: FunctionType, acts: Sequence[str], rets: Sequence[str]) -> None:
    """Forward activities fit the function: counts, known names, tangents
    only on floats and memrefs of floats. Raises VerifyException with the remedy."""
    inputs, outputs = list(ftype.inputs.data), list(ftype.outputs.data)
    for a in acts:
        if a not in FWD_ARG_ACTIVITIES:
            hint = " ('active' is reverse mode's; in forward mode a float scalar is 'dup', followed by its tangent)" \
                if a == "active" else ""
            raise VerifyException(
                f"unknown argument activity '{a}'; expected one of {', '.join(FWD_ARG_ACTIVITIES)}{hint}"
            )
    for a in rets:
        if a not in FWD_RET_ACTIVITIES:
            hint = " (in forward mode a float result with a tangent is 'dup')" if a == "active" else ""
            raise VerifyException(
                f"unknown result activity '{a}'; expected one of {', '.join(FWD_RET_ACTIVITIES)}{hint}"
            )
    if len(acts) != len(inputs):
        raise VerifyException(f"expected {len(inputs)} argument activities, got {len(acts)}")
    if len(rets) != len(outputs):
        raise VerifyException(f"expected {len(outputs)} result activities, got {len(rets)}")
    for i, (act, ty) in enumerate(zip(acts, inputs)):
        if act != "const" and not (is_float_type(ty) or is_memref_type(ty)):
            raise VerifyException(
                f"argument {i} is '{act}' but has type {ty}; "
                + (_UNSUPPORTED_FLOAT if _other_float(ty) else
                   "only float scalars and memrefs have tangents (use 'const')")
            )
    for j, (act, ty) in enumerate(zip(rets, outputs)):
        # A returned memref of floats has a tangent memref (the tangent of
        # its memory), returned beside it like a float's tangent.
        float_memref = is_memref_type(ty) and is_float_type(ty.element_type)
        if act != "const" and not (is_float_type(ty) or float_memref):
            raise VerifyException(
                f"result {j} is '{act}' but has type {ty}; "
                + (_UNSUPPORTED_FLOAT if _other_float(ty) else
                   "only float results and memrefs of floats have tangents (use 'const')")
            )


def fwddiff_operand_types(ftype: FunctionType, acts: Sequence[str], width: int) -> list[Attribute]:
    """Primal arguments, `width` tangents after each dup/dupnoneed one."""
    types: list[Attribute] = []
    for act, ty in zip(acts, ftype.inputs.data):
        types.append(ty)
        if act in ("dup", "dupnoneed"):
            types += [ty] * width
    return types


def fwddiff_result_types(ftype: FunctionType, rets: Sequence[str], width: int) -> list[Attribute]:
    """Per result: the primal unless dupnoneed, then `width` tangents if dup/dupnoneed."""
    types: list[Attribute] = []
    for act, ty in zip(rets, ftype.outputs.data):
        if act != "dupnoneed":
            types.append(ty)
        if act in ("dup", "dupnoneed"):
            types += [ty] * width
    return types


# ---------------------------------------------------------------------------
# Memory effects
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StopResource(Resource):
    """Whether the call goes on: an op that writes it may end the call with
    an error (through the error slot). Writing it keeps the op in place:
    dead-code elimination and CSE never remove or merge it."""

    def name(self) -> str:
        return "<stop>"


@dataclass(frozen=True)
class PinnedResource(Resource):
    """Written by `ad.keep` and read by nothing: the write only keeps the op."""

    def name(self) -> str:
        return "<pinned>"


STOP = StopResource()
PINNED = PinnedResource()


class MayStop(MemoryEffect):
    """The op may end the call with an error."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        return frozenset((EffectInstance(MemoryEffectKind.WRITE, resource=STOP),))


class Pinned(MemoryEffect):
    """The op writes `PINNED` (so no pass erases it)."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        return frozenset((EffectInstance(MemoryEffectKind.WRITE, resource=PINNED),))


class OnTape(MemoryEffect):
    """Effects of kinds `KINDS` on the op's `tape` operand, and on nothing
    else (no memref): the analyses that ask what an op writes see nothing."""

    KINDS: ClassVar[tuple[MemoryEffectKind, ...]] = ()

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        tape = op.tape  # type: ignore[attr-defined]
        return frozenset(EffectInstance(kind, tape) for kind in cls.KINDS)


class WritesTape(OnTape):
    KINDS = (MemoryEffectKind.WRITE,)


class ReadsWritesTape(OnTape):
    KINDS = (MemoryEffectKind.READ, MemoryEffectKind.WRITE)


class FreesTape(OnTape):
    KINDS = (MemoryEffectKind.FREE,)


# ---------------------------------------------------------------------------
# Tapes
# ---------------------------------------------------------------------------


@irdl_op_definition
class TapeCreateOp(IRDLOperation):
    """Creates a tape; with `capacity` it holds at most that many values."""

    name = "ad.tape.create"

    capacity = opt_operand_def(IndexType)
    tape = result_def(TapeType)

    traits = traits_def(MemoryAllocEffect(), MayStop())

    assembly_format = "($capacity^)? attr-dict `:` type($tape)"

    def __init__(self, element_type: Attribute, capacity: SSAValue | None = None):
        super().__init__(
            operands=[[capacity] if capacity is not None else []],
            result_types=[TapeType(element_type)],
        )


@irdl_op_definition
class TapePushOp(IRDLOperation):
    """Pushes `value` on `tape` (forward sweep)."""

    name = "ad.tape.push"

    value = operand_def()
    tape = operand_def(TapeType)

    traits = traits_def(WritesTape(), MayStop())

    assembly_format = "$value `,` $tape attr-dict `:` type($value) `,` type($tape)"

    def __init__(self, value: SSAValue, tape: SSAValue):
        super().__init__(operands=[value, tape])

    def verify_(self) -> None:
        assert isinstance(self.tape.type, TapeType)
        if self.value.type != self.tape.type.element_type:
            raise VerifyException(
                f"pushed value has type {self.value.type}, tape holds {self.tape.type.element_type}"
            )


@irdl_op_definition
class TapeReserveOp(IRDLOperation):
    """Makes room on `tape` for `count` more pushes (forward sweep): a tape
    without a capacity grows once here, so the pushes of the loop nest that
    follows (marked `ad.reserved`) need no test for room; a tape with a
    capacity already has it. `ad-build-gradients` emits it before the
    outermost loop whose nest's trip counts are known at its start."""

    name = "ad.tape.reserve"

    tape = operand_def(TapeType)
    count = operand_def(IndexType)

    traits = traits_def(WritesTape(), MayStop())

    assembly_format = "$tape `,` $count attr-dict `:` type($tape)"

    def __init__(self, tape: SSAValue, count: SSAValue):
        super().__init__(operands=[tape, count])


@irdl_op_definition
class TapePopOp(IRDLOperation):
    """Pops the last pushed value from `tape` (reverse sweep)."""

    name = "ad.tape.pop"

    tape = operand_def(TapeType)
    value = result_def()

    traits = traits_def(ReadsWritesTape())

    assembly_format = "$tape attr-dict `:` type($tape) `->` type($value)"

    def __init__(self, tape: SSAValue):
        assert isinstance(tape.type, TapeType)
        super().__init__(operands=[tape], result_types=[tape.type.element_type])

    def verify_(self) -> None:
        assert isinstance(self.tape.type, TapeType)
        if self.value.type != self.tape.type.element_type:
            raise VerifyException(
                f"popped value has type {self.value.type}, tape holds {self.tape.type.element_type}"
            )


@irdl_op_definition
class TapeFreeOp(IRDLOperation):
    """Releases the memory of `tape`."""

    name = "ad.tape.free"

    tape = operand_def(TapeType)

    traits = traits_def(FreesTape())

    assembly_format = "$tape attr-dict `:` type($tape)"

    def __init__(self, tape: SSAValue):
        super().__init__(operands=[tape])


@irdl_op_definition
class TapeExportOp(IRDLOperation):
    """Split mode: a growable tape's values as a buffer the forward half
    returns (`ad-split-sweeps`). `buffer` (the tape's memory, its size the
    tape's capacity, at least one element) holds `count` values and owns
    the memory from here on; the tape is not used after this op."""

    name = "ad.tape.export"

    tape = operand_def(TapeType)
    buffer = result_def(MemRefType)
    count = result_def(IndexType)

    traits = traits_def(ReadsWritesTape(), MayStop())

    assembly_format = "$tape attr-dict `:` type($tape) `->` type($buffer)"

    def __init__(self, tape: SSAValue):
        assert isinstance(tape.type, TapeType)
        super().__init__(operands=[tape],
                         result_types=[MemRefType(tape.type.element_type, [DYNAMIC_INDEX]), IndexType()])


@irdl_op_definition
class TapeImportOp(IRDLOperation):
    """Split mode: the tape an `ad.tape.export` handed over, rebuilt in
    the reverse half from its buffer and count (pops read it from the top).
    The buffer stays its owner: the tape is not freed with `ad.tape.free`."""

    name = "ad.tape.import"

    buffer = operand_def(MemRefType)
    count = operand_def(IndexType)
    tape = result_def(TapeType)

    # A new tape record (like ad.tape.create), over memory it reads later.
    traits = traits_def(MemoryAllocEffect())

    assembly_format = "$buffer `,` $count attr-dict `:` type($buffer) `->` type($tape)"

    def __init__(self, buffer: SSAValue, count: SSAValue):
        assert isinstance(buffer.type, MemRefType)
        super().__init__(operands=[buffer, count], result_types=[TapeType(buffer.type.element_type)])


@irdl_op_definition
class ShadowCheckOp(IRDLOperation):
    """Stops the call (an error surfaced in Python as ValueError) unless
    `shadow` has exactly the sizes of `primal`, dimension by dimension.
    Strides and offsets may differ: indices are logical."""

    name = "ad.shadow_check"

    primal = operand_def(MemRefType)
    shadow = operand_def(MemRefType)

    traits = traits_def(MayStop())

    assembly_format = "$primal `,` $shadow attr-dict `:` type($primal) `,` type($shadow)"

    def __init__(self, primal: SSAValue, shadow: SSAValue):
        super().__init__(operands=[primal, shadow])

    def verify_(self) -> None:
        p, s = self.primal.type, self.shadow.type
        assert isinstance(p, MemRefType) and isinstance(s, MemRefType)
        if len(p.get_shape()) != len(s.get_shape()):
            raise VerifyException(f"shadow type {s} has not the rank of primal type {p}")


@irdl_op_definition
class KeepOp(IRDLOperation):
    """Uses its operands, so that dead-code elimination keeps the ops that
    define them: their bounds checks are what makes other accesses safe
    without one. It writes `PINNED` (`Pinned`), so canonicalize, cse and
    dce never erase it; the LLVM lowering emits nothing for it."""

    name = "ad.keep"

    kept = var_operand_def()

    traits = traits_def(Pinned())

    assembly_format = "$kept attr-dict `:` type($kept)"

    def __init__(self, kept: Sequence[SSAValue]):
        super().__init__(operands=[list(kept)])


@irdl_op_definition
class SplitPointOp(IRDLOperation):
    """`ad.split_point`: in a gradient built for a split `ad.autodiff`, where
    the forward sweep ends and the reverse sweep begins; `ad-split-sweeps`
    cuts the function there and removes it. It writes `PINNED`, so no pass
    erases it; nothing is lowered for it (an error if one is left)."""

    name = "ad.split_point"

    traits = traits_def(Pinned())

    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


@irdl_op_definition
class BroadcastOp(IRDLOperation):
    """The size numpy's broadcasting gives two sizes `lhs`, `rhs` of one
    dimension: `rhs` if `lhs` is 1, else `lhs`; the call stops
    (ValueError, operands could not be broadcast together) when they
    differ and neither is 1. With `into`, `rhs` is the size of an array
    updated in place (`x += y`): `lhs` must be `rhs` or 1, and the result
    is `rhs`. With `equal` (`np.dot` of vectors), the sizes must be equal.
    Written by the frontend's array expressions; it moves no data. Its
    stop is an `ad.raise_if`'s (ValueError, `ERRORS[mode]` with `{0}` =
    lhs and `{1}` = rhs), raised by the lowering."""

    ERRORS: ClassVar[dict[str, str]] = {
        "broadcast": ("operands could not be broadcast together: a dimension of size {0} meets one of "
                      "size {1} (sizes must be equal, or one of them 1)"),
        "into": ("non-broadcastable operand: size {0} cannot be broadcast into the array updated in "
                 "place, of size {1} in that dimension"),
        "equal": "shapes ({0},) and ({1},) not aligned: {0} (dim 0) != {1} (dim 0)",
    }

    name = "ad.broadcast"

    lhs = operand_def(IndexType)
    rhs = operand_def(IndexType)
    size = result_def(IndexType)
    into = opt_prop_def(UnitAttr)
    equal = opt_prop_def(UnitAttr)

    traits = traits_def(MayStop())

    assembly_format = "$lhs `,` $rhs (`into` $into^)? (`equal` $equal^)? attr-dict"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, mode: str = "broadcast"):
        assert mode in ("broadcast", "into", "equal")
        super().__init__(operands=[lhs, rhs], result_types=[IndexType()],
                         properties={"into": UnitAttr() if mode == "into" else None,
                                     "equal": UnitAttr() if mode == "equal" else None})

    @property
    def mode(self) -> str:
        return "into" if self.into is not None else "equal" if self.equal is not None else "broadcast"


@irdl_op_definition
class SizeMatchOp(IRDLOperation):
    """Stops the call (ValueError, always: BLAS and the loops after it rely
    on it, `boundscheck=False` included) unless dimension `lhs_dim` of `lhs`
    has the size of dimension `rhs_dim` of `rhs`. `ad-lower-matmul` puts
    three before each matrix product; `what` names the product in the
    message."""

    name = "ad.size_match"

    lhs = operand_def(MemRefType)
    rhs = operand_def(MemRefType)
    lhs_dim = prop_def(IntegerAttr)
    rhs_dim = prop_def(IntegerAttr)
    what = prop_def(StringAttr)

    traits = traits_def(MayStop())

    assembly_format = ("$lhs `[` $lhs_dim `]` `,` $rhs `[` $rhs_dim `]` $what attr-dict "
                       "`:` type($lhs) `,` type($rhs)")

    def __init__(self, lhs: SSAValue, lhs_dim: int, rhs: SSAValue, rhs_dim: int, what: str):
        super().__init__(operands=[lhs, rhs], properties={
            "lhs_dim": IntegerAttr(lhs_dim, IndexType()), "rhs_dim": IntegerAttr(rhs_dim, IndexType()),
            "what": StringAttr(what)})


@irdl_op_definition
class OverlapsOp(IRDLOperation):
    """`ad.overlaps %a, %b`: whether the byte ranges two memrefs span
    intersect (from each one's first to its last element's byte; an empty
    memref spans none), numpy's `may_share_memory` bounds test. The
    frontend tests it before an in-place update `a += e(b)` whose target
    and source are memory the compiler cannot tell apart (two arguments,
    `f(x, x)`): the source is copied first only when it holds
    (docs/frontend.md, "In place"). Reads only the memrefs' descriptors
    (pointer, offset, sizes, strides), never their elements: pure.
    `ad-fold-overlap-checks` replaces it by `false` where the alias
    analysis proves the two disjoint (`ad.noalias` arguments)."""

    name = "ad.overlaps"

    lhs = operand_def(MemRefType)
    rhs = operand_def(MemRefType)
    result = result_def(IntegerType(1))

    traits = traits_def(Pure())

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[IntegerType(1)])


@irdl_op_definition
class SelfOverlapsOp(IRDLOperation):
    """`ad.self_overlaps %a`: whether two elements of a memref may share
    memory (a stride of 0 over a size above 1, as a writable
    `np.lib.stride_tricks.as_strided` gives; overlapping strides). False
    is exact: the dimensions of size above 1, taken innermost-first or
    outermost-first, each step by at least the span of the ones before
    (numpy's internal-overlap test with two orders instead of a sort);
    True is conservative. numpy's `y += e` reads the elements of such a
    `y` as they were before the statement: the frontend copies `y` first
    when this holds (frontend/overlap.py). Pure, like `ad.overlaps`."""

    name = "ad.self_overlaps"

    source = operand_def(MemRefType)
    result = result_def(IntegerType(1))

    traits = traits_def(Pure())

    assembly_format = "$source attr-dict `:` type($source)"

    def __init__(self, source: SSAValue):
        super().__init__(operands=[source], result_types=[IntegerType(1)])


@irdl_op_definition
class GemmOp(IRDLOperation):
    """`c += a @ b` by BLAS (`cblas_dgemm` / `cblas_sgemm` of numpy's
    OpenBLAS, adpasses.native.blas) when each operand's layout is one BLAS
    takes (unit stride in one dimension, the other no smaller than the
    rows it spans) and `c` shares no memory with `a` or `b`; `done` says
    whether it did (else nothing happened, and the caller's loop nest runs).
    The sizes must have been checked (`ad.size_match`). Made by
    `ad-lower-matmul{blas=true}` after differentiation; no derivative."""

    name = "ad.gemm"

    a = operand_def(MemRefType)
    b = operand_def(MemRefType)
    c = operand_def(MemRefType)
    done = result_def(IntegerType)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = "$a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c) `->` type($done)"

    def __init__(self, a: SSAValue, b: SSAValue, c: SSAValue):
        super().__init__(operands=[a, b, c], result_types=[IntegerType(1)])


def literal_message(text: str) -> str:
    """`text` as an `ad.raise_if` message that says exactly `text` (its
    braces doubled, so none reads as a placeholder)."""
    return text.replace("{", "{{").replace("}", "}}")


@irdl_op_definition
class RaiseIfOp(IRDLOperation):
    """Stops the call with a Python exception when `cond` is true: the
    builtin exception class named `exception`, with `message`, in which
    `{0}` and `{1}` stand for the values of the `values` operands (at most
    two) and `{0:shapeN}` for N sizes packed into value 0 (64 // N bits
    each, the first in the high bits), written as numpy writes a shape;
    `{{` and `}}` are literal braces (`literal_message`). The one op of
    every error compiled code raises: Python's `raise` and `assert`, the
    frontend's run-time errors of Python semantics (a variable read while
    unbound, a slice assignment whose shapes do not broadcast), a custom
    rule's checks, the checkpoint budget; the stop is kept with
    `boundscheck=False`."""

    name = "ad.raise_if"

    cond = operand_def(IntegerType(1))
    values = var_operand_def(IndexType)
    exception = attr_def(StringAttr)
    message = attr_def(StringAttr)

    traits = traits_def(MayStop())

    assembly_format = "$cond (`,` $values^)? attr-dict"

    def __init__(self, cond: SSAValue, exception: str, message: str, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[cond, list(values)],
                         attributes={"exception": StringAttr(exception), "message": StringAttr(message)})

    def verify_(self) -> None:
        if len(self.values) > 2:
            raise VerifyException("ad.raise_if takes at most two values for its message")


@irdl_op_definition
class ParallelForOp(IRDLOperation):
    """Runs the loop outlined into `callee` on the runtime's threads
    (made by `ad-parallelize`, docs/parallel.md). `callee(lo, hi, step,
    captured..., accumulators...) -> accumulators` runs the iterations
    `lo, lo + step, ... < hi` of the original scf.for, whose iter_args are
    sum reductions. The iterations `lb .. ub` are cut into one chunk per
    thread (fixed: thread t of T runs iterations `t*n/T .. (t+1)*n/T`);
    chunk 0 starts its accumulators from `inits`, the others from zero, and
    each result is the sum of the chunks' accumulators in chunk order (so a
    result depends on the thread count, never on timing). A stop (bounds
    check) in any chunk stops the call, reporting the first chunk's."""

    name = "ad.parallel_for"

    lb = operand_def(IndexType)
    ub = operand_def(IndexType)
    step = operand_def(IndexType)
    captured = var_operand_def()
    inits = var_operand_def()
    res = var_result_def()
    callee = prop_def(SymbolRefAttr)
    kinds = prop_def(StringAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect(), MayStop())

    def __init__(self, callee: str, lb: SSAValue, ub: SSAValue, step: SSAValue,
                 captured: Sequence[SSAValue], inits: Sequence[SSAValue], kinds: str):
        super().__init__(operands=[lb, ub, step, list(captured), list(inits)],
                         result_types=[[v.type for v in inits]],
                         properties={"callee": SymbolRefAttr(callee), "kinds": StringAttr(kinds)})

    def verify_(self) -> None:
        if [r.type for r in self.res] != [v.type for v in self.inits]:
            raise VerifyException("ad.parallel_for: one result per init, of its type")
        if len(self.kinds.data) != len(self.inits) or set(self.kinds.data) - {"s", "k"}:
            raise VerifyException("ad.parallel_for: kinds has one letter per init, s (sum) or k (kept)")


AD = Dialect(
    "ad",
    [AutodiffOp, FwddiffOp, TapeCreateOp, TapePushOp, TapeReserveOp, TapePopOp, TapeFreeOp, TapeExportOp,
     TapeImportOp, ShadowCheckOp, KeepOp,
     SizeMatchOp, OverlapsOp, SelfOverlapsOp, GemmOp, RaiseIfOp, BroadcastOp, ParallelForOp, SplitPointOp],
    [TapeType, SplitTapeType],
)

# -- attribute names with a meaning (docs/CONVENTIONS.md, "Attributes with
# meaning"): every layer names them through these constants.

NUMPY_RESULTS_ATTR = "ad.numpy_results"
"""On a public func.func: per result, the numpy scalar type Python returns
for it ("float32", "float64", "int32", "int64", "bool"; "" for a Python
number or an array); the Python entry builds those (docs/frontend.md)."""

NOALIAS_ATTR = "ad.noalias"
"""Unit argument attribute: this argument's memory overlaps no other argument's."""

NOALIAS_ATTRS = (NOALIAS_ATTR, "llvm.noalias")
"""Argument attributes that say the same (the first one present is reported)."""

UNCHECKED_ATTR = "ad.unchecked"
"""Unit attribute on memref.load/store/subview/copy: the lowering emits no
bounds check for this access (`ad-elide-shadow-checks` sets it on the
reverse sweep's accesses the IR proves in bounds; tape lowering on tape
accesses)."""

RESERVED_ATTR = "ad.reserved"
"""Unit attribute on an `ad.tape.push`: an `ad.tape.reserve` before the
loop nest around it made room for every push of the nest, so the lowering
stores without testing for room (a growable tape's push is then a store
and an increment, which LLVM vectorises with the loop)."""

PY_INDEX_ATTR = "ad.py_index"
"""Unit attribute on a memref.load/store/subview whose indices follow
Python: a negative index counts from the end, so the IR holds `i + size`
for an index `i < 0` the user wrote (the frontend sets it). A failed bounds
check of such an access reports `i`, not `i + size`
(adpasses.lowering.core.PY_INDEX_AXIS)."""

COUNTED_ATTR = "ad.counted"
"""Unit attribute on an scf.while whose forward loop counts its iterations
(`ad-count-while`, adpasses/transforms/count_while.py, a step of the reverse
pipeline before the reverse sweep; the reverse rule reads the count)."""

GRADIENT_OF_ATTR = "ad.gradient_of"
"""Dictionary on a `func.func` that the reverse pipeline is turning into a
gradient (`{primal = @f, activity = [...], ret_activity = [...]}`, plus
`with_primal`): first a copy of the primal named as the gradient will be,
then the gradient itself. The pipeline's steps act only on functions
carrying it; `ad-drop-gradient-marks` removes it
(adpasses/transforms/gradient_marks.py)."""

WORKSPACE_ATTR = "ad.workspace"
"""Unit attribute on a tape buffer's memref.alloc/dealloc: the JIT may keep
the buffer across calls (`compile_module(workspace=True)`)."""

SCRATCH_ATTR = "ad.scratch"
"""Unit attribute beside `ad.workspace` on a local array's memref.alloc/dealloc
that `ad-promote-scratch` kept in a workspace (adpasses/transforms/
promote_scratch.py): a failed allocation names an array, not a tape."""

# Tags of ad-elide-shadow-checks, on memref.load / store / subview / copy.

BOUNDS_CHECKED_OPS = (memref.LoadOp, memref.StoreOp, memref.SubviewOp, memref.CopyOp)
"""The ops whose LLVM lowering checks bounds unless they are `ad.unchecked`."""

TWIN_ID_ATTR = "ad.twin_id"
"""Integer, on a forward-sweep access (or view, or copy) of a gradient
function: the id by which reverse-sweep accesses name it as their twin."""

TWIN_OF_ATTR = "ad.twin_of"
"""Integer, on a reverse-sweep access (a shadow access or view, or a
reload): it repeats, at the same indices on memory of the same sizes, the
forward access whose `ad.twin_id` is this id. `ad-elide-shadow-checks`
drops its check only if that twin is still in the IR and checked."""

TWIN_END_ATTR = "ad.twin_end"
"""0 or 1, beside `ad.twin_id` on the two checked loads that replace a dead
load of a loop at the first and the last iteration (transforms/dead_forward):
the twin is present only if both ends are."""

OWN_SIZES_ATTR = "ad.own_sizes"
"""Unit, on a reverse-sweep access whose indices run over the accessed
memref's own sizes (zeroing a shadow, the reverse of a copy): in bounds if
the IR still shows it (`ad-elide-shadow-checks`)."""

# Custom derivative rules (docs/custom_rules.md; adpasses/core/custom_rules.py).

CUSTOM_RULE_ATTR = "ad.custom_rule"
"""Dictionary on a `func.func` (with or without a body) naming the functions
that differentiate it instead of its body, like Enzyme-MLIR's
`enzyme.custom_rule`: `augmented_primal = @f_fwd` (f's arguments -> f's
results, then residuals) with `reverse = @f_bwd` (residuals, then the
cotangent of each float result -> the cotangent of each float argument),
and/or `forward = @f_jvp` (f's arguments, then the tangent of each float
argument -> f's results, then the tangent of each float result)."""

CUSTOM_CALL_ATTR = "ad.custom_call"
"""Dictionary on a `func.call` that a differentiation step keeps as a call
of a custom rule (`ad-inline-calls` does not inline it): `primal = @f` and
the rule functions it uses; in reverse mode a call of f's augmented primal
also carries `residuals = N` (its last N results)."""

NO_MEMORY_ATTR = "ad.no_memory"
"""Unit attribute on a function declaration (no body): it reads and writes
no memory the module can address, only its scalar arguments (a C math
function; `adpasses.extern` of a signature without pointers sets it). The
write analysis then lets loads across its calls be reloaded rather than
taped (adpasses/analysis/memory_writes.py)."""

CHECKPOINT_ATTR = "ad.checkpoint"
"""Unit attribute on a `func.call` in a function being differentiated: the
call is not inlined, and the reverse sweep recomputes it instead of taping
its internals (`adpasses.checkpoint(g)`, like `jax.checkpoint`). The forward
sweep runs the callee's primal only; the reverse sweep calls the callee's
own gradient (which reruns its forward sweep, taping locally, then its
reverse), on the call's inputs: scalars made available by the cache plan,
memref contents the call or later code overwrites restored from a snapshot
(docs/cache.md, "Checkpointing")."""

REVOLVE_ATTR = "ad.revolve"
"""On a checkpointed `func.call` (with `ad.checkpoint`) that
`ad-checkpoint-loops{schedule=revolve}` makes of a time loop: a dictionary
{state = array<i64: operand indices of the arrays the steps overwrite,
snapshotted>, scratch = array<i64: those each step writes before reading>,
carried = number of trailing operands that are the loop's carried values}.
The callee runs steps [lo, hi): operands (snapshots, lo, hi, step, used
values..., carried...). Its reverse (adpasses/reverse/rules/revolve.py)
follows the binomial schedule with `snapshots` states
(adpasses/cache/revolve.py) instead of one snapshot per call. With a
byte budget the dictionary also holds `limit` (bytes)."""

CHECKPOINT_BUDGET_ATTR = "ad.checkpoint_budget"
"""On the `ad.raise_if` that `ad-checkpoint-loops` puts before a time loop
checkpointed under a byte limit with revolve as an option (the limit,
i64): it stops the gradient with a MemoryError when no schedule fits;
its values are the least bytes revolve needs and, for the automatic
choice, what sqrt segments would hold. The cache report reads the
schedule chosen from it (adpasses/cache/report.py, ScheduleChoice)."""

PYTHON_PRINT_ATTR = "ad.python_print"
"""Unit, on `printf.print_format`: a Python `print` (the frontend's): the
lowering hands the values to Python (adpasses/native/python_print.py),
which formats them as Python and numpy do and writes to sys.stdout; the
op may take memrefs (printed as numpy arrays). Without it, C printf."""

PRINT_SPECS_ATTR = "ad.print_specs"
"""A string beside `ad.python_print`: the format spec of each value
(f-string `!r`, `:.3f`), separated by `core.print_codes.SPEC_SEP`."""

PRIVATE_COPY_ATTR = "ad.private_copy"
"""Integer argument attribute on a written array argument of a gradient:
the function works on a copy of it made inside the call (the caller's array
is only read), and zero-fills the shadow argument at this index first (-1:
none), so the caller passes uninitialised memory for that shadow
(`ad-private-copies`, adpasses/transforms/private_copies.py)."""

ZERO_SHADOW_ATTR = "ad.zero_shadow"
"""Integer argument attribute on a shadow argument of a gradient that runs
parallel loops: the function zero-fills it first, on the worker pool, so
the caller passes uninitialised memory (the value: the index of its
primal argument, whose rows the fill's loop runs over) (`ad-zero-shadows`,
adpasses/transforms/private_copies.py)."""

FUSED_ATTR = "ad.fused"
"""A string on an `scf.for` that `ad-fuse-loops` made of adjacent loops:
the source locations of the loops fused into the first, for the cache
report (adpasses/transforms/fuse_loops.py)."""

PARALLEL_ATTR = "ad.parallel"
"""String attribute on an `scf.for`: its iterations may run on several
threads if `ad-parallelize` proves them independent (docs/parallel.md).
"prange": the user wrote `adpasses.prange` (the API raises if the proof
fails); "auto": `jit(parallel=True)` marked it; "vmap": the loop over a
parallel vmap's batch; ZERO_FILL_MARK: a loop zero-filling a result the
caller allocated uninitialised (a gradient's shadow, a batch of them)."""

ZERO_FILL_MARK = "zero"
"""The `ad.parallel` mark of the zero-fill loops of result shadows
(transforms/private_copies.py `zero_shadows_inside`, transforms/batch_loops.py
ZEROED): run on the pool, no serial memset before the call."""

