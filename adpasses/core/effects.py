"""Memory effects of ops, computed once per op.

xDSL's `get_effects` on an op with regions (`RecursiveMemoryEffect`:
scf.for, scf.if, ...) walks everything nested in it, and its dead-code
helpers ask it for every op: on a nest of d loops that is O(d^2) per query
and O(d^3) per dead-code pass (300 nested loops took minutes). `EffectCache`
answers the same questions from a memo filled bottom-up, so each op's
effects are computed once while the IR does not change; make a new cache
after changing the IR. `region_dce` is xDSL's dead-code elimination with
such a cache, `cse` xDSL's common subexpression elimination.

`effects_of(op)` is `get_effects` with the effects of the upstream ops that
declare none in xDSL 0.74 (`UNDECLARED_EFFECTS`), for the analyses that ask
what an op touches (activity, alias, cache planning). Effects our own ops
declare name what they touch: an effect with a `value` touches that value's
memory only (`ad.tape.*` on their tape), one on a resource other than the
default touches no memref (`OUTPUT`: printing; `dialects.ad.STOP`: ending
the call with an error). Dead-code elimination and CSE keep xDSL's view
(no trait: unknown effects), so they transform exactly as xDSL's own.
"""

from __future__ import annotations

from collections.abc import Set

from dataclasses import dataclass

from xdsl.dialects import arith, cf, memref, printf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.traits import (
    DefaultResource,
    EffectInstance,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    RecursiveMemoryEffect,
    Resource,
    SymbolOpInterface,
    get_effects,
)
from xdsl.transforms.common_subexpression_elimination import CSEDriver
from xdsl.transforms.dead_code_elimination import LiveSet

from adpasses.core.structured_ops import structured_op
from adpasses.dialects.ad import STOP, UNCHECKED_ATTR


@dataclass(frozen=True)
class OutputResource(Resource):
    """The program's output stream (printing): no memref is in it."""

    def name(self) -> str:
        return "<output>"


OUTPUT = OutputResource()

_PRINTS = frozenset((EffectInstance(MemoryEffectKind.WRITE, resource=OUTPUT),))
_STOPS = frozenset((EffectInstance(MemoryEffectKind.WRITE, resource=STOP),))

UNDECLARED_EFFECTS: dict[type[Operation], frozenset[EffectInstance]] = {
    # Pure, but without an effect trait in xDSL 0.74.
    arith.RemUIOp: frozenset(),
    arith.ExtSIOp: frozenset(),
    # Printing writes the output, never memory.
    **{cls: _PRINTS for cls in printf.Printf.operations},
    # A failed assertion ends the call with an error (a Python raise/assert).
    cf.AssertOp: _STOPS,
}
"""Effects of upstream ops that declare none (for which `get_effects`
answers None, "unknown"), as the analyses should see them."""


def effects_of(op: Operation) -> frozenset[EffectInstance] | set[EffectInstance] | None:
    """`xdsl.traits.get_effects(op)`, or the effects `UNDECLARED_EFFECTS`
    gives an upstream op without a trait (None: unknown effects)."""
    structured = structured_op(op)
    if structured is not None:
        # linalg.matmul on memrefs declares nothing in xDSL 0.74.
        return frozenset({*(EffectInstance(MemoryEffectKind.READ, v) for v in structured.reads(op)),
                          *(EffectInstance(MemoryEffectKind.WRITE, v) for v in structured.writes(op))})
    declared = UNDECLARED_EFFECTS.get(type(op))
    if declared is _PRINTS and any(isinstance(v.type, MemRefType) for v in op.operands):
        # Printing an array (the frontend's print) also reads it.
        return declared | {EffectInstance(MemoryEffectKind.READ, v) for v in op.operands
                           if isinstance(v.type, MemRefType)}
    return declared if declared is not None else get_effects(op)  # type: ignore[return-value]


def is_pure(op: Operation) -> bool:
    """An op without regions that has no effects at all (`effects_of`)."""
    effects = effects_of(op)
    return effects is not None and not effects


def only_prints(op: Operation) -> bool:
    """Its only effects are on the output (printf.*), and reads of the
    arrays it prints."""
    effects = effects_of(op)
    return bool(effects) and any(e.resource is OUTPUT for e in effects) and all(  # type: ignore[union-attr]
        e.resource is OUTPUT or e.kind is MemoryEffectKind.READ for e in effects)  # type: ignore[union-attr]


def touches_memory(effect: EffectInstance) -> bool:
    """Whether `effect` may touch memref memory: it is on the default
    resource (the memory) and names no value, or names a memref."""
    if not isinstance(effect.resource, DefaultResource):
        return False
    value = effect.value
    return not isinstance(value, SSAValue) or isinstance(value.type, MemRefType)


class EffectCache:
    def __init__(self) -> None:
        self._effects: dict[Operation, Set[EffectInstance] | None] = {}

    def effects(self, op: Operation) -> Set[EffectInstance] | None:
        """`xdsl.traits.get_effects(op)`, memoised (None: unknown effects)."""
        known = self._effects.get(op, False)
        if known is not False:
            return known  # type: ignore[return-value]
        traits = op.get_traits_of_type(MemoryEffect)
        result: set[EffectInstance] | None = set() if traits else None
        for trait in traits:
            if result is None:
                break
            if isinstance(trait, RecursiveMemoryEffect):
                for region in op.regions:
                    for block in region.blocks:
                        for inner in block.ops:
                            inner_effects = self.effects(inner)
                            if inner_effects is None:
                                result = None
                                break
                            result.update(inner_effects)
                        if result is None:
                            break
                    if result is None:
                        break
            else:
                own = trait.get_effects(op)
                if own is None:
                    result = None
                else:
                    result.update(own)
        self._effects[op] = result
        return result

    def result_only_effects(self, op: Operation) -> bool:
        """xDSL's `result_only_effects`: no effect beyond the results."""
        effects = self.effects(op)
        return effects is not None and all(
            e.kind == MemoryEffectKind.READ
            or (e.kind == MemoryEffectKind.ALLOC and isinstance(v := e.value, SSAValue)
                and op.is_ancestor(v.owner))  # type: ignore[arg-type]
            for e in effects
        )

    def would_be_trivially_dead(self, op: Operation) -> bool:
        """xDSL's `would_be_trivially_dead`: dead once its results are unused."""
        return (not op.has_trait(IsTerminator, value_if_unregistered=False)
                and not op.has_trait(SymbolOpInterface, value_if_unregistered=False)
                and self.result_only_effects(op))


class _CachedLiveSet(LiveSet):
    """xDSL's `LiveSet` with effect queries answered by an `EffectCache`."""

    def __init__(self) -> None:
        super().__init__()
        self.cache = EffectCache()

    def propagate_op_liveness(self, op: Operation) -> None:
        for region in op.regions:
            self.propagate_region_liveness(region)
        if self.is_live(op):
            return
        if not self.cache.would_be_trivially_dead(op):
            self.set_live(op)
            return
        if any(self.is_live(use.operation) for result in op.results for use in result.uses):
            self.set_live(op)


def region_dce(region: Region, listener: PatternRewriterListener | None = None) -> bool:
    """xDSL's `region_dce` (same liveness, same deletions) in time linear in
    the ops per liveness round instead of quadratic in the nesting depth."""
    live_set = _CachedLiveSet()
    while live_set.changed:
        live_set.changed = False
        live_set.propagate_region_liveness(region)
    live_set.delete_dead(region, listener)
    return live_set.changed


class _CachedCSEDriver(CSEDriver):
    """xDSL's CSE with effect queries answered by an `EffectCache`. The cache
    stays valid for the whole run: the driver only redirects uses while it
    walks and erases ops at the end."""

    def __init__(self, keep_checks: bool = False) -> None:
        super().__init__()
        self.cache = EffectCache()
        self._writes_before: dict[Operation, int] = {}
        self._keep_checks = keep_checks
        self._stops: dict[Operation, bool] = {}

    def _holds_check(self, op: Operation) -> bool:
        """`op` or an op nested in it `may_stop` (memoised bottom-up)."""
        known = self._stops.get(op)
        if known is None:
            known = may_stop(op) or any(self._holds_check(inner) for region in op.regions
                                        for block in region.blocks for inner in block.ops)
            self._stops[op] = known
        return known

    def _simplify_operation(self, op: Operation) -> None:
        # xDSL 0.74's `CSEDriver._simplify_operation`, with cached effects.
        if op.has_trait(IsTerminator):
            return
        effects = self.cache.effects(op)
        if all(r.first_use is None for r in op.results) and self.cache.would_be_trivially_dead(op) \
                and not (self._keep_checks and self._holds_check(op)):
            self._mark_erasure(op)
            return
        if any(len(region.blocks) > 1 for region in op.regions):
            return
        if effects is None or effects:  # not free of side effects
            if effects is None or not all(e.kind == MemoryEffectKind.READ for e in effects):
                return
            if existing := self._known_ops.get(op):
                if (op.parent_block() is existing.parent_block()
                        and not self._write_between(existing, op)):
                    self._replace_and_delete(op, existing)
                    return
            self._known_ops[op] = op
            return
        if existing := self._known_ops.get(op):
            self._replace_and_delete(op, existing)
            return
        self._known_ops[op] = op

    def _write_between(self, from_op: Operation, to_op: Operation) -> bool:
        """xDSL's `has_other_side_effecting_op_in_between` (an op that may
        write in [from_op, to_op) of one block) in O(1): from the count of
        such ops before each op of the block, counted once per block (xDSL
        walks from one to the other: O(n^2) over a long expression that
        reads the same elements again)."""
        if to_op not in self._writes_before:
            writes = 0
            for op in to_op.parent_block().ops:  # type: ignore[union-attr]
                self._writes_before[op] = writes
                effects = self.cache.effects(op)
                if effects is None or any(e.kind is MemoryEffectKind.WRITE for e in effects):
                    writes += 1
        return self._writes_before[to_op] != self._writes_before[from_op]


# Ops whose lowering may stop the call on a bad operand (adpasses/lowering:
# `check_site`), besides checked loads and ops with write effects (which
# are never dead): a bad slice, a zero divisor, a float that fits no int.
CHECKED_OPS = (
    memref.SubviewOp,
    arith.DivSIOp,
    arith.DivUIOp,
    arith.RemSIOp,
    arith.RemUIOp,
    arith.FloorDivSIOp,
    arith.CeilDivSIOp,
    arith.CeilDivUIOp,
    arith.FPToSIOp,
    arith.FPToUIOp,
)


def may_stop(op: Operation) -> bool:
    """Whether the lowering of `op` may stop the call (IndexError,
    ZeroDivisionError, ValueError) with checks on: such an op is not dead
    when its results are unused, since Python would raise there."""
    if isinstance(op, memref.LoadOp):
        return UNCHECKED_ATTR not in op.attributes
    return isinstance(op, CHECKED_OPS)


def cse(thing: Operation | Block | Region, keep_checks: bool = False) -> None:
    """xDSL's `cse`, in time linear in the ops instead of quadratic in the
    nesting depth. `keep_checks`: an unused op that `may_stop`, or a loop
    or branch holding one, is not erased as dead (the frontend: `t = x[5]`
    must still raise IndexError, as in Python)."""
    _CachedCSEDriver(keep_checks).simplify(thing)
