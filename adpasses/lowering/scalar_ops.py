"""The LLVM lowering of the op table's scalar ops (`adpasses/ops/`): each
entry says how (`llvm=`): one instruction, an intrinsic, a libm call, a
float cast, or a function of this package's `CUSTOM` tables
(`lowering/arith.py`, `lowering/math.py`,
`lowering/special.py`) for what is more than one."""

from __future__ import annotations

from xdsl.ir import Operation

from adpasses.lowering import arith, math, special
from adpasses.lowering.core import FunctionTranslator, Translation, scalar_type
from adpasses.ops import OP_TABLE
from adpasses.ops.entry import Cast, Custom, Instruction, Intrinsic, Libm, Lowering, ScalarOp


def _instruction(method: str) -> Translation:
    def lower(ft: FunctionTranslator, op: Operation) -> None:
        args = [ft.get(o) for o in op.operands]
        ft.set(op.results[0], getattr(ft.b, method)(*args, flags=ft.mt.fastmath))

    return lower


def _intrinsic(name: str) -> Translation:
    def lower(ft: FunctionTranslator, op: Operation) -> None:
        args = [ft.get(o) for o in op.operands]
        fn = ft.mt.intrinsic(name, args[0].type, len(args))
        ft.set(op.results[0], ft.b.call(fn, args, fastmath=ft.mt.fastmath))

    return lower


def _cast(method: str) -> Translation:
    def lower(ft: FunctionTranslator, op: Operation) -> None:
        ft.set(op.results[0], getattr(ft.b, method)(ft.get(op.operands[0]), scalar_type(op.results[0].type)))

    return lower


CUSTOM: dict[type[Operation], Translation] = {**arith.CUSTOM, **math.CUSTOM, **special.CUSTOM}


def translation(entry: ScalarOp) -> Translation:
    how: Lowering = entry.llvm
    if isinstance(how, Instruction):
        return _instruction(how.method)
    if isinstance(how, Intrinsic):
        return _intrinsic(how.name)
    if isinstance(how, Libm):
        return math.libm(how.name)
    if isinstance(how, Cast):
        return _cast(how.method)
    assert isinstance(how, Custom)
    custom = CUSTOM.get(entry.op)
    if custom is None:
        raise LookupError(f"{entry.op.name}: its entry says llvm=Custom() but no CUSTOM table of "
                          "adpasses/lowering/ has a function for it")
    return custom


LOWERINGS: dict[type[Operation], Translation] = {cls: translation(e) for cls, e in OP_TABLE.items()}
