"""Derivative rules: one table per dialect, looked up by op class.

Each table (`arith.py`, `math.py`, `memref.py`, `scf.py`, `func.py`) maps an
op class to a rule. A rule answers two questions:

- `needs(op, activity)`: which primal values its reverse code reads (the
  cache planner decides how each is made available in the reverse sweep:
  reused, recomputed, reloaded or taped);
- `reverse(rc, op)`: emit the adjoint code into the reverse context `rc`
  (see `adpasses.reverse.reverse_context.ReverseContext`).

Float scalar ops use `ScalarRule`: a function from the result's adjoint to
the operands' adjoints, plus the primal values it needs, so the engine never
names an arithmetic op. Structured and memory ops implement the protocol
directly.

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

if TYPE_CHECKING:
    from adpasses.analysis.activity import ActivityAnalysis
    from adpasses.reverse.reverse_context import ReverseContext

Want = tuple[bool, ...]
"""Per operand: does the engine want this operand's adjoint (is it active)?"""


class ReverseRule(Protocol):
    def needs(self, op: Operation, activity: ActivityAnalysis) -> Sequence[SSAValue]: ...

    def reverse(self, rc: ReverseContext, op: Operation) -> None: ...


AdjointFn = Callable[["ReverseContext", Operation, SSAValue, Want], Sequence[SSAValue | None]]
NeedsFn = Callable[[Operation, Want], Sequence[SSAValue]]


@dataclass(frozen=True)
class ScalarRule:
    """Rule of a pure op with one float result.

    `adjoint(rc, op, g, want)` returns one adjoint per operand (None where
    not wanted or zero); it reads primal values only through `rc.primal`, and
    exactly the values `needs(op, want)` lists (a generic test checks this
    for every table entry).
    """

    adjoint: AdjointFn
    needs_fn: NeedsFn

    def want(self, op: Operation, activity: ActivityAnalysis) -> Want:
        return tuple(activity.is_active(o) for o in op.operands)

    def needs(self, op: Operation, activity: ActivityAnalysis) -> Sequence[SSAValue]:
        want = self.want(op, activity)
        return self.needs_fn(op, want) if any(want) else ()

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


def scalar(needs: NeedsFn) -> Callable[[AdjointFn], ScalarRule]:
    """Decorator: `@scalar(needs=...)` over an adjoint function."""

    def wrap(fn: AdjointFn) -> ScalarRule:
        return ScalarRule(fn, needs)

    return wrap


def no_needs(op: Operation, want: Want) -> Sequence[SSAValue]:
    return ()


def needs_operands(*names: str) -> NeedsFn:
    """Needs the named operands whenever any operand is wanted."""

    def needs(op: Operation, want: Want) -> Sequence[SSAValue]:
        return [getattr(op, n) for n in names]

    return needs


def needs_result_and(*names: str) -> NeedsFn:
    """Needs the op's result (and the named operands)."""

    def needs(op: Operation, want: Want) -> Sequence[SSAValue]:
        return [op.results[0], *(getattr(op, n) for n in names)]

    return needs


ZERO_DERIVATIVE = ScalarRule(lambda rc, op, g, want: [None] * len(op.operands), no_needs)
"""Piecewise-constant ops (floor, ceil, ...): the derivative is zero."""


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
        from adpasses.reverse.rules import arith, func, math, memref, scf

        table: dict[type[Operation], ReverseRule] = {}
        for dialect_rules in (arith.RULES, math.RULES, memref.RULES, scf.RULES, func.RULES):
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
