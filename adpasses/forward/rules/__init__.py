"""Forward (tangent) rules: one table per dialect, looked up by op class.

A rule has one method, `forward(fb, op)`: emit `op` (a clone over the
primal values, or a rebuilt op for region ops whose regions carry
tangents) and, after it, the tangents of what it computes, into the
`TangentBuilder` `fb` (`adpasses/forward/tangent.py`).

Scalar ops are not written here: each is an entry of the op table
(`adpasses/ops/`), and its rule is a `ScalarTangentRule` derived from the
entry's partial derivatives (`tangent = sum_i partial_i * tangent_i`,
`ops.partials.emit_tangents`), the same partials the reverse rules scale:
neither the engine nor this package names an arithmetic op. Structured,
memory and `ad` ops (tapes, so that forward over reverse works) implement
the protocol in `scf.py`, `memref.py`, `func.py`, `ad.py` and `linalg.py`
(the matrix product: two products per lane, not its loop nest).

An op without a rule is cloned when it carries no derivative, and is a
located error when it does (`TangentBuilder.emit_op`), never a zero.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from xdsl.ir import Operation

from adpasses.core.types import is_memref_type
from adpasses.ops import OP_TABLE, ScalarOp, partials

if TYPE_CHECKING:
    from adpasses.forward.tangent import TangentBuilder


class ForwardRule(Protocol):
    def forward(self, fb: TangentBuilder, op: Operation) -> None: ...


@dataclass(frozen=True)
class ScalarTangentRule:
    """Rule of a scalar op of the op table: the op, then, if its result
    carries a derivative, per lane `sum_i partial_i * tangent_i` over the
    operands that have a tangent (folded like adjoints: `* 1` is no
    multiplication, `* 0` no term)."""

    entry: ScalarOp

    def forward(self, fb: TangentBuilder, op: Operation) -> None:
        new = fb.clone(op)
        if not any(fb.is_active(r) for r in op.results):
            return
        per_operand = [fb.tangent(o) for o in op.operands]
        lanes = [[t[k] if t is not None else None for t in per_operand] for k in range(fb.width)]
        fb.set_tangent(op.results[0], partials.emit_tangents(self.entry.partials, _Sink(fb), new, lanes))


class _Sink:
    """Where `emit_tangents` writes: the leaves are the clone's own values."""

    def __init__(self, fb: TangentBuilder):
        self.fb = fb

    def primal(self, value):  # type: ignore[no-untyped-def]
        return value

    def insert(self, op: Operation) -> Operation:
        return self.fb.insert(op)

    def const(self, x, type_):  # type: ignore[no-untyped-def]
        return self.fb.const(x, type_)


_TABLE: dict[type[Operation], ForwardRule] | None = None


def rule_table() -> dict[type[Operation], ForwardRule]:
    """All forward rules of all dialects, by op class."""
    global _TABLE
    if _TABLE is None:
        from adpasses.forward.rules import ad, arith, func, linalg, memref, scf

        table: dict[type[Operation], ForwardRule] = {cls: ScalarTangentRule(e) for cls, e in OP_TABLE.items()}
        for dialect_rules in (arith.RULES, memref.RULES, scf.RULES, func.RULES, ad.RULES, linalg.RULES):
            overlap = table.keys() & dialect_rules.keys()
            assert not overlap, f"forward rules defined twice: {overlap}"
            table.update(dialect_rules)
        _TABLE = table
    return _TABLE


def rule_for(op: Operation) -> ForwardRule | None:
    """The op's rule; for an op whose memref result is one of several
    memref operands chosen at run time (`arith.select` between memrefs),
    its choice rule (`arith.CHOICE_RULES`): the same choice among the
    operands' tangents."""
    table = _TABLE if _TABLE is not None else rule_table()
    if op.results and is_memref_type(op.results[0].type):
        from adpasses.forward.rules.arith import CHOICE_RULES

        choice = CHOICE_RULES.get(type(op))
        if choice is not None:
            return choice
    return table.get(type(op))


@dataclass(frozen=True)
class ForwardRuleTables:
    """Where the tangent engine looks up rules (it does not import this
    package: the forward pass hands it `RULES`)."""

    rule_for: Callable[[Operation], ForwardRule | None]


RULES = ForwardRuleTables(rule_for)
