"""Derivative rules: one table per dialect, looked up by op class.

Each table (`arith.py`, `math.py`, `memref.py`, `scf.py`, `func.py`,
`linalg.py`: the matrix product) maps an
op class to a rule. A rule answers two questions:

- `needs(op, activity)`: which primal values its reverse code reads (the
  cache planner decides how each is made available in the reverse sweep:
  reused, recomputed, reloaded or taped);
- `reverse(rc, op)`: emit the adjoint code into the reverse context `rc`
  (see `adpasses.reverse.reverse_context.ReverseContext`).

Scalar ops are not written here: each is an entry of the op table
(`adpasses/ops/`), and its rule is a `ScalarRule` derived from the entry's
partial derivatives, so neither the engine nor this package names an
arithmetic op. Structured and memory ops implement the protocol directly.

A second table, `SHADOW_RULES`, holds ops whose memref result addresses the
memory of one of several memref operands chosen at run time (`arith.select`
between memrefs). The activity analysis merges the memory of `sources(op)`
(if one carries derivatives, all may), and the reverse sweep builds the
shadow of the result with `shadow(rc, op)` (the same choice among the
operands' shadows). Views (subview, cast, ...) are not in it: they address
one source, and `ReverseContext.shadow` rebuilds them itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from xdsl.ir import Operation, SSAValue

from adpasses.ops import OP_TABLE, ScalarOp, partials

if TYPE_CHECKING:
    from adpasses.analysis.activity import ActivityAnalysis
    from adpasses.reverse.reverse_context import ReverseContext

Want = tuple[bool, ...]
"""Per operand: does the engine want this operand's adjoint (is it active)?"""


class ReverseRule(Protocol):
    def needs(self, op: Operation, activity: ActivityAnalysis) -> Sequence[SSAValue]: ...

    def reverse(self, rc: ReverseContext, op: Operation) -> None: ...


@dataclass(frozen=True)
class ScalarRule:
    """Rule of a scalar op of the op table (`adpasses/ops/`): derived from
    the entry's partial derivatives. The adjoint of operand i is
    `g * partial_i` (folded, `ops/partials.py`); what the rule needs cached
    is the primal values the wanted partials read, traced, never declared."""

    entry: ScalarOp

    def want(self, op: Operation, activity: ActivityAnalysis) -> Want:
        return tuple(activity.is_active(o) for o in op.operands)

    def needs_for(self, op: Operation, want: Want) -> Sequence[SSAValue]:
        return partials.needs(self.entry.partials, op, want)

    def needs(self, op: Operation, activity: ActivityAnalysis) -> Sequence[SSAValue]:
        want = self.want(op, activity)
        return self.needs_for(op, want) if any(want) else ()

    def adjoint(self, rc: ReverseContext, op: Operation, g: SSAValue, want: Want) -> Sequence[SSAValue | None]:
        return partials.emit_adjoints(self.entry.partials, rc, op, g, want,
                                      strong_zero=rc.sweep.strong_zero)

    def reverse(self, rc: ReverseContext, op: Operation) -> None:
        g = rc.adjoint(op.results[0])
        if g is None:
            return
        want = self.want(op, rc.activity)
        if not any(want):
            return
        for operand, adj, wanted in zip(op.operands, self.adjoint(rc, op, g, want), want):
            if wanted and adj is not None:
                rc.add_adjoint(operand, adj)


class ShadowRule(Protocol):
    def sources(self, op: Operation) -> Sequence[SSAValue]:
        """The memref operands whose memory the result may address."""
        ...

    def needs(self, op: Operation) -> Sequence[SSAValue]:
        """Primal (non-memref) values `shadow` reads, e.g. the condition."""
        ...

    def shadow(self, rc: ReverseContext, op: Operation) -> SSAValue:
        """The shadow of the op's memref result."""
        ...


_TABLE: dict[type[Operation], ReverseRule] | None = None
_SHADOW_TABLE: dict[type[Operation], ShadowRule] | None = None


def rule_table() -> dict[type[Operation], ReverseRule]:
    """All rules of all dialects, by op class."""
    global _TABLE
    if _TABLE is None:
        from adpasses.reverse.rules import arith, func, linalg, memref, scf

        table: dict[type[Operation], ReverseRule] = {cls: ScalarRule(e) for cls, e in OP_TABLE.items()}
        for dialect_rules in (arith.RULES, memref.RULES, scf.RULES, func.RULES, linalg.RULES):
            overlap = table.keys() & dialect_rules.keys()
            assert not overlap, f"rules defined twice: {overlap}"
            table.update(dialect_rules)
        _TABLE = table
    return _TABLE


def rule_for(op: Operation) -> ReverseRule | None:
    return rule_table().get(type(op))


def shadow_rule_table() -> dict[type[Operation], ShadowRule]:
    global _SHADOW_TABLE
    if _SHADOW_TABLE is None:
        from adpasses.reverse.rules import arith

        _SHADOW_TABLE = dict(arith.SHADOW_RULES)
    return _SHADOW_TABLE


def shadow_rule_for(op: Operation) -> ShadowRule | None:
    """The shadow rule of an op with a memref result, if it has one."""
    from adpasses.core.types import is_memref_type

    rule = (_SHADOW_TABLE if _SHADOW_TABLE is not None else shadow_rule_table()).get(type(op))
    if rule is None or len(op.results) != 1 or not is_memref_type(op.results[0].type):
        return None
    return rule


@dataclass(frozen=True)
class RuleTables:
    """Where the reverse engine (`GradientBuilder`, `ReverseContext`) looks up
    rules. The engine does not import this package: `differentiate` hands
    it `RULES`, so rules may import the engine and no cycle forms."""

    rule_for: Callable[[Operation], ReverseRule | None]
    shadow_rule_for: Callable[[Operation], ShadowRule | None]


RULES = RuleTables(rule_for, shadow_rule_for)
"""The rules of all dialects (the tables load on first lookup)."""
