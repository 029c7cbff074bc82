"""The mark of a function the reverse pipeline is working on, and
`ad-drop-gradient-marks`, the step that removes it.

The reverse pipeline (adpasses/transforms/reverse_pipeline.py) is a list of
module passes; what one step hands the next is in the IR. `ad-clone-primals`
copies each primal that an `ad.autodiff` asks for, names the copy as its
gradient will be, and marks it with `ad.gradient_of` (the request: primal,
activities, with_primal, width, strong_zero). The following steps act only on marked functions,
so the user's functions stay as written: inlining, affine lowering and
while-counting change the copy, `ad-build-gradients` replaces the copy by
the gradient (still marked), and the cleanup steps work on the gradient.
`ad-drop-gradient-marks` ends the pipeline's work on a gradient: from then
on it is a plain function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, SymbolRefAttr, UnitAttr
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from adpasses.dialects.ad import GRADIENT_OF_ATTR, AutodiffOp

ACTIVITY_CODES = {"const": "c", "active": "a", "dup": "d", "dupnoneed": "n"}


@dataclass(frozen=True)
class GradientRequest:
    """One gradient to generate: what an `ad.autodiff` (or `differentiate`)
    asks for. Requests that are equal share one gradient function."""

    primal: str
    activity: tuple[str, ...]
    ret_activity: tuple[str, ...]
    with_primal: bool
    width: int = 1
    """Cotangents per sweep (vector reverse mode): `width` shadows per dup
    argument, seeds per active result and derivatives per active argument."""
    strong_zero: bool = False
    """Adjoints of a zero seed are zero even where a partial derivative is
    inf or nan (Enzyme's `strong_zero`; `ops/partials.emit_adjoints`)."""
    primal_results: tuple[int, ...] | None = None
    """With `with_primal`: the results whose primal the gradient returns
    (`with_primal = [0, 2]`); None: all of them."""
    split: bool = False
    """Split mode: the gradient is built whole (with the primal results),
    then `ad-split-sweeps` cuts it into an augmented primal that returns a
    tape and a reverse function that takes it (`split = forward|reverse`)."""

    @staticmethod
    def of_autodiff(op: AutodiffOp) -> GradientRequest:
        split = op.split is not None
        choice = op.primal_choice
        if split:
            # Both halves ask for one gradient, built with every primal result;
            # a forward half's with_primal = [...] picks from its call's results.
            choice = True
        elif choice == ():
            choice = False
        elif not isinstance(choice, bool) and len(choice) == len(op.ret_activities):
            choice = True  # every result: the same request as the bare flag
        # Both halves of a split request ask for one gradient, built with the
        # primal results (the forward half returns them).
        return GradientRequest(op.callee.root_reference.data, tuple(op.arg_activities),
                               tuple(op.ret_activities), choice is not False or split, op.lanes,
                               op.strong_zero is not None,
                               None if isinstance(choice, bool) else choice, split)

    @staticmethod
    def of_function(function: func.FuncOp) -> GradientRequest | None:
        """The request a marked function carries; None if it is unmarked."""
        attr = function.attributes.get(GRADIENT_OF_ATTR)
        if not isinstance(attr, DictionaryAttr):
            return None
        d = attr.data
        primal = d["primal"]
        assert isinstance(primal, SymbolRefAttr)
        acts, rets = d["activity"], d["ret_activity"]
        assert isinstance(acts, ArrayAttr) and isinstance(rets, ArrayAttr)
        width = d.get("width")
        chosen = d.get("primal_results")
        return GradientRequest(primal.root_reference.data,
                               tuple(a.data for a in acts.data),  # type: ignore[attr-defined]
                               tuple(a.data for a in rets.data),  # type: ignore[attr-defined]
                               "with_primal" in d,
                               width.value.data if isinstance(width, IntegerAttr) else 1,
                               "strong_zero" in d,
                               tuple(a.value.data for a in chosen.data)  # type: ignore[attr-defined]
                               if isinstance(chosen, ArrayAttr) else None,
                               "split" in d)

    def mark(self) -> DictionaryAttr:
        entries = {
            "primal": SymbolRefAttr(self.primal),
            "activity": ArrayAttr([StringAttr(a) for a in self.activity]),
            "ret_activity": ArrayAttr([StringAttr(a) for a in self.ret_activity]),
        }
        if self.with_primal:
            entries["with_primal"] = UnitAttr()
        if self.primal_results is not None:
            entries["primal_results"] = ArrayAttr([IntegerAttr(k, 64) for k in self.primal_results])
        if self.width != 1:
            entries["width"] = IntegerAttr(self.width, 64)
        if self.strong_zero:
            entries["strong_zero"] = UnitAttr()
        if self.split:
            entries["split"] = UnitAttr()
        return DictionaryAttr(entries)

    @property
    def primal_choice(self) -> bool | tuple[int, ...]:
        """What the gradient returns of the primal: nothing (False), every
        result (True), or the results listed."""
        if not self.with_primal:
            return False
        return True if self.primal_results is None else self.primal_results

    def gradient_name(self, module: ModuleOp) -> str:
        """`f_grad_<argument codes>_<result codes>[_p[i_j...]][_w<N>][_z][_s]`, made unique in `module`
        (`_p0_2`: the primal of results 0 and 2; `_z`: strong zero; `_s`: split, whose halves `ad-split-sweeps` names
        `<name>_aug` and `<name>_rev`)."""
        base = (f"{self.primal}_grad_{_codes(self.activity)}_{_codes(self.ret_activity)}"
                f"{'_p' if self.with_primal and not self.split else ''}"
                f"{''.join(f'{k}_' for k in self.primal_results or ())[:-1]}"
                f"{f'_w{self.width}' if self.width != 1 else ''}"
                f"{'_z' if self.strong_zero else ''}{'_s' if self.split else ''}")
        name, k = base, 1
        while any(SymbolTable.lookup_symbol(module, n) is not None
                  for n in ((name, f"{name}_aug", f"{name}_rev") if self.split else (name,))):
            name, k = f"{base}_{k}", k + 1
        return name


def _codes(activities: Sequence[str]) -> str:
    return "".join(ACTIVITY_CODES[a] for a in activities)


def marked_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The functions the reverse pipeline is working on, in module order."""
    return [op for op in module.ops
            if isinstance(op, func.FuncOp) and GRADIENT_OF_ATTR in op.attributes and op.body.blocks]


@dataclass(frozen=True)
class DropGradientMarksPass(ModulePass):
    """`ad-drop-gradient-marks`: the last step of `ad-reverse`; every
    generated gradient becomes a plain function."""

    name = "ad-drop-gradient-marks"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in marked_functions(op):
            del function.attributes[GRADIENT_OF_ATTR]
