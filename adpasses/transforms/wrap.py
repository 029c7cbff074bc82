"""`ad-wrap`: ask for a derivative without writing the op (issue 20).

Like Enzyme-MLIR's `--enzyme-wrap`: for a function `@fn` of the module,
add a function `@name` whose body is one `ad.autodiff` (mode `reverse`) or
`ad.fwddiff` (mode `forward`) of `@fn` with the given activities, taking
the operands and returning the results that op takes and gives
(docs/dialect.md). `ad-reverse` / `ad-forward` then differentiate it like
any request written by hand.

    ad-opt --reverse-wrap="fn=f activities=dup,active" in.mlir
    ad-opt -p 'ad-wrap{fn=f activities="dup,active" rets=active name=df},ad-reverse'

Options: `fn` (required), `mode` (`reverse` | `forward`), `activities` and
`rets` (comma-separated; default: memrefs `dup`, floats `active`, the rest
`const`, as `ad-print-activity` assumes; in forward mode floats are `dup`),
`name` (default `<fn>_reverse` / `<fn>_forward`), `with-primal` (reverse:
return the primal results too), `width` (forward: tangents per sweep),
`split` (reverse: two functions, `<name>_aug` and `<name>_rev` (default
`<fn>_aug`, `<fn>_rev`), the halves of a split `ad.autodiff`; their tape is
an `!ad.split_tape` until `ad-split-sweeps` spells out its values).

If the module declares `@name` (`func.func private @df(...)`, so that other
functions can call it), the declaration becomes the definition; its type
must be the derivative's.

Argument names: the callee's, `d<name>` for shadows and tangents, `d_ret<j>`
for result seeds.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Attribute, Block, Region
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from adpasses.core.diagnostics import CompileError
from adpasses.core.types import is_float_type, is_memref_type
from adpasses.dialects.ad import (
    AutodiffOp,
    FwddiffOp,
    autodiff_operand_types,
    autodiff_result_types,
    check_activity_signature,
    check_fwd_activity_signature,
    split_types,
    fwddiff_operand_types,
    fwddiff_result_types,
)

MODES = ("reverse", "forward")


def _split(spec: str) -> list[str]:
    return [a.strip() for a in spec.split(",") if a.strip()]


def _defaults(ftype: FunctionType, mode: str) -> tuple[list[str], list[str]]:
    float_arg = "active" if mode == "reverse" else "dup"
    args = ["dup" if is_memref_type(t) else float_arg if is_float_type(t) else "const"
            for t in ftype.inputs.data]
    float_ret = "active" if mode == "reverse" else "dup"
    rets = [float_ret if is_float_type(t) else "const" for t in ftype.outputs.data]
    return args, rets


@dataclass(frozen=True)
class WrapPass(ModulePass):
    name = "ad-wrap"

    fn: str = ""
    mode: str = "reverse"
    activities: str = ""
    rets: str = ""
    wrapper: str = ""
    with_primal: bool = False
    width: int = 1
    strong_zero: bool = False
    split: bool = False
    """Reverse mode in two functions: `<name>_aug` (the primal arguments ->
    the primal results and an `!ad.split_tape`) and `<name>_rev` (shadows,
    seeds and the tape -> derivatives); `ad-split-sweeps` gives them the
    tape's values in their signatures."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        what = f"ad-wrap{{fn={self.fn}}}"
        if self.mode not in MODES:
            raise CompileError(f"{what}: unknown mode '{self.mode}'; expected reverse or forward")
        fn = self.fn.lstrip("@")
        callee = next((f for f in op.ops if isinstance(f, func.FuncOp) and f.sym_name.data == fn), None)
        if callee is None:
            names = ", ".join("@" + f.sym_name.data for f in op.ops if isinstance(f, func.FuncOp))
            raise CompileError(f"{what}: the module has no function @{fn or '?'} (it has: {names or 'none'}); "
                               "name one of its functions with fn=NAME")
        ftype = callee.function_type
        default_args, default_rets = _defaults(ftype, self.mode)
        acts = _split(self.activities) if self.activities else default_args
        rets = _split(self.rets) if self.rets else default_rets
        if self.width < 1 or (self.width != 1 and self.mode == "reverse"):
            raise CompileError(f"{what}: width={self.width}: width is an option of forward mode (at least 1); reverse mode takes one cotangent per sweep")
        if self.with_primal and self.mode == "forward":
            raise CompileError(f"{what}: with-primal is a reverse-mode option (forward mode returns "
                               "the primal results of 'dup' and 'const' results already)")
        if self.split and (self.mode == "forward" or self.with_primal):
            raise CompileError(f"{what}: split is a reverse-mode option without with-primal (the "
                               "forward half returns the primal results)")
        if self.strong_zero and self.mode == "forward":
            raise CompileError(f"{what}: strong-zero is a reverse-mode option (it decides what a "
                               "zero seed gives through an inf or nan partial)")
        try:
            if self.mode == "reverse":
                check_activity_signature(ftype, acts, rets)
                ins = autodiff_operand_types(ftype, acts, rets)
                outs = autodiff_result_types(ftype, acts, self.with_primal)
            else:
                check_fwd_activity_signature(ftype, acts, rets)
                ins = fwddiff_operand_types(ftype, acts, self.width)
                outs = fwddiff_result_types(ftype, rets, self.width)
        except VerifyException as err:
            raise CompileError(f"{what}: {err}", op=callee) from None
        if self.split:
            self._wrap_split(op, callee, acts, rets, what)
            return
        name = (self.wrapper or f"{fn}_{self.mode}").lstrip("@")
        names = self._arg_names(callee, acts, rets)
        if self.mode == "reverse":
            def build(args):  # type: ignore[no-untyped-def]
                return AutodiffOp(fn, args, acts, rets, outs, with_primal=self.with_primal,
                                  strong_zero=self.strong_zero)
        else:
            def build(args):  # type: ignore[no-untyped-def]
                return FwddiffOp(fn, args, acts, rets, outs, width=self.width)
        self._define(op, callee, name, ins, outs, names, build, what)

    def _wrap_split(self, op: ModuleOp, callee: func.FuncOp, acts: list[str], rets: list[str],
                    what: str) -> None:
        fn = callee.sym_name.data
        ftype = callee.function_type
        base = (self.wrapper or fn).lstrip("@")
        names = self._arg_names(callee, acts, rets)
        primal_names = [names[k] for k in self._primal_positions(acts)]
        other_names = [n for k, n in enumerate(names) if k not in set(self._primal_positions(acts))]
        # Inserted after the callee each: the reverse half first, so the forward half comes first.
        for mode, name, arg_names in (("reverse", f"{base}_rev", other_names + ["tape"]),
                                      ("forward", f"{base}_aug", primal_names)):
            ins, outs = split_types(ftype, acts, rets, mode)

            def build(args, mode=mode, outs=outs):  # type: ignore[no-untyped-def]
                return AutodiffOp(fn, args, acts, rets, outs, strong_zero=self.strong_zero, split=mode)

            self._define(op, callee, name, ins, outs, arg_names, build, what)

    @staticmethod
    def _primal_positions(acts: list[str]) -> list[int]:
        """Where the primal arguments are among the operands of ad.autodiff."""
        positions, k = [], 0
        for act in acts:
            positions.append(k)
            k += 2 if act in ("dup", "dupnoneed") else 1
        return positions

    def _define(self, op: ModuleOp, callee: func.FuncOp, name: str, ins: list, outs: list,  # type: ignore[type-arg]
                names: list, build, what: str) -> None:  # type: ignore[no-untyped-def, type-arg]
        """Add `@name(ins) -> outs` whose body is `build(arguments)` and its
        return, in place of a declaration of that name if there is one."""
        ftype_out = FunctionType.from_lists(ins, outs)
        existing = next((f for f in op.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name), None)
        if existing is not None and not existing.is_declaration:
            raise CompileError(f"{what}: the module already defines a function @{name}; choose another "
                               "name with name=NAME", op=existing)
        if existing is not None and existing.function_type != ftype_out:
            raise CompileError(f"{what}: @{name} is declared as {existing.function_type}, but the "
                               f"derivative it names has type {ftype_out}; declare it with that type",
                               op=existing)
        block = Block(arg_types=ins)
        for arg, hint in zip(block.args, names):
            arg.name_hint = hint
        call = build(block.args)
        block.add_ops([call, func.ReturnOp(*call.results)])
        wrapper = func.FuncOp(name, ftype_out, Region(block))
        if existing is not None:
            # A declaration (so that other functions can call the wrapper
            # before this pass runs) becomes the definition, where it was.
            op.body.block.insert_op_after(wrapper, existing)
            existing.detach()
            existing.erase()
        else:
            op.body.block.insert_op_after(wrapper, callee)

    def _arg_names(self, callee: func.FuncOp, acts: list[str], rets: list[str]) -> list[str | None]:
        lanes = 1 if self.mode == "reverse" else self.width
        names: list[str | None] = []
        for k, (act, arg) in enumerate(zip(acts, callee.body.block.args)):
            base = arg.name_hint or f"arg{k}"
            names.append(base)
            if act in ("dup", "dupnoneed"):
                names += [f"d{base}"] if lanes == 1 else [f"d{base}{chr(97 + lane % 26)}" for lane in range(lanes)]
        if self.mode == "reverse":
            names += [f"d_ret{j}" for j, act in enumerate(rets) if act in ("active", "dup")]
        return names


def parse_wrap_spec(spec: str, mode: str) -> WrapPass:
    """`fn=f activities=dup,active rets=active wrapper=df with-primal strong-zero width=2`
    (the value of `ad-opt --reverse-wrap=` / `--forward-wrap=`)."""
    fields: dict[str, object] = {"mode": mode}
    known = {"fn", "activities", "rets", "name", "with-primal", "strong-zero", "width", "split"}
    for item in spec.split():
        key, _, value = item.partition("=")
        if key not in known:
            raise CompileError(f"--{mode}-wrap: unknown field '{key}' in '{spec}'; "
                               f"expected {', '.join(sorted(known))}")
        if key in ("with-primal", "strong-zero", "split"):
            fields[key.replace("-", "_")] = value in ("", "true", "1")
        elif key == "width":
            if not value.isdigit():
                raise CompileError(f"--{mode}-wrap: width={value}: expected a positive integer")
            fields["width"] = int(value)
        else:
            fields["wrapper" if key == "name" else key] = value
    if not fields.get("fn"):
        raise CompileError(f"--{mode}-wrap: '{spec}' names no function; write fn=NAME")
    return WrapPass(**fields)  # type: ignore[arg-type]
