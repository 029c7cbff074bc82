"""Activity analysis: which values and memory carry derivatives.

A float value is *active* when it is *varied* (depends on an active input)
and *useful* (influences an active output): the definition of Tapenade,
Enzyme-MLIR and Clad. Integer, index and boolean values are never active.

Memory is tracked per memory object (a function argument or an allocation,
seen through views, see `memref_views`): it is varied when it is a `dup`
argument or a varied value is stored into it, and useful when it is a `dup`
argument or a useful value is loaded from it. Active memory needs a shadow.

Both directions are plain fixpoints over the whole function; scf regions are
handled through their yields (iter_args, if results, while arguments), so a
loop-carried value that starts constant but is updated with an active value
becomes active. Calls must have been inlined (the reverse pass does); a call
left in place is treated conservatively.

A `const` memref argument is inactive even if it may alias a `dup` one: the
caller declared it so (as in Enzyme); the Python API checks real overlap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.dialects import func, memref, scf
from xdsl.ir import Operation, SSAValue
from xdsl.traits import ConstantLike

from adpasses.ir_walk import nested_ops
from adpasses.memref_views import (
    ALLOCATION_OPS,
    is_view_result,
    memory_object,
)
from adpasses.types import is_float_type, is_memref_type


def _floats(values: Iterable[SSAValue]) -> list[SSAValue]:
    return [v for v in values if is_float_type(v.type)]


def _memrefs(values: Iterable[SSAValue]) -> list[SSAValue]:
    return [v for v in values if is_memref_type(v.type)]


def _yield_of(block) -> Operation:  # type: ignore[no-untyped-def]
    terminator = block.last_op
    assert terminator is not None
    return terminator


class ActivityAnalysis:
    """Activity of every value, memory object and op of one function.

    `arg_activity` per argument: const/active/dup/dupnoneed; `ret_activity`
    per result: const/active. With `enabled=False` every float value and
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
        self._ops = nested_ops(function)
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

    def is_active_memory(self, value: SSAValue) -> bool:
        """A memref whose memory needs a shadow."""
        obj = memory_object(value)
        return obj in self.varied_memory and obj in self.useful_memory

    def is_active_op(self, op: Operation) -> bool:
        """Ops the reverse sweep must visit (see `_compute_active_ops`)."""
        return op in self._active_ops

    def active_values(self) -> set[SSAValue]:
        return self.varied & self.useful

    def describe(self, value: SSAValue) -> str:
        """`active`, `const`, `active memory` or `const memory`."""
        if is_memref_type(value.type):
            return "active memory" if self.is_active_memory(value) else "const memory"
        return "active" if self.is_active(value) else "const"

    # -- seeds -----------------------------------------------------------------

    def _seed(self) -> None:
        args = self.function.body.block.args
        for arg, act in zip(args, self.arg_activity):
            if act == "active" and is_float_type(arg.type):
                self.varied.add(arg)
                self.useful.add(arg)
            elif act in ("dup", "dupnoneed"):
                self.varied_memory.add(arg)
                self.useful_memory.add(arg)
        for op in self._ops:
            if isinstance(op, func.ReturnOp):
                for value, act in zip(op.arguments, self.ret_activity):
                    if act == "active":
                        self.useful.add(value)

    def _everything_active(self) -> None:
        """The baseline without analysis: every float that can depend on an
        input (not constants, not conversions of integers, not loads from
        const memory, which has no shadow) is active."""
        for op in self._ops:
            if isinstance(op, ALLOCATION_OPS) and is_float_type(op.results[0].type.element_type):
                self.varied_memory.add(op.results[0])
                self.useful_memory.add(op.results[0])
        for op in self._ops:
            if isinstance(op, memref.LoadOp) and memory_object(op.memref) not in self.varied_memory:
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
            if v not in target and (is_float_type(v.type) or target is self.varied_memory
                                    or target is self.useful_memory):
                target.add(v)
                changed = True
        return changed

    def _any(self, target: set[SSAValue], values: Iterable[SSAValue]) -> bool:
        return any(v in target for v in values)

    def _propagate_forward(self, op: Operation) -> bool:
        varied = self.varied
        if isinstance(op, scf.ForOp):
            body = op.body.block
            ys = _yield_of(body).operands
            changed = False
            for init, arg, y, res in zip(op.iter_args, body.args[1:], ys, op.results):
                if init in varied or y in varied:
                    changed |= self._mark(varied, (arg, res))
            return changed
        if isinstance(op, scf.IfOp):
            changed = False
            for region in (op.true_region, op.false_region):
                if region.blocks:
                    for y, res in zip(_yield_of(region.block).operands, op.results):
                        if y in varied:
                            changed |= self._mark(varied, (res,))
            return changed
        if isinstance(op, scf.WhileOp):
            before, after = op.before_region.block, op.after_region.block
            cond = _yield_of(before)
            cond_args = cond.operands[1:]
            changed = False
            for init, arg, y in zip(op.operands, before.args, _yield_of(after).operands):
                if init in varied or y in varied:
                    changed |= self._mark(varied, (arg,))
            for c, arg, res in zip(cond_args, after.args, op.results):
                if c in varied:
                    changed |= self._mark(varied, (arg, res))
            return changed
        if isinstance(op, memref.LoadOp):
            if memory_object(op.memref) in self.varied_memory:
                return self._mark(varied, op.results)
            return False
        if isinstance(op, memref.StoreOp):
            if op.value in varied:
                return self._mark(self.varied_memory, (memory_object(op.memref),))
            return False
        if isinstance(op, memref.CopyOp):
            if memory_object(op.source) in self.varied_memory:
                return self._mark(self.varied_memory, (memory_object(op.destination),))
            return False
        if isinstance(op, func.CallOp):
            mems = [memory_object(m) for m in _memrefs(op.operands)]
            if self._any(varied, op.operands) or self._any(self.varied_memory, mems):
                return self._mark(varied, op.results) | self._mark(self.varied_memory, mems)
            return False
        if op.regions or is_view_result_op(op):
            return False
        if self._any(varied, op.operands):
            return self._mark(varied, op.results)
        return False

    def _propagate_backward(self, op: Operation) -> bool:
        useful = self.useful
        if isinstance(op, scf.ForOp):
            body = op.body.block
            ys = _yield_of(body).operands
            changed = False
            for init, arg, y, res in zip(op.iter_args, body.args[1:], ys, op.results):
                if res in useful or arg in useful:
                    changed |= self._mark(useful, (init, y, arg))
            return changed
        if isinstance(op, scf.IfOp):
            changed = False
            for region in (op.true_region, op.false_region):
                if region.blocks:
                    for y, res in zip(_yield_of(region.block).operands, op.results):
                        if res in useful:
                            changed |= self._mark(useful, (y,))
            return changed
        if isinstance(op, scf.WhileOp):
            before, after = op.before_region.block, op.after_region.block
            cond_args = _yield_of(before).operands[1:]
            changed = False
            for c, arg, res in zip(cond_args, after.args, op.results):
                if res in useful or arg in useful:
                    changed |= self._mark(useful, (c,))
            for init, arg, y in zip(op.operands, before.args, _yield_of(after).operands):
                if arg in useful:
                    changed |= self._mark(useful, (init, y))
            return changed
        if isinstance(op, memref.LoadOp):
            if op.res in useful:
                return self._mark(self.useful_memory, (memory_object(op.memref),))
            return False
        if isinstance(op, memref.StoreOp):
            if memory_object(op.memref) in self.useful_memory:
                return self._mark(useful, (op.value,))
            return False
        if isinstance(op, memref.CopyOp):
            if memory_object(op.destination) in self.useful_memory:
                return self._mark(self.useful_memory, (memory_object(op.source),))
            return False
        if isinstance(op, func.CallOp):
            mems = [memory_object(m) for m in _memrefs(op.operands)]
            if self._any(useful, op.results) or self._any(self.useful_memory, mems):
                return self._mark(useful, op.operands) | self._mark(self.useful_memory, mems)
            return False
        if op.regions or is_view_result_op(op):
            return False
        if self._any(useful, op.results):
            return self._mark(useful, op.operands)
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
            elif isinstance(op, memref.CopyOp) and self.is_active_memory(op.destination):
                active.add(op)
            elif isinstance(op, ALLOCATION_OPS) and self.is_active_memory(op.results[0]):
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


def is_view_result_op(op: Operation) -> bool:
    return bool(op.results) and is_view_result(op.results[0])


def _propagation_order(root: Operation) -> list[Operation]:
    """The ops nested in `root`, each op with regions both before its regions
    (block arguments from operands: inward) and after them (results from
    yields: outward). Pre-order alone moved facts one level outward per
    round of the fixpoint: d rounds over a nest of d ifs or loops."""
    order: list[Operation] = []
    stack: list[tuple[Operation, bool]] = [(root, False)]
    while stack:
        op, done = stack.pop()
        order.append(op)
        if done or not op.regions:
            continue
        stack.append((op, True))
        children = [inner for region in op.regions for block in region.blocks for inner in block.ops]
        stack.extend((inner, False) for inner in reversed(children))
    return order
