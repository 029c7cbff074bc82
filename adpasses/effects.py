"""Memory effects of ops, computed once per op.

xDSL's `get_effects` on an op with regions (`RecursiveMemoryEffect`:
scf.for, scf.if, ...) walks everything nested in it, and its dead-code
helpers ask it for every op: on a nest of d loops that is O(d^2) per query
and O(d^3) per dead-code pass (300 nested loops took minutes). `EffectCache`
answers the same questions from a memo filled bottom-up, so each op's
effects are computed once while the IR does not change; make a new cache
after changing the IR. `region_dce` is xDSL's dead-code elimination with
such a cache.
"""

from __future__ import annotations

from collections.abc import Set

from xdsl.ir import Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.traits import (
    EffectInstance,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    RecursiveMemoryEffect,
    SymbolOpInterface,
)
from xdsl.transforms.dead_code_elimination import LiveSet


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
