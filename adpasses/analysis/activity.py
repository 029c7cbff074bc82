"""Activity analysis: which values and memory carry derivatives.

A float value is *active* when it is *varied* (depends on an active input)
and *useful* (influences an active output): the definition of Tapenade,
Enzyme-MLIR and Clad. Integer, index and boolean values are never active.

Memory is tracked per memory object (a function argument or an allocation,
seen through views, see `memref_views`): it is varied when it is a `dup`
argument or a varied value is stored into it, and useful when it is a `dup`
argument or a useful value is loaded from it. Active memory needs a shadow.
Memory objects that one memref value may address together are one class:
the operands and result of an `arith.select` between memrefs
(`memref_views.chosen_sources`), the memrefs carried through a loop or an if, and
all memrefs an op the analysis does not understand touches.

Both directions are plain fixpoints over the whole function; values cross
region boundaries along the edges of the region-flow table
(`adpasses.core.region_flow`: operands to block arguments, terminator operands
to results and to the next iteration's block arguments), forward for
`varied` and backward for `useful`, so a loop-carried value that starts
constant but is updated with an active value becomes active. Control
operands (conditions, switch values, loop bounds) are not data. Calls must
have been inlined (the reverse pass does), except checkpointed calls
(`ad.checkpoint`) and calls a custom rule differentiates (`ad.custom_call`):
their results and the memory of the memref arguments
the callee may write (`memory_writes.written_arguments`) depend on all
they use, and all they use is useful if anything they produce is.

The analysis is total: every op is either understood (the ops above,
loads, stores, copies, allocations, views, `memref.dim`, and pure ops
without regions or memrefs, whose float results depend on their float
operands) or *unknown*. Unknown ops are treated conservatively (their
results and the memory they touch depend on everything they use, and
everything they use is useful if anything they produce is), and
`check_understood` reports one that touches active data as an error, so an
op the differentiator cannot see through is never silently a zero
derivative.

Float bits: an integer made by `arith.bitcast` of a varied float (and any
integer computed from such bits, stored and loaded, or carried through
loops) is tracked in `bits`. An `arith.bitcast` of such bits back to a float
is varied: the rule tables carry the derivative through a plain round trip
(float -> int -> same float type) and report any other one.

A `const` memref argument is inactive even if it may alias a `dup` one: the
caller declared it so (as in Enzyme); the Python API checks real overlap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.dialects import arith, func, memref
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.traits import ConstantLike, IsTerminator, is_side_effect_free

from adpasses.core.custom_rules import no_body_advice
from adpasses.core.diagnostics import CompileError, error_at
from adpasses.core.effects import is_pure, only_prints
from adpasses.core.ir_walk import nested_ops
from adpasses.core.region_flow import region_flow
from adpasses.dialects.ad import CUSTOM_CALL_ATTR
from adpasses.analysis.memref_views import (
    ALLOCATION_OPS,
    chosen_sources,
    is_view_result,
    memory_object,
)
from adpasses.core.structured_ops import structured_op
from adpasses.core.types import is_float_aggregate, is_float_type, is_int_like, is_memref_type
from adpasses.dialects.ad import (
    CHECKPOINT_ATTR,
    BroadcastOp,
    KeepOp,
    ShadowCheckOp,
    OverlapsOp,
    SelfOverlapsOp,
    SizeMatchOp,
    TapeCreateOp,
    TapeFreeOp,
    TapePopOp,
    TapePushOp,
    TapeReserveOp,
)

MEMREF_OPS_UNDERSTOOD = (
    memref.LoadOp,
    memref.StoreOp,
    memref.CopyOp,
    memref.AllocOp,
    memref.AllocaOp,
    memref.DeallocOp,
    memref.DimOp,
    memref.RankOp,
    memref.GetGlobalOp,
)
"""Memref ops whose effect on data the analysis models (views too)."""

AD_OPS_UNDERSTOOD = (ShadowCheckOp, SizeMatchOp, OverlapsOp, SelfOverlapsOp, KeepOp, BroadcastOp, TapeCreateOp,
                     TapeFreeOp, TapePushOp, TapeReserveOp, TapePopOp)
"""The `ad` ops of generated gradients (forward mode differentiates them:
forward over reverse). A tape is memory: a push stores into it, a pop
loads from it; checks (`ad.size_match` of a lowered matmul too) and keeps
move no data, nor does a reserve (room on a tape), nor `ad.overlaps` and
`ad.self_overlaps` (they compare addresses)."""

_MODELED = frozenset((*MEMREF_OPS_UNDERSTOOD, *AD_OPS_UNDERSTOOD))

ZERO_DERIVATIVE_CONVERSIONS = (arith.SIToFPOp, arith.UIToFPOp)
"""Integer -> float conversions: piecewise constant in any float the
integer was computed from, so float bits do not make their result varied."""


# What the propagation does with an op, decided once per op (`_classify`).
_INERT = 0  # moves no float data: views, allocations, dim, terminators, ...
_PURE = 1  # no regions, no memrefs: float results depend on operands
_REGION = 2  # a region op of the table: values flow along its edges
_LOAD, _STORE, _COPY, _BITCAST, _UNKNOWN = 3, 4, 5, 6, 7
_POP, _PUSH = 8, 9  # ad.tape.pop / push: a load from / a store into the tape
_CALL = 10  # a checkpointed or custom-rule func.call, or a structured op on memrefs
# (core/structured_ops.py: linalg.matmul): results and written memory depend on all it uses


def is_checkpointed_call(op: Operation) -> bool:
    """A `func.call` the reverse sweep differentiates without inlining it
    (`ad.checkpoint`): its callee gets a gradient of its own."""
    return isinstance(op, func.CallOp) and CHECKPOINT_ATTR in op.attributes


def _floats(values: Iterable[SSAValue]) -> list[SSAValue]:
    return [v for v in values if is_float_type(v.type)]


def _memrefs(values: Iterable[SSAValue]) -> list[SSAValue]:
    return [v for v in values if is_memref_type(v.type)]


def round_trip_source(op: Operation) -> SSAValue | None:
    """For `arith.bitcast` of `arith.bitcast %x : F to iN` back to F: `%x`
    (the value is %x itself, so is its derivative); else None."""
    if not isinstance(op, arith.BitcastOp) or not is_float_type(op.result.type):
        return None
    inner = op.input
    if isinstance(inner, OpResult) and isinstance(inner.op, arith.BitcastOp):
        source = inner.op.input
        if source.type == op.result.type:
            return source
    return None


_PURE_CLASS: dict[type[Operation], bool] = {}


def _is_pure_op(op: Operation) -> bool:
    """No memory effects, or only printing (for an op without regions: a
    property of its class)."""
    if op.regions:
        return is_side_effect_free(op)
    cls = type(op)
    pure = _PURE_CLASS.get(cls)
    if pure is None:
        pure = _PURE_CLASS[cls] = is_pure(op) or only_prints(op)
    return pure


def _region_values(op: Operation) -> tuple[list[SSAValue], list[SSAValue]]:
    """For an op with regions: (values used inside but defined outside it,
    plus every value defined inside it), and the block arguments of its own
    regions (which only the op itself defines)."""
    outside: dict[SSAValue, None] = {}
    inside: list[SSAValue] = []
    own_args = [a for region in op.regions for block in region.blocks for a in block.args]
    nested = [inner for inner in op.walk() if inner is not op]
    nested_set = set(nested)
    for inner in nested:
        for region in inner.regions:
            for block in region.blocks:
                inside.extend(block.args)
        inside.extend(inner.results)
        for operand in inner.operands:
            owner = operand.op if isinstance(operand, OpResult) else operand.block.parent_op()
            if owner is not op and owner not in nested_set:
                outside[operand] = None
    return list(outside) + own_args + inside, own_args


class _MemoryClasses:
    """Union-find over memory objects (`memory_object` roots)."""

    def __init__(self) -> None:
        self.parent: dict[SSAValue, SSAValue] = {}

    def find(self, value: SSAValue) -> SSAValue:
        root = memory_object(value)
        path = []
        while self.parent.get(root, root) is not root:
            path.append(root)
            root = self.parent[root]
        for p in path:
            self.parent[p] = root
        return root

    def union(self, values: Iterable[SSAValue]) -> None:
        roots = [self.find(v) for v in values]
        for r in roots[1:]:
            if r is not roots[0]:
                self.parent[r] = roots[0]


class ActivityAnalysis:
    """Activity of every value, memory object and op of one function.

    `arg_activity` per argument: const/active/dup/dupnoneed; `ret_activity`
    per result: const/active (dup for a memref result). With `enabled=False` every float value and
    every `dup`/allocated float memory is treated as active (the baseline
    the benchmarks compare against).
    """

    def __init__(
        self,
        function: func.FuncOp,
        arg_activity: Sequence[str],
        ret_activity: Sequence[str],
        *,
        enabled: bool = True,
    ):
        self.function = function
        self.arg_activity = list(arg_activity)
        self.ret_activity = list(ret_activity)
        self.enabled = enabled
        self.varied: set[SSAValue] = set()
        self.useful: set[SSAValue] = set()
        self.varied_memory: set[SSAValue] = set()
        self.useful_memory: set[SSAValue] = set()
        self.bits: set[SSAValue] = set()
        """Integers that hold (functions of) the bits of a varied float."""
        self.bits_memory: set[SSAValue] = set()
        self._ops = nested_ops(function)[1:]  # without the function
        self._classes = _MemoryClasses()
        self._kind: dict[Operation, int] = {}
        self._link_list: dict[Operation, list[tuple[SSAValue, SSAValue]]] = {}
        self.unknown: list[Operation] = []
        """Ops the analysis does not understand (treated conservatively)."""
        self._unknown_set: set[Operation] = set()
        self._used: dict[Operation, list[SSAValue]] = {}
        """Per unknown op: operands, values used inside, values made inside."""
        self._produced: dict[Operation, list[SSAValue]] = {}
        """Per unknown op: its results and its regions' block arguments."""
        self._classify()
        self._seed()
        if enabled:
            order = _propagation_order(function)
            self._fixpoint(self._propagate_forward, order)
            self._fixpoint(self._propagate_backward, list(reversed(order)))
        else:
            self._everything_active()
        self._active_ops = self._compute_active_ops()

    # -- queries -------------------------------------------------------------

    def is_active(self, value: SSAValue) -> bool:
        """A float scalar that carries a derivative."""
        return value in self.varied and value in self.useful

    def memory_class(self, value: SSAValue) -> SSAValue:
        """The representative of the memory objects `value` may address."""
        return self._classes.find(value)

    def is_active_memory(self, value: SSAValue) -> bool:
        """A memref whose memory needs a shadow."""
        obj = self._classes.find(value)
        return obj in self.varied_memory and obj in self.useful_memory

    def is_active_op(self, op: Operation) -> bool:
        """Ops the reverse sweep must visit (see `_compute_active_ops`)."""
        return op in self._active_ops

    def describe(self, value: SSAValue) -> str:
        """`active`, `const`, `active memory` or `const memory`."""
        if is_memref_type(value.type):
            return "active memory" if self.is_active_memory(value) else "const memory"
        return "active" if self.is_active(value) else "const"

    def check_understood(self, mode: str = "reverse") -> None:
        """Raise a `CompileError` at the first op the analysis does not
        understand that touches active data (see the module docstring);
        `mode` (reverse, forward) names the differentiation in the message."""
        for op in self.unknown:
            if CUSTOM_CALL_ATTR in op.attributes:
                continue  # a call its custom rule differentiates (transforms/custom_calls.py)
            touched = self._touched_active(op)
            if touched is not None:
                raise self._unknown_error(op, touched, mode)

    # -- classification ----------------------------------------------------------

    def _understood(self, op: Operation, chooses_memory: bool) -> bool:
        cls = type(op)
        if cls in _MODELED or chooses_memory or is_view_result_op(op) or region_flow(op):
            return True
        if op.has_trait(IsTerminator):
            return True  # handled with its parent
        if not op.results and not op.regions and only_prints(op):
            return True  # a print (of numbers or arrays): reads, produces nothing with a derivative
        if op.regions or _memrefs(op.operands) or _memrefs(op.results):
            return False
        if any(is_float_aggregate(v.type) for v in (*op.operands, *op.results)):
            return False  # vectors of floats carry derivatives no rule propagates
        if cls is func.CallOp:
            return False
        return _is_pure_op(op)

    def _classify(self) -> None:
        """Unknown ops; memory classes (what one memref may address)."""
        classes = self._classes
        kind = self._kind
        for op in self._ops:
            if is_checkpointed_call(op) or CUSTOM_CALL_ATTR in op.attributes:
                self._classify_call(op)
                continue
            structured = structured_op(op)
            if structured is not None:
                # linalg.matmul: its output's contents depend on all it reads.
                kind[op] = _CALL
                self._used[op] = list(structured.reads(op))
                self._produced[op] = list(structured.writes(op))
                continue
            sources = chosen_sources(op)
            if not self._understood(op, sources is not None):
                self.unknown.append(op)
                self._unknown_set.add(op)
                kind[op] = _UNKNOWN
                inner, own_args = _region_values(op) if op.regions else ([], [])
                self._used[op] = [*op.operands, *inner]
                self._produced[op] = [*op.results, *own_args]
                classes.union(_memrefs([*self._used[op], *self._produced[op]]))
                continue
            if sources is not None:
                classes.union([op.results[0], *sources])
            flow = region_flow(op)
            links = flow.links(op) if flow is not None else []
            for a, b in links:
                if is_memref_type(a.type) and is_memref_type(b.type):
                    classes.union([a, b])
            if links:
                kind[op] = _REGION
                self._link_list[op] = links
            elif isinstance(op, memref.LoadOp):
                kind[op] = _LOAD
            elif isinstance(op, memref.StoreOp):
                kind[op] = _STORE
            elif isinstance(op, TapePopOp):
                kind[op] = _POP
            elif isinstance(op, TapePushOp):
                kind[op] = _PUSH
            elif isinstance(op, memref.CopyOp):
                kind[op] = _COPY
            elif isinstance(op, arith.BitcastOp):
                kind[op] = _BITCAST
            elif op.regions or _memrefs(op.operands) or _memrefs(op.results):
                kind[op] = _INERT
            else:
                kind[op] = _PURE
        # Float bits exist only where a float is bitcast to an integer.
        self._has_bits = any(
            isinstance(op, arith.BitcastOp) and is_float_type(op.input.type) for op in self._ops
        )

    def _classify_call(self, op: Operation) -> None:
        """A checkpointed call, or a call its custom rule differentiates:
        its results and the memory of the memref arguments its callee may
        write depend on everything it uses (the callee's own activity is
        decided when its gradient is built; a custom rule gives the
        cotangents itself). An array the callee only reads keeps its own
        activity, as it would if the call were inlined."""
        from adpasses.analysis.memory_writes import WriteEffects, written_arguments
        from xdsl.traits import SymbolTable

        assert isinstance(op, func.CallOp)
        self._kind[op] = _CALL
        module = self.function.parent_op()
        callee = SymbolTable.lookup_symbol(module, op.callee) if module is not None else None
        written = (written_arguments(WriteEffects(module), callee)
                   if isinstance(callee, func.FuncOp) else None)
        memrefs = [k for k, v in enumerate(op.operands) if is_memref_type(v.type)]
        if written is None:
            written = set(memrefs)
        self._used[op] = list(op.operands)
        self._produced[op] = [*op.results, *(op.operands[k] for k in memrefs if k in written)]

    # -- seeds -----------------------------------------------------------------

    def _seed(self) -> None:
        args = self.function.body.block.args
        for arg, act in zip(args, self.arg_activity):
            if act == "active" and is_float_type(arg.type):
                self.varied.add(arg)
                self.useful.add(arg)
            elif act in ("dup", "dupnoneed"):
                self.varied_memory.add(self._classes.find(arg))
                self.useful_memory.add(self._classes.find(arg))
        for op in self._ops:
            if isinstance(op, func.ReturnOp):
                for value, act in zip(op.arguments, self.ret_activity):
                    if act == "active":
                        self.useful.add(value)
                    elif act == "dup" and is_memref_type(value.type):
                        # A returned array's contents are an output: its seed enters its shadow.
                        self.useful_memory.add(self._classes.find(value))

    def _everything_active(self) -> None:
        """The baseline without analysis: every float that can depend on an
        input (not constants, not conversions of integers, not loads from
        const memory, which has no shadow) is active."""
        find = self._classes.find
        for op in self._ops:
            if isinstance(op, ALLOCATION_OPS) and is_float_type(op.results[0].type.element_type):
                self.varied_memory.add(find(op.results[0]))
                self.useful_memory.add(find(op.results[0]))
        for op in self._ops:
            if op in self._unknown_set:
                for m in _memrefs([*self._used[op], *self._produced[op]]):
                    self.varied_memory.add(find(m))
                    self.useful_memory.add(find(m))
            elif self._kind[op] is _CALL:
                self.varied.update(_floats(op.results))
        for op in self._ops:
            if isinstance(op, memref.LoadOp) and find(op.memref) not in self.varied_memory:
                continue
            for region in op.regions:
                for block in region.blocks:
                    self.varied.update(_floats(block.args))
            if op.has_trait(ConstantLike):
                continue
            if not op.regions and not isinstance(op, memref.LoadOp) and not _floats(op.operands):
                continue  # e.g. sitofp of an integer
            self.varied.update(_floats(op.results))
        for arg, act in zip(self.function.body.block.args, self.arg_activity):
            if act != "const" and is_float_type(arg.type):
                self.varied.add(arg)
        # Floats rebuilt from the bits of floats (arith.bitcast back).
        self._fixpoint(self._propagate_bits_only, self._ops)
        self.useful |= self.varied

    # -- propagation -------------------------------------------------------------

    @staticmethod
    def _fixpoint(step, ops: list[Operation]) -> None:  # type: ignore[no-untyped-def]
        changed = True
        while changed:
            changed = False
            for op in ops:
                changed |= step(op)

    def _mark(self, target: set[SSAValue], values: Iterable[SSAValue]) -> bool:
        changed = False
        for v in values:
            if v not in target and is_float_type(v.type):
                target.add(v)
                changed = True
        return changed

    def _mark_memory(self, target: set[SSAValue], values: Iterable[SSAValue]) -> bool:
        changed = False
        for v in values:
            obj = self._classes.find(v)
            if obj not in target:
                target.add(obj)
                changed = True
        return changed

    def _mark_bits(self, values: Iterable[SSAValue]) -> bool:
        changed = False
        for v in values:
            if v not in self.bits and is_int_like(v.type):
                self.bits.add(v)
                changed = True
        return changed

    def _any(self, target: set[SSAValue], values: Iterable[SSAValue]) -> bool:
        return any(v in target for v in values)

    def _propagate_bits_only(self, op: Operation) -> bool:
        """Float bits without the rest (for the `enabled=False` baseline)."""
        return self._propagate_bits(op, self.varied) if self._has_bits else False

    def _propagate_bits(self, op: Operation, varied: set[SSAValue]) -> bool:
        """Float bits through `op`; floats rebuilt from bits become varied."""
        bits = self.bits
        kind = self._kind[op]
        find = self._classes.find
        if kind is _BITCAST:
            assert isinstance(op, arith.BitcastOp)
            if is_float_type(op.input.type) and op.input in varied:
                return self._mark_bits([op.result])
            if op.input in bits:
                return self._mark_bits([op.result]) | self._mark(varied, [op.result])
            return False
        if kind is _STORE:
            if op.value in bits:  # type: ignore[attr-defined]
                return self._mark_memory(self.bits_memory, [op.memref])  # type: ignore[attr-defined]
            return False
        if kind is _LOAD:
            if find(op.memref) in self.bits_memory:  # type: ignore[attr-defined]
                return self._mark_bits(op.results)
            return False
        if kind is _COPY:
            if find(op.source) in self.bits_memory:  # type: ignore[attr-defined]
                return self._mark_memory(self.bits_memory, [op.destination])  # type: ignore[attr-defined]
            return False
        if kind is _REGION:
            changed = False
            for source, target in self._link_list[op]:
                if source in bits:
                    changed |= self._mark_bits([target])
            return changed
        if kind is _UNKNOWN or kind is _CALL:
            used, produced = self._used[op], self._produced[op]
            if self._any(bits, used):
                return (self._mark_bits(produced) | self._mark(varied, produced)
                        | self._mark_memory(self.bits_memory, _memrefs(used + produced)))
            return False
        if kind is _PURE and not isinstance(op, (arith.CmpiOp, arith.CmpfOp)):
            # Comparisons give booleans, not float bits.
            if self._any(bits, op.operands):
                changed = self._mark_bits(op.results)
                if not isinstance(op, ZERO_DERIVATIVE_CONVERSIONS):
                    changed |= self._mark(varied, op.results)
                return changed
        return False

    def _propagate_forward(self, op: Operation) -> bool:
        varied = self.varied
        changed = self._propagate_bits(op, varied) if self._has_bits else False
        kind = self._kind[op]
        if kind is _PURE or kind is _BITCAST:
            if self._any(varied, op.operands):
                changed |= self._mark(varied, op.results)
            return changed
        if kind is _REGION:
            for source, target in self._link_list[op]:
                if source in varied:
                    changed |= self._mark(varied, (target,))
            return changed
        find = self._classes.find
        if kind is _LOAD:
            if find(op.memref) in self.varied_memory:  # type: ignore[attr-defined]
                changed |= self._mark(varied, op.results)
        elif kind is _POP:
            if find(op.tape) in self.varied_memory:  # type: ignore[attr-defined]
                changed |= self._mark(varied, op.results)
        elif kind is _PUSH:
            if op.value in varied:  # type: ignore[attr-defined]
                changed |= self._mark_memory(self.varied_memory, (op.tape,))  # type: ignore[attr-defined]
        elif kind is _STORE:
            if op.value in varied:  # type: ignore[attr-defined]
                changed |= self._mark_memory(self.varied_memory, (op.memref,))  # type: ignore[attr-defined]
        elif kind is _COPY:
            if find(op.source) in self.varied_memory:  # type: ignore[attr-defined]
                changed |= self._mark_memory(self.varied_memory, (op.destination,))  # type: ignore[attr-defined]
        elif kind is _UNKNOWN:
            changed |= self._unknown_forward(op)
        elif kind is _CALL:
            used, produced = self._used[op], self._produced[op]
            if self._any(varied, used) or any(find(m) in self.varied_memory for m in _memrefs(used)):
                changed |= self._mark(varied, produced) | self._mark_memory(
                    self.varied_memory, _memrefs(produced))
        return changed

    def _unknown_forward(self, op: Operation) -> bool:
        """Everything `op` produces depends on everything it uses."""
        used, produced = self._used[op], self._produced[op]
        mems = _memrefs(used + produced)
        if self._any(self.varied, used) or any(
            self._classes.find(m) in self.varied_memory for m in mems
        ):
            return self._mark(self.varied, produced) | self._mark_memory(self.varied_memory, mems)
        return False

    def _propagate_backward(self, op: Operation) -> bool:
        useful = self.useful
        kind = self._kind[op]
        if kind is _PURE:
            if self._any(useful, op.results):
                return self._mark(useful, op.operands)
            return False
        if kind is _REGION:
            changed = False
            for source, target in self._link_list[op]:
                if target in useful:
                    changed |= self._mark(useful, (source,))
            return changed
        find = self._classes.find
        if kind is _LOAD:
            if op.results[0] in useful:
                return self._mark_memory(self.useful_memory, (op.memref,))  # type: ignore[attr-defined]
        elif kind is _POP:
            if op.results[0] in useful:
                return self._mark_memory(self.useful_memory, (op.tape,))  # type: ignore[attr-defined]
        elif kind is _PUSH:
            if find(op.tape) in self.useful_memory:  # type: ignore[attr-defined]
                return self._mark(useful, (op.value,))  # type: ignore[attr-defined]
        elif kind is _STORE:
            if find(op.memref) in self.useful_memory:  # type: ignore[attr-defined]
                return self._mark(useful, (op.value,))  # type: ignore[attr-defined]
        elif kind is _COPY:
            if find(op.destination) in self.useful_memory:  # type: ignore[attr-defined]
                return self._mark_memory(self.useful_memory, (op.source,))  # type: ignore[attr-defined]
        elif kind is _BITCAST:
            source = round_trip_source(op)
            if source is not None and op.results[0] in useful:
                return self._mark(useful, (source,))
        elif kind is _UNKNOWN:
            return self._unknown_backward(op)
        elif kind is _CALL:
            used, produced = self._used[op], self._produced[op]
            if self._any(useful, produced) or any(
                    find(m) in self.useful_memory for m in _memrefs(produced)):
                return self._mark(useful, used) | self._mark_memory(self.useful_memory, _memrefs(used))
        return False

    def _unknown_backward(self, op: Operation) -> bool:
        """Everything `op` uses is useful if anything it produces is."""
        used, produced = self._used[op], self._produced[op]
        mems = _memrefs(used + produced)
        if self._any(self.useful, produced) or any(
            self._classes.find(m) in self.useful_memory for m in mems
        ):
            return self._mark(self.useful, used) | self._mark_memory(self.useful_memory, mems)
        return False

    # -- ops -------------------------------------------------------------------

    def _compute_active_ops(self) -> set[Operation]:
        """Ops with an active result, ops writing active memory, allocations
        of active memory, and region ops containing any of them."""
        active: set[Operation] = set()
        for op in reversed(self._ops):  # children before parents
            if any(self.is_active(r) for r in op.results):
                active.add(op)
            elif isinstance(op, memref.StoreOp) and self.is_active_memory(op.memref):
                active.add(op)
            elif isinstance(op, (TapePushOp, TapeCreateOp)) and self.is_active_memory(
                    op.tape):
                active.add(op)
            elif isinstance(op, memref.CopyOp) and self.is_active_memory(op.destination):
                active.add(op)
            elif isinstance(op, ALLOCATION_OPS) and self.is_active_memory(op.results[0]):
                active.add(op)
            elif self._kind.get(op) is _CALL and any(
                    self.is_active_memory(m) for m in _memrefs(self._produced[op])):
                active.add(op)
            elif isinstance(op, func.ReturnOp):
                active.add(op)
            elif op.regions and any(
                inner in active for region in op.regions for inner in region.walk()
            ):
                active.add(op)
            elif op.regions and any(
                self.is_active(a) for region in op.regions for b in region.blocks for a in b.args
            ):
                active.add(op)
        return active

    # -- unknown ops -----------------------------------------------------------

    def _touched_active(self, op: Operation) -> str | None:
        """What active data the unknown `op` touches (for the message)."""
        values = [*self._used[op], *self._produced[op]]
        for v in values:
            if self.is_active(v):
                return f"the value {_name(v)}, which carries a derivative"
            if is_memref_type(v.type) and self.is_active_memory(v):
                return f"the memref {_name(v)}, whose memory carries derivatives"
        for inner in op.walk():
            if inner is not op and inner in self._active_ops and not inner.has_trait(IsTerminator):
                return f"'{inner.name}' inside it, which computes derivatives"
        return None

    def _unknown_error(self, op: Operation, touched: str, mode: str = "reverse") -> CompileError:
        if isinstance(op, func.CallOp):
            return error_at(
                op,
                f"calls '{op.callee}', which has no body to differentiate, with {touched}; "
                + no_body_advice(op.callee.string_value(), mode),
            )
        return error_at(
            op,
            f"is not understood by {mode} mode (no derivative rule, and the activity "
            f"analysis cannot see through it), but it touches {touched}; rewrite it with "
            "scf.for/scf.if/scf.while, memref.load/store and arith/math ops, or mark the "
            "inputs that reach it const",
        )


def _name(value: SSAValue) -> str:
    if value.name_hint:
        return f"%{value.name_hint}"
    if isinstance(value, BlockArgument):
        return f"(argument {value.index} of a block)"
    assert isinstance(value, OpResult)
    return f"(result {value.index} of '{value.op.name}')"


def is_view_result_op(op: Operation) -> bool:
    return bool(op.results) and is_view_result(op.results[0])


def _propagation_order(function: Operation) -> list[Operation]:
    """The ops nested in `function`, each op with regions both before its
    regions (block arguments from operands: inward) and after them (results
    from yields: outward). Pre-order alone moved facts one level outward per
    round of the fixpoint: d rounds over a nest of d ifs or loops."""
    order: list[Operation] = []
    stack: list[tuple[Operation, bool]] = [(function, False)]
    while stack:
        op, done = stack.pop()
        if op is not function:
            order.append(op)
        if done or not op.regions:
            continue
        if op is not function:
            stack.append((op, True))
        children = [inner for region in op.regions for block in region.blocks for inner in block.ops]
        stack.extend((inner, False) for inner in reversed(children))
    return order
