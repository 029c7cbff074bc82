"""Memory effects of the `ad` ops (xDSL traits) and of upstream ops that
declare none (`adpasses.core.effects.effects_of`), and what the analyses
make of them."""

from __future__ import annotations

from xdsl.dialects import arith, func, printf
from xdsl.dialects.builtin import Float64Type, IndexType, MemRefType
from xdsl.ir import Block, Operation
from xdsl.traits import EffectInstance, MemoryEffect, MemoryEffectKind, get_effects

from adpasses.analysis.memory_writes import Extent, WriteEffects
from adpasses.core.effects import OUTPUT, EffectCache, effects_of, is_pure, only_prints
from adpasses.dialects.ad import (
    AD,
    PINNED,
    STOP,
    AutodiffOp,
    FwddiffOp,
    KeepOp,
    ShadowCheckOp,
    TapeCreateOp,
    TapeFreeOp,
    TapePopOp,
    TapePushOp,
)

F64 = Float64Type()
MEMREF = MemRefType(F64, [4])

UNKNOWN_BY_DESIGN = {AutodiffOp, FwddiffOp}
"""`ad` ops without an effect trait: ad.autodiff and ad.fwddiff have their
callee's effects (like func.call), and are replaced by calls before any
pass that reads effects."""


def _ops() -> dict[type[Operation], Operation]:
    block = Block(arg_types=[F64, MEMREF, MEMREF, IndexType()])
    x, m, dm, n = block.args
    create = TapeCreateOp(F64, n)
    tape = create.tape
    ops = [create, TapePushOp(x, tape), TapePopOp(tape), TapeFreeOp(tape), ShadowCheckOp(m, dm),
           KeepOp([x, m])]
    for op in ops:
        block.add_op(op)
    return {type(op): op for op in ops}


def test_every_ad_op_declares_its_effects() -> None:
    undeclared = {cls for cls in AD.operations if not cls.get_traits_of_type(MemoryEffect)}  # type: ignore[attr-defined]
    assert undeclared == UNKNOWN_BY_DESIGN, (
        "give the new ad op a memory-effect trait (dialects/ad.py) or say why not")


def test_effects_of_each_ad_op() -> None:
    ops = _ops()
    W, R, A, F = (MemoryEffectKind.WRITE, MemoryEffectKind.READ, MemoryEffectKind.ALLOC,
                  MemoryEffectKind.FREE)
    tape = ops[TapeCreateOp].tape  # type: ignore[attr-defined]
    stop = EffectInstance(W, resource=STOP)
    assert get_effects(ops[TapeCreateOp]) == {EffectInstance(A), stop}
    assert get_effects(ops[TapePushOp]) == {EffectInstance(W, tape), stop}
    assert get_effects(ops[TapePopOp]) == {EffectInstance(R, tape), EffectInstance(W, tape)}
    assert get_effects(ops[TapeFreeOp]) == {EffectInstance(F, tape)}
    assert get_effects(ops[ShadowCheckOp]) == {stop}
    assert get_effects(ops[KeepOp]) == {EffectInstance(W, resource=PINNED)}


def test_no_ad_op_is_erased_or_merged_as_dead_code() -> None:
    """As when they declared nothing (unknown effects): every ad op stays
    through dead-code elimination, even with unused results."""
    cache = EffectCache()
    for op in _ops().values():
        assert not cache.would_be_trivially_dead(op), op.name


def test_ad_ops_write_no_memref() -> None:
    """The alias analysis sees no memref write in tape ops, shadow checks or
    keeps (their effects name a tape or a resource that is not memory)."""
    effects = WriteEffects(None)
    for op in _ops().values():
        assert effects.targets(op) == [], op.name


def test_upstream_ops_without_traits() -> None:
    block = Block(arg_types=[IndexType(), IndexType(), F64])
    i, j, x = block.args
    remui = arith.RemUIOp(i, j)
    extsi = arith.ExtSIOp(arith.IndexCastOp(i, arith.IntegerType(32)).result, arith.IntegerType(64))
    prints = printf.PrintFormatOp("{}", x)
    assert get_effects(remui) is None and get_effects(prints) is None  # xDSL 0.74 declares none
    assert effects_of(remui) == frozenset() and is_pure(remui) and is_pure(extsi)
    assert effects_of(prints) == {EffectInstance(MemoryEffectKind.WRITE, resource=OUTPUT)}
    assert only_prints(prints) and not is_pure(prints) and not only_prints(remui)
    assert WriteEffects(None).targets(prints) == []


def test_unknown_effects_still_write_everything() -> None:
    """A call to a function the module does not have: its memref operands
    and anything reachable from outside."""
    block = Block(arg_types=[MEMREF])
    call = func.CallOp("ext", [block.args[0]], [])
    block.add_op(call)
    assert effects_of(call) is None
    targets = WriteEffects(None).targets(call)
    assert [t.extent for t in targets] == [Extent.OBJECT, Extent.OUTSIDE]
