"""The cache report: what the reverse sweep reuses, recomputes, reloads or
tapes, why, and how many bytes, per generated gradient function.

Each entry names the value (its SSA name and defining op), its source
location (the MLIR `loc`, i.e. the Python line for the frontend), the
decision and the reason, the element type and how many values are taped per
call as an expression of the function's sizes (the product of the trip
counts of the enclosing loops, e.g. `n` or `n*m`). `bind(args)` evaluates
those expressions for concrete arguments (numpy arrays and scalars), giving
`count` and `bytes` per entry and `taped_bytes` in total.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from adpasses.cache.plan import CachePlan
from adpasses.core.diagnostics import location_text, op_location
from adpasses.core.ir_facts import home_block, is_constant
from adpasses.core.region_flow import (
    counted_loop,
    region_flow,
    runs_at_most_once,
    trip_bounds,
)
from adpasses.core.types import byte_size


class SizeExpr:
    """An index expression over the function's arguments, printable and
    evaluable: constants, arguments, memref.dim, + - * ceildiv max."""

    def __init__(self, value: SSAValue):
        self.value = value

    def text(self) -> str:
        return _text(self.value)

    def evaluate(self, env: dict[SSAValue, object]) -> int | None:
        return _evaluate(self.value, env)


def _name(value: SSAValue) -> str:
    return value.name_hint or "?"


def _text(value: SSAValue) -> str:
    if isinstance(value, OpResult):
        op = value.op
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return str(op.value.value.data)
        if isinstance(op, memref.DimOp):
            return f"dim({_text(op.source)}, {_text(op.index)})"
        if isinstance(op, arith.IndexCastOp):
            return _text(op.input)
        symbols = {arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*"}
        if type(op) in symbols:
            return f"({_text(op.lhs)} {symbols[type(op)]} {_text(op.rhs)})"
        if isinstance(op, (arith.DivSIOp, arith.FloorDivSIOp, arith.DivUIOp)):
            return f"({_text(op.lhs)} / {_text(op.rhs)})"
    return _name(value)


def _evaluate(value: SSAValue, env: dict[SSAValue, object]) -> Any:
    """The value of an index expression: an int, or an int64 array where an
    induction variable of `env` is bound to the array of its values (so a
    triangular loop's trip counts are computed for all outer iterations at
    once); None where it depends on something unknown."""
    if value in env:
        v = env[value]
        if isinstance(v, np.ndarray):
            return v
        return int(v) if isinstance(v, (int, float)) or hasattr(v, "__index__") else None
    if not isinstance(value, OpResult):
        return None
    op = value.op
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    if isinstance(op, memref.DimOp):
        source = env.get(op.source)
        k = _evaluate(op.index, env)
        shape = getattr(source, "shape", None)
        return int(shape[k]) if shape is not None and k is not None else None
    if isinstance(op, arith.IndexCastOp):
        return _evaluate(op.input, env)
    binary = {
        arith.AddiOp: lambda a, b: a + b,
        arith.SubiOp: lambda a, b: a - b,
        arith.MuliOp: lambda a, b: a * b,
        arith.DivSIOp: _trunc_div,
        arith.FloorDivSIOp: lambda a, b: None if np.any(b == 0) else a // b,
        arith.MaxSIOp: np.maximum,
        arith.MinSIOp: np.minimum,
    }
    fn = binary.get(type(op))
    if fn is not None:
        a, b = _evaluate(op.lhs, env), _evaluate(op.rhs, env)
        return fn(a, b) if a is not None and b is not None else None
    return None


def _trunc_div(a: Any, b: Any) -> Any:
    """Signed division rounding toward zero (arith.divsi), exact on ints."""
    if np.any(b == 0):
        return None
    q = abs(a) // abs(b)
    return np.where((a < 0) != (b < 0), -q, q) if isinstance(q, np.ndarray) else (
        -q if (a < 0) != (b < 0) else q)


def _depends_on(value: SSAValue, target: SSAValue) -> bool:
    """Whether an index expression reads `target` (through the ops that
    `_evaluate` knows)."""
    if value is target:
        return True
    if not isinstance(value, OpResult) or isinstance(value.op, memref.DimOp):
        return False
    return any(_depends_on(v, target) for v in value.op.operands)


@dataclass(frozen=True)
class LoopFactor:
    """One enclosing loop of a taped value: how often its body runs."""

    kind: str  # "for" or "while"
    lb: SizeExpr | None = None
    ub: SizeExpr | None = None
    step: SizeExpr | None = None
    location: str | None = None
    iv: SSAValue | None = None
    """The loop's induction variable, where the bounds of loops inside it may read it."""

    def reads(self, iv: SSAValue | None) -> bool:
        """Whether this loop's trip count depends on `iv` (a triangular nest)."""
        if iv is None or self.kind != "for":
            return False
        assert self.lb and self.ub and self.step
        return any(_depends_on(e.value, iv) for e in (self.lb, self.ub, self.step))

    def text(self) -> str:
        if self.kind == "while":
            return f"iterations(while at {self.location})"
        assert self.lb and self.ub and self.step
        lb, ub, step = self.lb.text(), self.ub.text(), self.step.text()
        span = ub if lb == "0" else f"({ub} - {lb})"
        return span if step == "1" else f"ceildiv({span}, {step})"

    def range_text(self) -> str:
        assert self.lb and self.ub and self.step
        name = _name(self.iv) if self.iv is not None else "?"
        step = self.step.text()
        return f"{name} in range({self.lb.text()}, {self.ub.text()}" + (
            f", {step})" if step != "1" else ")")

    def bounds(self, env: dict[SSAValue, object]) -> tuple[Any, Any, Any] | None:
        if self.kind != "for":
            return None
        assert self.lb and self.ub and self.step
        lb, ub, step = self.lb.evaluate(env), self.ub.evaluate(env), self.step.evaluate(env)
        if lb is None or ub is None or step is None or np.any(step <= 0):
            return None
        return lb, ub, step

    def evaluate(self, env: dict[SSAValue, object]) -> Any:
        """How often the body runs (per iteration of the enclosing loops
        bound in `env`): an int, an int64 array, or None if unknown."""
        bounds = self.bounds(env)
        if bounds is None:
            return None
        lb, ub, step = bounds
        return np.maximum(0, -(-(ub - lb) // step))


def count_terms(factors: Sequence[LoopFactor]) -> list[str]:
    """How often a value in these nested loops is computed, as a product of
    terms: trip counts, and a sum over the iterations of a loop whose
    induction variable bounds a loop inside it (a triangular nest)."""
    terms: list[str] = []
    for k, first in enumerate(factors):
        rest = factors[k + 1:]
        if any(r.reads(first.iv) for r in rest):
            inner = " * ".join(count_terms(rest)) or "1"
            return terms + [f"sum({first.range_text()}: {inner})"]
        terms.append(first.text())
    return terms


ENUMERATED_ITERATIONS = 1 << 22
"""How many iterations of triangular outer loops `count` walks one by one
(inner trip counts are evaluated as arrays over the innermost outer loop, so
this bounds Python work only for nests of three or more dependent levels)."""


def count(factors: Sequence[LoopFactor], env: dict[SSAValue, object]) -> int | None:
    """The exact number of times a value in these nested loops is computed
    for the arguments bound in `env`, summing over the iterations of any loop
    whose induction variable bounds a loop inside it; None if a trip count
    is unknown (a while loop) or the nest is too large to sum."""
    budget = [ENUMERATED_ITERATIONS]
    total = _count(tuple(factors), dict(env), budget)
    return None if total is None else int(total)


def _count(factors: tuple[LoopFactor, ...], env: dict, budget: list[int]) -> Any:
    if not factors:
        return 1
    first, rest = factors[0], factors[1:]
    if not any(r.reads(first.iv) for r in rest):
        trips, inner = first.evaluate(env), _count(rest, env, budget)
        return None if trips is None or inner is None else trips * inner
    bounds = first.bounds(env)
    if bounds is None or isinstance(bounds[0], np.ndarray) or isinstance(bounds[1], np.ndarray):
        return None
    lb, ub, step = (int(b) for b in bounds)
    values = np.arange(lb, ub, step, dtype=np.int64)
    if not any(r.reads(q.iv) for k, q in enumerate(rest) for r in rest[k + 1:]):
        # The loops inside depend on this one only: their counts for all
        # its iterations at once, as arrays.
        inner = _count(rest, {**env, first.iv: values}, budget)
        return None if inner is None else int(np.sum(np.broadcast_to(inner, values.shape)))
    budget[0] -= len(values)
    if budget[0] < 0:
        return None
    total = 0
    for v in values.tolist():
        inner = _count(rest, {**env, first.iv: v}, budget)
        if inner is None:
            return None
        total += int(np.sum(inner))
    return total


@dataclass
class CacheEntry:
    value: str
    op: str
    decision: str
    location: str | None
    reason: str
    dtype: str
    element_bytes: int
    factors: tuple[LoopFactor, ...] = ()
    count: int | None = None
    bytes: int | None = None

    @property
    def count_text(self) -> str:
        return " * ".join(count_terms(self.factors)) or "1"

    @property
    def bytes_text(self) -> str:
        if self.decision != "tape":
            return "0"
        return f"{self.element_bytes}" + "".join(f"*{_paren(t)}" for t in count_terms(self.factors))


def _paren(text: str) -> str:
    return text if text.replace("_", "").isalnum() or text.startswith("(") else f"({text})"


@dataclass
class CacheReport:
    gradient: str
    primal: str
    policy: str
    entries: list[CacheEntry] = field(default_factory=list)
    argument_values: Sequence[SSAValue] = ()
    bound: bool = False

    @classmethod
    def from_plan(cls, plan: CachePlan, *, gradient_name: str, primal_name: str,
                  policy: str) -> CacheReport:
        entries = []
        for value in plan.order.sorted(plan.decisions):
            d = plan.decisions[value]
            if is_constant(value) or isinstance(value.type, MemRefType):
                continue  # constants are rebuilt, memrefs are always reused
            loc = value_location(value)
            try:
                size = byte_size(value.type)
            except ValueError:
                size = 0
            entries.append(
                CacheEntry(
                    value=_label(value, loc),
                    op=_describe(value),
                    decision=d.kind,
                    location=loc,
                    reason=_with_residual_note(value, d.reason),
                    dtype=str(value.type),
                    element_bytes=size,
                    factors=_loop_factors(value),
                )
            )
        return cls(gradient_name, primal_name, policy, entries,
                   list(plan.top_block.args))

    # -- evaluation for concrete arguments ----------------------------------------

    def bind(self, args: Sequence[object]) -> CacheReport:
        """The report with `count` and `bytes` evaluated for these primal
        arguments (numpy arrays give their shapes; ints their values)."""
        env = dict(zip(self.argument_values, args))
        entries = []
        for e in self.entries:
            times = count(e.factors, env)
            nbytes = 0 if e.decision != "tape" else (None if times is None else times * e.element_bytes)
            entries.append(replace(e, count=times, bytes=nbytes))
        return replace(self, entries=entries, bound=True)

    @property
    def taped_bytes(self) -> int | None:
        """Total bytes taped per call for the bound arguments (`bind`); None
        before binding, or where a count is unknown (a while loop's
        iterations): `taped_bytes_formula` is the formula then."""
        taped = [e for e in self.entries if e.decision == "tape"]
        if self.bound and all(e.bytes is not None for e in taped):
            return sum(e.bytes for e in taped)  # type: ignore[misc]
        return None

    @property
    def taped_bytes_formula(self) -> str:
        """Total bytes taped per call as a formula of the arguments' sizes
        (triangular nests as sums over the outer loop's iterations)."""
        taped = [e for e in self.entries if e.decision == "tape"]
        return " + ".join(e.bytes_text for e in taped) or "0"

    # -- output -------------------------------------------------------------------

    def __str__(self) -> str:
        lines = [f"cache report for @{self.gradient} (gradient of @{self.primal}, policy {self.policy})"]
        width = max([len(e.value) for e in self.entries] + [4])
        for e in self.entries:
            amount = f"{e.dtype} x {e.count_text}" if e.decision == "tape" else e.dtype
            if e.decision == "tape" and e.bytes is not None:
                amount += f" = {e.bytes} bytes"
            lines.append(
                f"  {e.decision:<9} {e.value:<{width}}  {amount:<24} {e.location or '?'}  {e.op}: {e.reason}"
            )
        total = self.taped_bytes
        lines.append(f"  taped bytes: {self.taped_bytes_formula}" if total is None else
                     f"  taped bytes: {total} = {self.taped_bytes_formula}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "gradient": self.gradient,
            "primal": self.primal,
            "policy": self.policy,
            "entries": [
                {
                    "value": e.value,
                    "op": e.op,
                    "decision": e.decision,
                    "location": e.location,
                    "reason": e.reason,
                    "dtype": e.dtype,
                    "count": e.count if self.bound else e.count_text,
                    "bytes": e.bytes if self.bound else e.bytes_text,
                }
                for e in self.entries
            ],
            "taped_bytes": self.taped_bytes,
            "taped_bytes_formula": self.taped_bytes_formula,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)


def value_location(value: SSAValue) -> str | None:
    """The source location of a value: its op's, or its block's op's."""
    owner = value.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    return (location_text(value.owner.location) if isinstance(value, OpResult) else None) \
        or op_location(op)


def _with_residual_note(value: SSAValue, reason: str) -> str:
    """A custom rule's residual says so (adpasses/core/custom_rules.py)."""
    from adpasses.core.custom_rules import residual_note

    note = residual_note(value)
    return reason if note is None else f"{note}; {reason}"


def value_label(value: SSAValue) -> str:
    """How the report names a value (see _label)."""
    return _label(value, value_location(value))


def _label(value: SSAValue, location: str | None) -> str:
    """How the report names a value: its SSA name, or the source expression
    at its location (Python code from the frontend), or its op."""
    if value.name_hint:
        return f"%{value.name_hint}"
    snippet = source_snippet(location, value.op.name) if isinstance(value, OpResult) else None
    return snippet or f"<{_describe(value)}>"


def source_snippet(location: str | None, op_name: str = "", limit: int = 40) -> str | None:
    """The expression starting at `file:line:col` in a Python source file
    (of the kind the op comes from, when several start there)."""
    import ast
    import linecache

    from adpasses.core.compile_locks import parse_python

    if not location or not location.count(":") >= 2:
        return None
    path, line_s, col_s = location.rsplit(":", 2)
    if not path.endswith(".py") or not line_s.isdigit() or not col_s.isdigit():
        return None
    text = linecache.getline(path, int(line_s))
    if not text:
        return None
    stripped = text.lstrip()
    indent = len(text) - len(stripped)
    code = stripped.rstrip()
    if code.endswith(":"):
        code += " pass"
    try:
        tree = parse_python(code)  # ast.parse, safe when threads compile at once
    except SyntaxError:
        return None
    col = int(col_s) - 1 - indent
    preferred = (ast.Subscript,) if op_name == "memref.load" else (
        (ast.Call,) if op_name.startswith("math.") else (ast.BinOp, ast.UnaryOp, ast.Compare))
    candidates = [n for n in ast.walk(tree)
                  if isinstance(n, ast.expr) and getattr(n, "col_offset", -1) == col]
    kind = [n for n in candidates if isinstance(n, preferred)]
    pool = kind or candidates
    best = min(pool, key=lambda n: n.end_col_offset or 0) if kind else (
        max(pool, key=lambda n: n.end_col_offset or 0) if pool else None)
    if best is None:
        return None
    snippet = ast.unparse(best)
    return snippet if len(snippet) <= limit else snippet[: limit - 3] + "..."


def _describe(value: SSAValue) -> str:
    if isinstance(value, BlockArgument):
        parent = value.block.parent_op()
        if isinstance(parent, scf.ForOp):
            return "scf.for iter_arg" if value.index else "scf.for induction variable"
        return f"{parent.name if parent else 'block'} argument"
    assert isinstance(value, OpResult)
    return value.op.name


def _loop_factors(value: SSAValue) -> tuple[LoopFactor, ...]:
    factors: list[LoopFactor] = []
    op = home_block(value).parent_op()
    while op is not None and not isinstance(op, func.FuncOp):
        bounds = trip_bounds(op)
        if bounds is not None:  # a counted loop: ceil((ub - lb) / step) runs
            lb, ub, step = bounds
            counted = counted_loop(op)
            factors.append(LoopFactor("for", SizeExpr(lb), SizeExpr(ub), SizeExpr(step),
                                      iv=counted[0] if counted is not None else None))
        elif not runs_at_most_once(op) and region_flow(op) is not None:  # runs it knows not how often
            factors.append(LoopFactor("while", location=op_location(op)))
        parent = op.parent_block()
        op = parent.parent_op() if parent is not None else None
    return tuple(reversed(factors))
