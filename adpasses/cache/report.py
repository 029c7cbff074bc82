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
from xdsl.dialects import math as mathd
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
    """A value's SSA name; an unnamed function argument is `argK`, another
    unnamed value the op that makes it (a size was printed as `?`)."""
    if value.name_hint:
        return value.name_hint
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op()
        if isinstance(owner, func.FuncOp):
            return f"arg{value.index}"
        return f"<{owner.name} argument>" if owner is not None else "?"
    return f"<{value.owner.name}>" if isinstance(value, OpResult) else "?"


def _text(value: SSAValue) -> str:
    if isinstance(value, OpResult):
        op = value.op
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return str(op.value.value.data)
        if isinstance(op, memref.DimOp):
            return f"dim({_text(op.source)}, {_text(op.index)})"
        if isinstance(op, (arith.IndexCastOp, arith.SIToFPOp, arith.FPToSIOp)):
            return _text(op.operands[0])
        symbols = {arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*"}
        if type(op) in symbols:
            lhs, rhs = _text(op.lhs), _text(op.rhs)
            # x + 0, 0 + x, x - 0, x * 1, 1 * x: the operand alone
            if rhs == "0" and not isinstance(op, arith.MuliOp) or rhs == "1" and isinstance(op, arith.MuliOp):
                return lhs
            if lhs == "0" and isinstance(op, arith.AddiOp) or lhs == "1" and isinstance(op, arith.MuliOp):
                return rhs
            return f"({lhs} {symbols[type(op)]} {rhs})"
        if isinstance(op, (arith.DivSIOp, arith.FloorDivSIOp, arith.DivUIOp)):
            return f"({_text(op.lhs)} / {_text(op.rhs)})"
        if isinstance(op, (arith.CeilDivSIOp, arith.CeilDivUIOp)):
            return f"ceildiv({_text(op.lhs)}, {_text(op.rhs)})"
        if isinstance(op, (arith.MaxSIOp, arith.MinSIOp, arith.SelectOp)) and value.name_hint:
            # a size the compiler named (segment_length, trips): the name
            # says what it is, its max/select formula does not
            return value.name_hint
        if isinstance(op, (arith.MaxSIOp, arith.MinSIOp)):  # a trip count: max(n, 0)
            which = "max" if isinstance(op, arith.MaxSIOp) else "min"
            return f"{which}({_text(op.lhs)}, {_text(op.rhs)})"
        if isinstance(op, (mathd.SqrtOp, mathd.CeilOp)) and not value.name_hint:
            # the segment length of a checkpointed loop: ceil(sqrt(...))
            which = "sqrt" if isinstance(op, mathd.SqrtOp) else "ceil"
            return f"{which}({_text(op.operand)})"
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
        if shape is None and k is not None:
            return _allocated_size(op.source, int(k), env)
        return int(shape[k]) if shape is not None and k is not None else None
    if isinstance(op, arith.IndexCastOp):
        return _evaluate(op.input, env)
    if op.name == "ad.broadcast":
        return _broadcast_size(op, env)
    binary = {
        arith.AddiOp: lambda a, b: a + b,
        arith.SubiOp: lambda a, b: a - b,
        arith.MuliOp: lambda a, b: a * b,
        arith.DivSIOp: _trunc_div,
        arith.FloorDivSIOp: lambda a, b: None if np.any(b == 0) else a // b,
        arith.MaxSIOp: np.maximum,
        arith.MinSIOp: np.minimum,
    }
    fn = binary.get(type(op)) or _MORE_BINARY.get(type(op))
    if fn is not None:
        a, b = _evaluate(op.lhs, env), _evaluate(op.rhs, env)
        return fn(a, b) if a is not None and b is not None else None
    if isinstance(op, arith.CmpiOp):
        a, b = _evaluate(op.lhs, env), _evaluate(op.rhs, env)
        compare = _COMPARISONS.get(op.predicate.value.data)
        return None if a is None or b is None or compare is None else compare(a, b)
    if isinstance(op, arith.SelectOp):
        c, a, b = (_evaluate(v, env) for v in op.operands)
        return None if c is None or a is None or b is None else np.where(c, a, b) if isinstance(
            c, np.ndarray) else (a if c else b)
    # The segment length of a checkpointed loop: ceil(sqrt(n)) through f64.
    if isinstance(op, arith.SIToFPOp):
        return _evaluate(op.input, env)
    if isinstance(op, arith.FPToSIOp):
        x = _evaluate(op.input, env)
        return None if x is None else (x.astype(np.int64) if isinstance(x, np.ndarray) else int(x))
    if isinstance(op, (mathd.SqrtOp, mathd.CeilOp)):
        x = _evaluate(op.operand, env)
        if x is None:
            return None
        return np.sqrt(x) if isinstance(op, mathd.SqrtOp) else np.ceil(x)
    return None


def _allocated_size(value: SSAValue, dim: int, env: dict[SSAValue, object]) -> Any:
    """Size `dim` of a local allocation (static, or its dynamic size operand)
    or of a view of an array (a reinterpret_cast's or subview's size operand,
    a cast's source): array expressions index their operands through views,
    so their tapes' counts are sizes of views."""
    if not isinstance(value, OpResult) or not isinstance(value.type, MemRefType):
        return None
    op = value.op
    shape = value.type.get_shape()
    if dim >= len(shape):
        return None
    if shape[dim] >= 0:
        return shape[dim]
    if isinstance(op, (memref.AllocOp, memref.AllocaOp)):
        dynamic = [k for k, n in enumerate(shape) if n < 0]
        return _evaluate(op.dynamic_sizes[dynamic.index(dim)], env)
    if isinstance(op, memref.CastOp):
        return _size_of(op.source, dim, env)
    if isinstance(op, (memref.ReinterpretCastOp, memref.SubviewOp)):
        static = list(op.static_sizes.get_values())
        dynamic_sizes = iter(op.sizes)
        sizes = [next(dynamic_sizes) if n < 0 else n for n in static]
        # a subview drops unit dimensions (rank-reducing); which ones is only
        # clear when every size left is not a static 1
        kept = [n for n in sizes if n != 1] if len(sizes) != len(shape) else sizes
        if len(kept) != len(shape):
            return None
        size = kept[dim]
        return size if isinstance(size, int) else _evaluate(size, env)
    return None


def _size_of(value: SSAValue, dim: int, env: dict[SSAValue, object]) -> Any:
    shape = getattr(env.get(value), "shape", None)
    if shape is not None:
        return int(shape[dim]) if dim < len(shape) else None
    return _allocated_size(value, dim, env)


def _broadcast_size(op: Operation, env: dict[SSAValue, object]) -> Any:
    """`ad.broadcast`'s size: numpy's broadcast of two sizes of a dimension."""
    a, b = _evaluate(op.operands[0], env), _evaluate(op.operands[1], env)
    if a is None or b is None:
        return None
    mode = op.mode  # type: ignore[attr-defined]
    if mode == "into":
        return b
    return a if mode == "equal" else np.where(np.equal(a, 1), b, a) if isinstance(
        a, np.ndarray) or isinstance(b, np.ndarray) else (b if a == 1 else a)


def _unsigned_div(a: Any, b: Any) -> Any:
    return None if np.any(b == 0) else a // b


def _ceil_div(a: Any, b: Any) -> Any:
    return None if np.any(b == 0) else -(-a // b)


_MORE_BINARY = {
    arith.DivUIOp: _unsigned_div,
    arith.CeilDivSIOp: _ceil_div,  # a slice's length (X[:, j])
    arith.CeilDivUIOp: _ceil_div,
    arith.MaxUIOp: np.maximum,
    arith.MinUIOp: np.minimum,
    arith.MulfOp: lambda a, b: a * b,
    arith.DivfOp: lambda a, b: None if np.any(b == 0) else a / b,
    arith.AndIOp: lambda a, b: a & b,  # conditions (i1) of a checkpoint schedule's choice
    arith.OrIOp: lambda a, b: a | b,
}
_COMPARISONS = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
                5: np.greater_equal, 6: np.less, 7: np.less_equal, 8: np.greater, 9: np.greater_equal}
"""arith.cmpi predicates (eq ne slt sle sgt sge ult ule ugt uge; sizes are >= 0)."""


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

    kind: str  # "for", "while", or "size" (the elements of a snapshot memref)
    lb: SizeExpr | None = None
    ub: SizeExpr | None = None
    step: SizeExpr | None = None
    location: str | None = None
    iv: SSAValue | None = None
    """The loop's induction variable, where the bounds of loops inside it may read it."""
    memref: SSAValue | None = None
    """For `size`: the memref whose elements a snapshot copies."""

    def reads(self, iv: SSAValue | None) -> bool:
        """Whether this loop's trip count depends on `iv` (a triangular nest)."""
        if iv is None or self.kind != "for":
            return False
        assert self.lb and self.ub and self.step
        return any(_depends_on(e.value, iv) for e in (self.lb, self.ub, self.step))

    def text(self) -> str:
        if self.kind == "size":
            assert self.memref is not None
            return f"size({self.memref.name_hint or value_label(self.memref)})"
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
        if self.kind == "size":
            assert self.memref is not None
            return _elements(self.memref, env)
        bounds = self.bounds(env)
        if bounds is None:
            return None
        lb, ub, step = bounds
        return np.maximum(0, -(-(ub - lb) // step))


def _elements(value: SSAValue, env: dict[SSAValue, object]) -> int | None:
    """The number of elements of a memref: of its bound array, or of its
    allocation's static and dynamic sizes."""
    bound = env.get(value)
    if isinstance(bound, np.ndarray):
        return int(bound.size)
    mtype = value.type
    if not isinstance(mtype, MemRefType):
        return None
    if isinstance(value, OpResult) and isinstance(value.op, (memref.AllocOp, memref.AllocaOp)):
        dynamic = iter(value.op.dynamic_sizes)
        total = 1
        for n in mtype.get_shape():
            size = n if n >= 0 else _evaluate(next(dynamic), env)
            if size is None or isinstance(size, np.ndarray):
                return None
            total *= int(size)
        return total
    if all(n >= 0 for n in mtype.get_shape()):
        return int(np.prod(mtype.get_shape()))
    return None


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


TAPED = ("tape", "snapshot")
"""Decisions that cost tape: a value pushed per iteration, a memref's
contents pushed before a checkpointed call."""


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
    tape_group: int | None = None
    """Entries with the same group share one tape (values of exclusive
    branches, cache/shared_tapes.py): it holds the largest of them."""

    @property
    def count_text(self) -> str:
        return " * ".join(count_terms(self.factors)) or "1"

    @property
    def bytes_text(self) -> str:
        if self.decision not in TAPED:
            return "0"
        return f"{self.element_bytes}" + "".join(f"*{_paren(t)}" for t in count_terms(self.factors))


def _paren(text: str) -> str:
    return text if text.replace("_", "").isalnum() or text.startswith("(") else f"({text})"


@dataclass(frozen=True)
class ParallelLoop:
    """A loop marked to run in parallel (`prange`, `jit(parallel=True)`)
    in the primal or the gradient, and what `ad-parallelize` decided
    (docs/parallel.md). Filled in by the API (adpasses.api.functions),
    which runs that pass's analysis."""

    sweep: str
    """"primal" or "gradient"."""
    location: str
    mark: str
    """"prange", "jit(parallel=True)" or "vmap(parallel=True) batch"."""
    parallel: bool
    reason: str
    """Why it runs serially; for a parallel loop, how it is cut in chunks."""


@dataclass
class CacheReport:
    gradient: str
    primal: str
    policy: str
    entries: list[CacheEntry] = field(default_factory=list)
    argument_values: Sequence[SSAValue] = ()
    bound: bool = False
    checkpointed: list = field(default_factory=list)
    """(checkpointed call, name of the callee gradient its reverse calls)."""
    callees: list = field(default_factory=list)
    """(checkpointed call, the callee gradient's report), bound for the
    first call (enclosing loops at their first iteration) when this one is."""

    loops: list = field(default_factory=list)
    """(location, local, reason) per top-level loop the reverse visits:
    reversed loop-locally (each iteration right after its forward,
    `cache/loop_local.py`) or as a whole, and why."""

    runs: bool = True
    """False when bound as a callee whose call runs no time for the bound
    arguments (a loop around it has no iteration)."""

    revolves: list = field(default_factory=list)
    """(revolve call, RevolveStats) per time loop reversed by the binomial
    schedule, when bound (the callee report of such a call is bound for
    one step: what its gradient tapes each time it runs)."""

    parallel_loops: list = field(default_factory=list)
    """ParallelLoop per loop marked parallel, primal's then gradient's."""

    budgets: list = field(default_factory=list)
    """(budget check, revolve call) per time loop checkpointed under a byte
    limit with revolve as an option (`ad.raise_if {ad.checkpoint_budget}`,
    transforms/checkpoint_loops.py)."""

    schedules: list = field(default_factory=list)
    """ScheduleChoice per budget, when bound: which schedule runs and why."""

    def link_callees(self, reports: dict) -> None:  # type: ignore[type-arg]
        self.callees = [(call, reports[name]) for call, name in self.checkpointed if name in reports]

    @classmethod
    def from_plan(cls, plan: CachePlan, *, gradient_name: str, primal_name: str,
                  policy: str, shared_tapes: Sequence[Sequence[SSAValue]] = ()) -> CacheReport:
        """`shared_tapes`: groups of taped values that the gradient pushes on
        one tape (the reverse builder's `shared_tapes`)."""
        group_of = {v: k for k, group in enumerate(shared_tapes) for v in group}
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
            reason = _with_residual_note(value, d.reason)
            if value in group_of:
                others = [w for w in shared_tapes[group_of[value]] if w is not value]
                reason += ("; shares one tape with " + ", ".join(
                    f"{_label(w, value_location(w))} at {value_location(w) or '?'}" for w in others)
                    + " (another branch of a choice that runs once: one of them is pushed)")
            entries.append(
                CacheEntry(
                    value=_label(value, loc),
                    op=_describe(value),
                    decision=d.kind,
                    location=loc,
                    reason=reason,
                    dtype=str(value.type),
                    element_bytes=size,
                    factors=_loop_factors(value),
                    tape_group=group_of.get(value),
                )
            )
        for d in plan.memory:
            call, mem = d.need.op, d.need.memref
            loc = op_location(call)
            mtype = mem.type
            assert isinstance(mtype, MemRefType)
            entries.append(CacheEntry(
                value=_label(mem, value_location(mem)),
                op=f"memory of {call.name} @{call.callee.root_reference.data}"  # type: ignore[attr-defined]
                   if hasattr(call, "callee") else call.name,
                decision=d.kind,
                location=loc,
                reason=d.reason,
                dtype=str(mtype.element_type),
                element_bytes=byte_size(mtype.element_type),
                factors=(*_loop_factors_of_block(call.parent_block()),
                         LoopFactor("size", memref=mem)),
            ))
        loops = [(d.location, d.local, d.reason) for d in plan.loops]
        return cls(gradient_name, primal_name, policy, entries,
                   list(plan.top_block.args), loops=loops, budgets=_budget_checks(plan.top_block))

    # -- evaluation for concrete arguments ----------------------------------------

    def bind(self, args: Sequence[object]) -> CacheReport:
        """The report with `count` and `bytes` evaluated for these primal
        arguments (numpy arrays give their shapes; ints their values)."""
        env = dict(zip(self.argument_values, args))
        entries = []
        for e in self.entries:
            times = count(e.factors, env)
            nbytes = 0 if e.decision not in TAPED else (None if times is None else times * e.element_bytes)
            entries.append(replace(e, count=times, bytes=nbytes))
        callees = []
        revolves = []
        for call, report in self.callees:
            values, runs = _call_arguments(call, env)
            stats = RevolveStats.of(call, values)
            if stats is not None:
                revolves.append((call, stats))
                runs = runs and stats.steps > 0
                values = [*values[:2], _plus(values[1], values[3]), *values[3:]]  # one step
            callees.append((call, replace(report.bind(values), runs=runs)))
        schedules = [ScheduleChoice.of(check, call, env, revolves, callees) for check, call in self.budgets]
        return replace(self, entries=entries, bound=True, callees=callees, revolves=revolves,
                       schedules=[c for c in schedules if c is not None])

    @property
    def recompute_factor(self) -> int:
        """How many times the most recomputed code runs forward per gradient
        call: 1 without checkpoints; each level of checkpointed calls adds one
        (the forward sweep runs the callee, its gradient reruns it); a
        revolve loop's step runs its repetitions plus its taped rerun."""
        # A revolve call's step runs forward up to runs_per_step times: its
        # advances (the forward sweep's included) and its taped rerun.
        revolve = {call: st for call, st in self.revolves}
        return 1 + max(((revolve[call].runs_per_step - 2 if call in revolve else 0) + r.recompute_factor
                        for call, r in self.callees if r.runs), default=0)

    @property
    def peak_taped_bytes(self) -> int | None:
        """Bytes held on tapes at most at once: this gradient's, plus the
        largest of the callee gradients' (one runs at a time; each frees its
        tape when it returns), for the bound arguments."""
        own = self.taped_bytes
        inner = [r.peak_taped_bytes for _, r in self.callees if r.runs]
        snapshots = [st.snapshot_bytes for _, st in self.revolves]
        if own is None or any(b is None for b in [*inner, *snapshots]):
            return None
        return own + sum(snapshots) + max(inner, default=0)  # type: ignore[arg-type,type-var]

    @property
    def taped_bytes(self) -> int | None:
        """Total bytes taped per call for the bound arguments (`bind`); None
        before binding, or where a count is unknown (a while loop's
        iterations): `taped_bytes_formula` is the formula then."""
        taped = [e for e in self.entries if e.decision in TAPED]
        if self.bound and all(e.bytes is not None for e in taped):
            return sum(max(e.bytes for e in tape) for tape in self._tapes())  # type: ignore[misc,type-var]
        return None

    def _tapes(self) -> list[list[CacheEntry]]:
        """The taped entries, one list per tape (a shared tape's entries
        together)."""
        tapes: list[list[CacheEntry]] = []
        shared: dict[int, list[CacheEntry]] = {}
        for e in self.entries:
            if e.decision not in TAPED:
                continue
            if e.tape_group is None:
                tapes.append([e])
            elif e.tape_group in shared:
                shared[e.tape_group].append(e)
            else:
                shared[e.tape_group] = [e]
                tapes.append(shared[e.tape_group])
        return tapes

    @property
    def taped_bytes_formula(self) -> str:
        """Total bytes taped per call as a formula of the arguments' sizes
        (triangular nests as sums over the outer loop's iterations)."""
        terms = [tape[0].bytes_text if len(tape) == 1 else "max(" + ", ".join(e.bytes_text for e in tape) + ")"
                 for tape in self._tapes()]
        return " + ".join(terms) or "0"

    # -- output -------------------------------------------------------------------

    def __str__(self) -> str:
        from adpasses.dialects.ad import CHECKPOINT_BUDGET_ATTR

        lines = [f"cache report for @{self.gradient} (gradient of @{self.primal}, policy {self.policy})"]
        width = max([len(e.value) for e in self.entries] + [4])
        for e in self.entries:
            amount = f"{e.dtype} x {e.count_text}" if e.decision in TAPED else e.dtype
            if e.decision in TAPED and e.bytes is not None:
                amount += f" = {e.bytes} bytes"
            lines.append(
                f"  {e.decision:<9} {e.value:<{width}}  {amount:<24} {e.location or '?'}  {e.op}: {e.reason}"
            )
        total = self.taped_bytes
        lines.append(f"  taped bytes: {self.taped_bytes_formula}" if total is None else
                     f"  taped bytes: {total} = {self.taped_bytes_formula}")
        for where, local, reason in self.loops:
            how = "loop-local reverse" if local else "reversed after the forward loop"
            lines.append(f"  loop at {where}: {how}: {reason}")
        chosen = {call.callee for _, call in self.budgets} if self.schedules else set()  # type: ignore[attr-defined]
        for call, report in self.callees:
            where = op_location(call) or call.name
            taped = report.taped_bytes
            if not report.runs and call.callee in chosen:  # type: ignore[attr-defined]
                continue  # the other schedule of a loop whose choice is shown below
            if not report.runs:
                lines.append(f"  checkpoint @{call.callee.root_reference.data} at {where}: not called "
                             "for these arguments (" + ("no step for the binomial schedule" if _is_revolve(call)
                                                        else "no segment: one, or another schedule") + ")")
                continue
            lines.append(f"  checkpoint @{call.callee.root_reference.data} at {where}: recomputed by "
                         f"@{report.gradient}, which tapes "
                         + (f"{taped} bytes per call (its first)" if taped is not None else
                            report.taped_bytes_formula + " bytes per call"))
        for call, st in self.revolves:
            if not st.steps:
                continue
            where = op_location(call) or call.name
            lines.append(f"  revolve loop at {where}: {st.steps + 1 if st.steps else 0} steps, "
                         f"{st.snapshots} snapshots of "
                         + (f"{st.state_bytes} bytes = {st.snapshot_bytes} bytes" if st.state_bytes is not None
                            else "unknown size")
                         + f"; {st.recomputed_steps} steps recomputed in the reverse sweep "
                         f"(each step runs forward at most {st.runs_per_step} times)")
        lines += [f"  {choice.text()}" for choice in self.schedules]
        if not self.bound:
            for check, call in self.budgets:
                lines.append(f"  schedule of the loop at {op_location(call) or call.name} under a limit of "
                             f"{check.attributes[CHECKPOINT_BUDGET_ATTR].value.data} bytes: chosen when the "
                             "gradient runs, from the trip count, the state's and one step's bytes ("
                             + ("no checkpointing, sqrt segments or revolve, whichever fits"
                                if len(check.operands) > 2 else "no checkpointing or revolve")
                             + "; a MemoryError when none does)")
        if self.callees:
            peak = self.peak_taped_bytes
            lines.append(f"  recompute factor: {self.recompute_factor} (forward runs of the checkpointed code)"
                         + (f"; peak taped bytes: {peak}" if peak is not None else ""))
        if self.parallel_loops:
            lines.append("  parallel loops:")
            for p in self.parallel_loops:
                how = "parallel" if p.parallel else "serial"
                lines.append(f"    {p.sweep}: {p.mark} loop at {p.location}: {how}: {p.reason}")
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
                    "tape_group": e.tape_group,
                }
                for e in self.entries
            ],
            "taped_bytes": self.taped_bytes,
            "taped_bytes_formula": self.taped_bytes_formula,
            "checkpoints": [{"callee": call.callee.root_reference.data, "location": op_location(call),
                             "report": report.to_dict()} for call, report in self.callees],
            "recompute_factor": self.recompute_factor,
            "revolves": [{"location": op_location(call), "steps": st.steps + 1 if st.steps else 0,
                          "snapshots": st.snapshots, "state_bytes": st.state_bytes,
                          "snapshot_bytes": st.snapshot_bytes, "recomputed_steps": st.recomputed_steps,
                          "runs_per_step": st.runs_per_step} for call, st in self.revolves],
            "peak_taped_bytes": self.peak_taped_bytes,
            "schedules": [c.to_dict() for c in self.schedules],
            "loops": [{"location": where, "loop_local": local, "reason": reason}
                      for where, local, reason in self.loops],
            "parallel_loops": [{"sweep": p.sweep, "location": p.location, "mark": p.mark,
                                "parallel": p.parallel, "reason": p.reason} for p in self.parallel_loops],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)


@dataclass(frozen=True)
class RevolveStats:
    """A time loop reversed by the binomial schedule, for bound arguments:
    the revolve call's `steps` (the loop's N - 1; its last step is taped
    as a plain iteration), the `snapshots` it holds, the bytes of one state
    (the arrays its steps overwrite, 8 per carried value), the steps the
    reverse sweep recomputes (adpasses/cache/revolve.py) and how many times
    a step runs forward at most (its repetitions, plus its taped run)."""

    steps: int
    snapshots: int
    state_bytes: int | None
    recomputed_steps: int
    runs_per_step: int

    @property
    def snapshot_bytes(self) -> int | None:
        return None if self.state_bytes is None else self.snapshots * self.state_bytes

    @staticmethod
    def of(call: Operation, values: list[object]) -> RevolveStats | None:
        from adpasses.cache.revolve import repetitions, reverse_advances
        from adpasses.dialects.ad import REVOLVE_ATTR

        attr = call.attributes.get(REVOLVE_ATTR)
        if attr is None:
            return None
        asked, lo, hi, step = values[:4]
        if not all(isinstance(x, (int, np.integer)) for x in (asked, lo, hi, step)) or step <= 0:
            return None
        n = max(0, -(-(int(hi) - int(lo)) // int(step)))
        whole = n + 1 if n else 0
        c = max(1, min(int(asked), n + 1)) if n else 0  # no step: no slot (rules/revolve.py)
        state: int | None = 8 * attr.data["carried"].value.data  # type: ignore[attr-defined]
        for k in attr.data["state"].get_values():  # type: ignore[attr-defined]
            arr = values[k]
            if not isinstance(arr, np.ndarray) or arr.size == 0 and 0 not in arr.shape or state is None:
                state = None
                continue
            state += int(arr.size) * int(byte_size(call.operands[k].type.element_type))  # type: ignore[attr-defined]
        return RevolveStats(n, c, state, reverse_advances(whole, c) if whole else 0,
                            repetitions(whole, c) + 1 if whole else 1)


def _is_revolve(call: Operation) -> bool:
    from adpasses.dialects.ad import REVOLVE_ATTR

    return REVOLVE_ATTR in call.attributes


def _budget_checks(block) -> list:  # type: ignore[no-untyped-def]
    """(budget check, the revolve call after it) in a function's top block."""
    from adpasses.dialects.ad import CHECKPOINT_BUDGET_ATTR

    found = []
    check = None
    for op in block.ops:
        if CHECKPOINT_BUDGET_ATTR in op.attributes and op.name == "ad.raise_if":
            check = op
        elif check is not None and _is_revolve(op):
            found.append((check, op))
            check = None
    return found


@dataclass(frozen=True)
class ScheduleChoice:
    """Which checkpoint schedule a time loop under a byte `limit` runs for
    the bound arguments, and the numbers that chose it: `schedule` is
    `none` (the whole tape fits), `sqrt`, `revolve` or `too small` (the
    gradient raises MemoryError); `least`: the fewest bytes revolve needs
    (one snapshot and two steps' tapes); `sqrt_bytes`: what the sqrt
    segments would hold (None when revolve was asked for)."""

    location: str | None
    limit: int
    schedule: str
    least: int
    sqrt_bytes: int | None
    snapshots: int
    state_bytes: int | None

    @staticmethod
    def of(check: Operation, call: Operation, env: dict, revolves: list,  # type: ignore[type-arg]
           callees: list) -> ScheduleChoice | None:  # type: ignore[type-arg]
        from adpasses.dialects.ad import CHECKPOINT_BUDGET_ATTR

        limit = check.attributes[CHECKPOINT_BUDGET_ATTR].value.data  # type: ignore[attr-defined]
        cond, *values = (_evaluate(v, env) for v in check.operands)
        if cond is None or any(v is None or isinstance(v, np.ndarray) for v in values):
            return None
        least = int(values[0])
        sqrt_bytes = int(values[1]) if len(values) > 1 else None
        stats = next((st for c, st in revolves if c is call), None)
        if bool(cond):
            schedule = "too small"
        elif stats is not None and stats.steps:
            schedule = "revolve"
        elif any(c is not call and c.callee == call.callee and r.runs for c, r in callees):  # type: ignore[attr-defined]
            schedule = "sqrt"
        else:
            schedule = "none"
        return ScheduleChoice(op_location(call), int(limit), schedule, least, sqrt_bytes,
                              stats.snapshots if stats else 0, stats.state_bytes if stats else None)

    def text(self) -> str:
        head = f"schedule of the loop at {self.location or '?'} under a limit of {self.limit} bytes: "
        sqrt = f"sqrt segments would hold {self.sqrt_bytes} bytes" if self.sqrt_bytes is not None else None
        if self.schedule == "none":
            return head + "no checkpointing (the loop's whole tape fits)"
        if self.schedule == "sqrt":
            return head + f"sqrt segments (they hold {self.sqrt_bytes} bytes <= {self.limit})"
        if self.schedule == "revolve":
            why = f" ({sqrt} > {self.limit})" if sqrt else ""
            return (head + f"binomial (revolve), {self.snapshots} snapshots of {self.state_bytes} bytes{why}; "
                    f"it needs at least {self.least} bytes (one snapshot and two steps' tapes)")
        return (head + f"none fits: revolve needs at least {self.least} bytes (one snapshot and two "
                f"steps' tapes)" + (f", {sqrt}" if sqrt else "") + "; the gradient raises MemoryError")

    def to_dict(self) -> dict:  # type: ignore[type-arg]
        return {"location": self.location, "limit": self.limit, "schedule": self.schedule,
                "least_bytes": self.least, "sqrt_bytes": self.sqrt_bytes, "snapshots": self.snapshots,
                "state_bytes": self.state_bytes}


def _plus(a: object, b: object) -> object:
    return a + b if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)) else a


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
    return _loop_factors_of_block(home_block(value))


def _loop_factors_of_block(block) -> tuple[LoopFactor, ...]:  # type: ignore[no-untyped-def]
    factors: list[LoopFactor] = []
    op = block.parent_op()
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


def _call_arguments(call: Operation, env: dict[SSAValue, object]) -> tuple[list[object], bool]:
    """The values of a call's operands for the bound arguments, with the
    loops around the call at their first iteration (for a checkpointed
    segment: the first, full-length segment): arrays for memrefs (of the
    evaluated shape for local allocations), ints for index values."""
    env = dict(env)
    op = call.parent_op()
    loops = []
    while op is not None and not isinstance(op, func.FuncOp):
        loops.append(op)
        op = op.parent_op()
    runs = True
    for loop in reversed(loops):
        counted = counted_loop(loop)
        if counted is not None:
            env[counted[0]] = _evaluate(counted[1], env)
            bounds = trip_bounds(loop)
            if bounds is not None:
                lb, ub = _evaluate(bounds[0], env), _evaluate(bounds[1], env)
                if lb is not None and ub is not None and not isinstance(lb, np.ndarray) \
                        and not isinstance(ub, np.ndarray) and ub <= lb:
                    runs = False
    values: list[object] = []
    for v in call.operands:
        if v in env:
            values.append(env[v])
        elif isinstance(v.type, MemRefType):
            shape = [_allocated_size(v, d, env) for d in range(len(v.type.get_shape()))]
            values.append(np.empty(0) if any(s is None for s in shape) else
                          np.lib.stride_tricks.as_strided(np.empty(1), shape=tuple(int(s) for s in shape),
                                                          strides=(0,) * len(shape)))
        else:
            values.append(_evaluate(v, env))
    return values, runs
