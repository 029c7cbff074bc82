"""The ops whose only job is to stop a call -> LLVM, through the one stop.

Every stop of generated code, whichever op makes it (a bounds check of a
`memref.load`, an allocation size, a division by zero, the ops here), is
`FunctionTranslator.stop_if(cond, site, index, code, size)`: an unlikely
branch to the cold `__adpasses_oob(site, index, code, size)`, which records
the stop in the calling thread's error slot, and an early return that frees
what the call holds. `adpasses.core.stop_codes` is the one table of codes
and the one decoder (docs/lowering.md, "Stops"). The ops here differ only
in their condition, their site text and their two values:

- `ad.raise_if %bad, %v0, %v1 {exception, message}`: code RAISED, the site
  text `raise_site_text(exception, message, location)`, the values; kept
  with `boundscheck=False` (it is the program's semantics, not a check).
- `cf.assert %ok, "msg"` (upstream MLIR): the stop of an `ad.raise_if`
  raising AssertionError with the message. Kept with `boundscheck=False`.
- `ad.broadcast %a, %b`: the stop of an `ad.raise_if` raising ValueError
  (`BroadcastOp.ERRORS[mode]`, `{0}` = a, `{1}` = b), and the size; kept
  with `boundscheck=False` (a wrong size would read past an array).
- `ad.shadow_check %x, %dx`: per dynamic dimension d, code SHADOW_AXIS - d
  when the sizes differ, the site text naming both (an error of the call's
  arguments: `argument_site_text`); nothing with `boundscheck=False`.
- `ad.size_match %x[i], %y[j]`: the same stop (ValueError naming both
  operands and the product); kept with `boundscheck=False` (BLAS and the
  loop nest after it rely on it).
"""

from __future__ import annotations

from collections.abc import Sequence

from llvmlite import ir
from xdsl.dialects import cf
from xdsl.ir import Operation, SSAValue

from adpasses.core import stop_codes
from adpasses.core.diagnostics import error_at, op_location
from adpasses.dialects.ad import BroadcastOp, RaiseIfOp, ShadowCheckOp, SizeMatchOp, literal_message
from adpasses.lowering.core import FunctionTranslator, const_i64


def raise_stop(ft: FunctionTranslator, op: Operation, bad: ir.Value, exception: str, message: str,
               values: Sequence[ir.Value] = (), where: str | None = None) -> None:
    """Stop the call when `bad` holds, raising `exception` with `message`
    (`{0}`, `{1}`: `values`) at `where` (default: the op's location)."""
    where = where if where is not None else op_location(op)
    site = ft.mt.check_site(op, stop_codes.raise_site_text(exception, message, where))
    padded = list(values) + [const_i64(0)] * (2 - len(values))
    ft.stop_if(bad, site, padded[0], stop_codes.RAISED, padded[1])


def _raise_if(ft: FunctionTranslator, op: RaiseIfOp) -> None:
    raise_stop(ft, op, ft.get(op.cond), op.exception.data, op.message.data, [ft.get(v) for v in op.values])


def _assert(ft: FunctionTranslator, op: cf.AssertOp) -> None:
    if "ad.raises" in op.attributes:
        raise error_at(op, "cf.assert with ad.raises: raise a Python exception with "
                           "`ad.raise_if %bad {exception = \"ValueError\", message = \"...\"}` "
                           "(%bad: the negated condition)")
    raise_stop(ft, op, ft.b.not_(ft.get(op.arg)), "AssertionError", literal_message(op.msg.data),
               where=op_location(op) or op.name)


def _broadcast(ft: FunctionTranslator, op: BroadcastOp) -> None:
    """numpy's broadcast of two sizes (dialects/ad.py, BroadcastOp): the
    size, or the stop when they do not broadcast."""
    b = ft.b
    a, c = ft.get(op.lhs), ft.get(op.rhs)
    one = const_i64(1)
    differ = b.icmp_signed("!=", a, c)
    a_is_one = b.icmp_signed("==", a, one)
    mode = op.mode
    if mode == "equal":
        bad, size = differ, a
    elif mode == "into":
        bad, size = b.and_(differ, b.not_(a_is_one)), c
    else:
        bad = b.and_(b.and_(differ, b.not_(a_is_one)), b.icmp_signed("!=", c, one))
        size = b.select(a_is_one, c, a)
    raise_stop(ft, op, bad, "ValueError", BroadcastOp.ERRORS[mode], [a, c], where=op_location(op) or op.name)
    ft.set(op.size, size)


def _operand_name(ft: FunctionTranslator, v: SSAValue, unnamed: str) -> str:
    args = list(ft.func.body.blocks[0].args)
    text = f"%{v.name_hint}" if v.name_hint else unnamed
    return text + (f" (argument {args.index(v)})" if v in args else "")


def _sizes_stop(ft: FunctionTranslator, op: Operation, message: str,
                pairs: Sequence[tuple[int, ir.Value, ir.Value]]) -> None:
    """Stop (code SHADOW_AXIS - d, values: first size, second size) for the
    first pair (d, x, y) of sizes that differ; one site for the op."""
    if not pairs:
        return
    site = ft.mt.check_site(op, stop_codes.argument_site_text(message, ft.func.sym_name.data, op_location(op)))
    for d, x, y in pairs:
        ft.stop_if(ft.b.icmp_unsigned("!=", x, y), site, x, stop_codes.SHADOW_AXIS - d, y)


def _shadow_check(ft: FunctionTranslator, op: ShadowCheckOp) -> None:
    """One compare per dimension whose sizes are not statically equal, at
    function entry; nothing without bounds checks."""
    if not ft.mt.boundscheck:
        return
    primal, shadow = ft.get(op.primal), ft.get(op.shadow)
    pairs = [(d, s, p) for d, (p, s) in enumerate(zip(primal.sizes, shadow.sizes))
             if not (isinstance(p, ir.Constant) and isinstance(s, ir.Constant) and p.constant == s.constant)]
    message = (f"shadow {_operand_name(ft, op.shadow, 'value')} has size {{index}} in dimension {{dim}}, but "
               f"its primal {_operand_name(ft, op.primal, 'value')} has size {{size}}: a shadow must have "
               f"exactly its primal's shape")
    _sizes_stop(ft, op, message, pairs)


def _size_match(ft: FunctionTranslator, op: SizeMatchOp) -> None:
    i, j = op.lhs_dim.value.data, op.rhs_dim.value.data
    x, y = ft.get(op.lhs).sizes[i], ft.get(op.rhs).sizes[j]
    if isinstance(x, ir.Constant) and isinstance(y, ir.Constant) and x.constant == y.constant:
        return
    message = (f"{op.what.data}: dimension {i} of {_operand_name(ft, op.lhs, 'an operand')} has size "
               f"{{index}}, but dimension {j} of {_operand_name(ft, op.rhs, 'an operand')} has size "
               f"{{size}}; they must be equal")
    _sizes_stop(ft, op, message, [(0, x, y)])


LOWERINGS = {
    RaiseIfOp: _raise_if,
    cf.AssertOp: _assert,
    BroadcastOp: _broadcast,
    ShadowCheckOp: _shadow_check,
    SizeMatchOp: _size_match,
}
