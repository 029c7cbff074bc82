"""Building one tangent function: the primal body with tangents beside it.

Forward mode runs one sweep: every op of the primal is emitted (a clone),
and right after each op that computes a value carrying a derivative, its
tangent, through the op's forward rule (`adpasses.forward.rules`). Values
and memory that the activity analysis finds inactive get no tangent.

The generated `func.func` takes the operands of `ad.fwddiff` (each primal
argument, then `width` tangents after a dup/dupnoneed one) and returns,
per result of the primal, the primal result unless it is `dupnoneed`, then
`width` tangents if it is dup/dupnoneed. Vector mode (`width` N) keeps N
*lanes*: every value that carries a derivative has N tangents, each of its
primal's type; a memref's lanes are N memrefs of its sizes. Rules are
written once per lane; the partials of a scalar op are emitted once and
shared by the lanes (`ops.partials.emit_tangents`).

Safety: each memref tangent argument is checked against its primal at
entry (`ad.shadow_check`: equal sizes, else the call stops with a
ValueError). From then on every tangent memref has exactly its primal's
sizes (a tangent of a local allocation is allocated with its primal's
sizes, the tangent of a view is the same view of the tangent), so a
tangent access repeats, at the primal's indices, an access of the same
sizes; it keeps its own bounds check unless the primal access is in bounds
by a fact about values (`ad.unchecked` copied, see `access_attributes`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FloatAttr, IndexType, IntegerAttr, MemRefType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator

from adpasses.analysis.activity import ActivityAnalysis
from adpasses.core.diagnostics import error_at
from adpasses.core.types import is_float_type, is_memref_type
from adpasses.dialects.ad import (
    TWIN_END_ATTR,
    TWIN_ID_ATTR,
    TWIN_OF_ATTR,
    UNCHECKED_ATTR,
    ShadowCheckOp,
    fwddiff_result_types,
)

if TYPE_CHECKING:
    from adpasses.forward.rules import ForwardRuleTables

TANGENT_ACTIVITIES = ("dup", "dupnoneed")


class TangentBuilder:
    """Builds the tangent function of `primal` (a prepared copy: calls
    inlined, affine lowered) for forward activities `arg_activity` /
    `ret_activity` and `width` lanes. Rules call the methods below."""

    def __init__(
        self,
        primal: func.FuncOp,
        activity: ActivityAnalysis,
        name: str,
        arg_activity: Sequence[str],
        ret_activity: Sequence[str],
        width: int,
        rules: ForwardRuleTables,
    ):
        self.primal = primal
        self.activity = activity
        self.name = name
        self.arg_activity = list(arg_activity)
        self.ret_activity = list(ret_activity)
        self.width = width
        self.rules = rules  # handed in: the engine does not import the rules
        self.vmap: dict[SSAValue, SSAValue] = {}
        self.tangents: dict[SSAValue, list[SSAValue]] = {}
        self.builder: Builder | None = None
        # Twin ids new here follow those the inner gradient (forward over
        # reverse) already uses.
        self._next_twin = 1 + max((_int_attr(op, name) for op in primal.walk()
                                   for name in (TWIN_ID_ATTR, TWIN_OF_ATTR)), default=-1)

    # -- the function ----------------------------------------------------------

    def build(self) -> func.FuncOp:
        ptype = self.primal.function_type
        n = self.width
        inputs: list[Attribute] = []
        for ty, act in zip(ptype.inputs.data, self.arg_activity):
            inputs.append(ty)
            if act in TANGENT_ACTIVITIES:
                inputs += [ty] * n
        outputs = fwddiff_result_types(ptype, self.ret_activity, n)
        function = func.FuncOp(self.name, (inputs, outputs), arg_attrs=self._argument_attributes())
        function.location = self.primal.location
        block = function.body.block
        self.builder = Builder(InsertPoint.at_end(block))
        args = iter(block.args)
        checks: list[tuple[SSAValue, SSAValue]] = []
        for arg, act in zip(self.primal.body.block.args, self.arg_activity):
            new = next(args)
            new.name_hint = arg.name_hint
            self.vmap[arg] = new
            if act not in TANGENT_ACTIVITIES:
                continue
            lanes = [next(args) for _ in range(n)]
            for k, lane in enumerate(lanes):
                if arg.name_hint:
                    lane.name_hint = f"d{arg.name_hint}" + (f"_{k}" if n > 1 else "")
                if is_memref_type(arg.type):
                    checks.append((new, lane))
            self.tangents[arg] = lanes
        for primal, lane in checks:
            # First thing: every tangent memref has its primal's sizes.
            self.insert(ShadowCheckOp(primal, lane)).location = self.primal.location
        terminator = self.emit_ops(self.primal.body.block)
        assert isinstance(terminator, func.ReturnOp)
        results: list[SSAValue] = []
        for value, act in zip(terminator.arguments, self.ret_activity):
            if act != "dupnoneed":
                results.append(self.primal_value(value))
            if act in TANGENT_ACTIVITIES:
                results += self.result_tangent(value, terminator)
        ret = self.insert(func.ReturnOp(*results))
        ret.location = terminator.location
        return function

    def _argument_attributes(self) -> ArrayAttr | None:
        """The primal's argument attributes (e.g. ad.noalias) on each primal
        argument and on its tangents, which are as separate as their primal."""
        attrs = self.primal.arg_attrs
        if attrs is None:
            return None
        result: list[DictionaryAttr] = []
        for d, act in zip(attrs.data, self.arg_activity):
            result.append(d)
            if act in TANGENT_ACTIVITIES:
                result += [d] * self.width
        return ArrayAttr(result)

    # -- walking the primal ----------------------------------------------------

    def emit_ops(self, block: Block) -> Operation | None:
        """Emit every op of the primal `block` with its tangents at the
        current insertion point; return the block's terminator, not emitted
        (the rule of the parent op builds it, with the tangents it carries)."""
        terminator = None
        for op in block.ops:
            if op.has_trait(IsTerminator) and op is block.last_op:
                terminator = op
                continue
            self.emit_op(op)
        return terminator

    def emit_op(self, op: Operation) -> None:
        rule = self.rules.rule_for(op)
        if rule is not None:
            rule.forward(self, op)
            return
        if self.carries_derivatives(op):
            raise error_at(
                op,
                "has no forward-mode rule, but it computes a value that carries a derivative; "
                "rewrite it with supported ops (scf.for/scf.while/scf.if, memref.load/store, "
                "arith/math ops) or mark the inputs that reach it const",
            )
        self.clone(op)

    def carries_derivatives(self, op: Operation) -> bool:
        """Whether `op` must have tangents: it is active (writes active
        memory, computes an active value, contains such ops) or makes a
        memref of active memory."""
        if self.activity.is_active_op(op):
            return True
        return any(is_memref_type(r.type) and self.activity.is_active_memory(r) for r in op.results)

    # -- what rules use --------------------------------------------------------

    def insert(self, op: Operation) -> Operation:
        assert self.builder is not None
        return self.builder.insert(op)

    def clone(self, op: Operation, overrides: dict[SSAValue, SSAValue] | None = None) -> Operation:
        """`op` (with its regions) over the primal values; its results
        become the primal values of `op`'s. `overrides` replaces operands
        (a lane's memref for the primal's: the tangent of a view)."""
        if overrides:
            mapping = dict(self.vmap)
            mapping.update(overrides)
            new = op.clone(value_mapper=mapping)
        else:
            new = op.clone(value_mapper=self.vmap)
        return self.insert(new)

    def primal_value(self, value: SSAValue) -> SSAValue:
        return self.vmap[value]

    def map_results(self, op: Operation, new: Operation, count: int | None = None) -> None:
        """The first `count` results of `new` stand for `op`'s results."""
        for old, r in zip(op.results, new.results[: count if count is not None else len(op.results)]):
            r.name_hint = old.name_hint
            self.vmap[old] = r

    def tangent(self, value: SSAValue) -> list[SSAValue] | None:
        """The lanes of `value`'s tangent, or None if it has none."""
        return self.tangents.get(value)

    def has_tangent(self, value: SSAValue) -> bool:
        return value in self.tangents

    def set_tangent(self, value: SSAValue, lanes: Sequence[SSAValue]) -> None:
        assert len(lanes) == self.width
        for k, lane in enumerate(lanes):
            # a clone (of a view, an allocation) kept its primal's name
            if value.name_hint and lane.name_hint in (None, value.name_hint):
                lane.name_hint = f"d{value.name_hint}" + (f"_{k}" if self.width > 1 else "")
        self.tangents[value] = list(lanes)

    def tangent_or_zero(self, value: SSAValue) -> list[SSAValue]:
        """The tangent of a float value; zeros if it carries no derivative."""
        lanes = self.tangents.get(value)
        if lanes is not None:
            return lanes
        if not is_float_type(value.type):
            raise error_at(value.owner if isinstance(value.owner, Operation) else self.primal,
                           f"has no tangent for a value of type {value.type}")
        zero = self.const(0, value.type)
        return [zero] * self.width

    def result_tangent(self, value: SSAValue, ret: Operation) -> list[SSAValue]:
        """The lanes of a returned value's tangent: a float's, or for a
        memref the tangent of its memory (the returned view of a tangent
        argument or of a tangent allocation), or fresh zeros when its memory
        carries no derivative (each lane its own buffer: the caller owns
        returned allocations)."""
        if not is_memref_type(value.type):
            return self.tangent_or_zero(value)
        lanes = self.memory_tangent(value, ret)
        if lanes is not None:
            return lanes
        mtype = value.type
        assert isinstance(mtype, MemRefType)
        primal = self.primal_value(value)
        sizes = self.sizes_of(primal)
        dynamic = [s for s, n in zip(sizes, mtype.get_shape()) if n < 0]
        fresh = []
        for _ in range(self.width):
            lane = self.insert(memref.AllocOp(dynamic, [], MemRefType(mtype.element_type,
                                                                      mtype.get_shape()))).results[0]
            self.zero_fill(lane)
            if lane.type != mtype:  # a strided result type: the identity layout cast to it
                lane = self.insert(memref.CastOp.get(lane, mtype)).results[0]
            fresh.append(lane)
        return fresh

    def memory_tangent(self, value: SSAValue, at: Operation) -> list[SSAValue] | None:
        """The lanes of the tangent of memref `value` if its memory carries
        derivatives (None if it does not); an error at `at` if it should
        have one but none was built (memory the rules cannot follow)."""
        if not self.activity.is_active_memory(value):
            return None
        lanes = self.tangents.get(value)
        if lanes is None:
            raise error_at(
                at,
                "uses a memref whose memory carries derivatives, but forward mode cannot "
                "follow where it comes from (a memref carried through a loop or an if, "
                "returned by a call, or a global); pass it as an argument instead",
            )
        return lanes

    def is_active(self, value: SSAValue) -> bool:
        return self.activity.is_active(value)

    def const(self, x: float, type_: Attribute) -> SSAValue:
        if is_float_type(type_):
            op = arith.ConstantOp(FloatAttr(float(x), type_))
        else:
            op = arith.ConstantOp(IntegerAttr(int(x), type_))
        return self.insert(op).results[0]

    def index(self, n: int) -> SSAValue:
        return self.const(n, IndexType())

    @contextmanager
    def at_end(self, block: Block) -> Iterator[None]:
        """Insert into `block` (a region of a rebuilt op) meanwhile."""
        saved = self.builder
        self.builder = Builder(InsertPoint.at_end(block))
        try:
            yield
        finally:
            self.builder = saved

    def sizes_of(self, value: SSAValue) -> list[SSAValue]:
        """The sizes of memref `value`, as index values."""
        mtype = value.type
        assert isinstance(mtype, MemRefType)
        return [self.index(s) if s >= 0 else self.insert(memref.DimOp(value, self.index(d))).results[0]
                for d, s in enumerate(mtype.get_shape())]

    def loop_nest(self, sizes: Sequence[SSAValue],
                  body: Callable[[list[SSAValue]], None]) -> None:
        """for i0 < sizes[0], i1 < sizes[1], ...: body([i0, i1, ...])."""
        self._loop_nest(list(sizes), [], body)

    def _loop_nest(self, sizes: list[SSAValue], indices: list[SSAValue],
                   body: Callable[[list[SSAValue]], None]) -> None:
        if not sizes:
            body(indices)
            return
        block = Block(arg_types=[IndexType()])
        loop = scf.ForOp(self.index(0), sizes[0], self.index(1), [], [block])
        self.insert(loop)
        with self.at_end(block):
            self._loop_nest(sizes[1:], [*indices, block.args[0]], body)
            self.insert(scf.YieldOp())

    def zero_fill(self, lane: SSAValue) -> None:
        """Every element of memref `lane` set to zero (a fresh tangent)."""
        mtype = lane.type
        assert isinstance(mtype, MemRefType)
        zero = self.const(0, mtype.element_type)
        self.loop_nest(self.sizes_of(lane),
                       lambda idx: self.insert(memref.StoreOp.get(zero, lane, idx)))

    def access_attributes(self, primal_access: Operation, tangent_access: Operation) -> None:
        """Attributes of a tangent access that repeats `primal_access` (the
        clone just emitted, in the same block) at the same indices on memory
        of the same sizes: the primal's (e.g. `ad.unchecked` of a tape
        access, `ad.py_index`), except the reverse pipeline's twin tags,
        which name the primal's twins; and the primal access as its twin
        (`ad.twin_of`), so that `ad-elide-shadow-checks` drops the tangent
        access's check while the primal's is there (docs/forward_mode.md)."""
        for key, attr in primal_access.attributes.items():
            if key not in (TWIN_ID_ATTR, TWIN_OF_ATTR, TWIN_END_ATTR):
                tangent_access.attributes[key] = attr
        if UNCHECKED_ATTR in tangent_access.attributes:
            return
        twin = primal_access.attributes.get(TWIN_ID_ATTR)
        if twin is None or TWIN_END_ATTR in primal_access.attributes:
            twin = IntegerAttr(self._next_twin, 64)
            self._next_twin += 1
            if TWIN_END_ATTR in primal_access.attributes:
                return  # one end of a hoisted check: its group is not this access alone
            primal_access.attributes[TWIN_ID_ATTR] = twin
        tangent_access.attributes[TWIN_OF_ATTR] = twin


def _int_attr(op: Operation, name: str) -> int:
    attr = op.attributes.get(name)
    return attr.value.data if isinstance(attr, IntegerAttr) else -1
