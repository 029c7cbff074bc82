"""`ad-lower-tapes`: tapes of known capacity become memrefs.

A tape created with a capacity becomes a buffer plus a one-element counter:
`push` stores at the counter and increments it, `pop` decrements and loads.
Buffers of at most `stack-limit` bytes with a static capacity go on the
stack (`memref.alloca`), so a function over small fixed-size arrays
differentiates with no heap allocation; larger or dynamic ones are one
`memref.alloc` of exactly the capacity, marked `ad.workspace` so the JIT can
reuse one buffer across calls. Tapes without a capacity (inside
scf.while) stay `ad.tape` ops: the LLVM lowering grows them by doubling.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, ModuleOp, StringAttr, UnitAttr
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from adpasses.dialects.ad import (UNCHECKED_ATTR, WORKSPACE_ATTR, TapeCreateOp, TapeFreeOp, TapePopOp, TapePushOp,
                                  TapeReserveOp)
from adpasses.transforms.gradient_marks import marked_functions
from adpasses.transforms.tape_layout import LAYOUT_ATTR, STACK_ATTR, FixedLayout, fixed_layout, materialize
from adpasses.core.types import byte_size

"""On a tape's memref.alloc/dealloc: the lowering may keep the buffer across
calls (a per-function workspace), so repeated gradients allocate nothing."""


def _static_int(value: SSAValue) -> int | None:
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


@dataclass
class LowerCapacityTape(RewritePattern):
    stack_limit: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TapeCreateOp, rewriter: PatternRewriter) -> None:
        if op.capacity is None:
            return
        layout = fixed_layout(op)
        if isinstance(layout, FixedLayout):
            _lower_fixed(op, layout, self.stack_limit, rewriter)
            return
        elem = op.tape.type.element_type
        static = _static_int(op.capacity)
        b = Builder(InsertPoint.before(op))

        def emit(new: Operation) -> Operation:
            new.location = op.location
            return b.insert(new)

        on_stack = static is not None and static * byte_size(elem) <= self.stack_limit
        if static is not None:
            buffer = emit(
                (memref.AllocaOp if on_stack else memref.AllocOp).get(elem, shape=[max(static, 1)])
            ).results[0]
        else:
            buffer = emit(memref.AllocOp.get(elem, shape=[DYNAMIC_INDEX], dynamic_sizes=[op.capacity])).results[0]
        buffer.name_hint = op.tape.name_hint
        if not on_stack:
            buffer.owner.attributes[WORKSPACE_ATTR] = UnitAttr()
        counter = emit(memref.AllocaOp.get(IndexType(), shape=[1])).results[0]
        if isinstance(layout, str):  # a parallel loop pushes or pops it: the report says why serially
            counter.owner.attributes[STACK_ATTR] = StringAttr(layout)
        zero = emit(arith.ConstantOp(IntegerAttr(0, IndexType()))).results[0]
        one = emit(arith.ConstantOp(IntegerAttr(1, IndexType()))).results[0]
        emit(_unchecked(memref.StoreOp.get(zero, counter, [zero])))

        for use in list(op.tape.uses):
            user = use.operation
            ub = Builder(InsertPoint.before(user))

            def at(new: Operation, user: Operation = user, ub: Builder = ub) -> Operation:
                new.location = user.location
                return ub.insert(new)

            if isinstance(user, TapePushOp):
                n = at(_unchecked(memref.LoadOp.get(counter, [zero]))).results[0]
                at(_unchecked(memref.StoreOp.get(user.value, buffer, [n])))
                at(_unchecked(memref.StoreOp.get(at(arith.AddiOp(n, one)).results[0], counter, [zero])))
                rewriter.erase(user)
            elif isinstance(user, TapePopOp):
                n = at(_unchecked(memref.LoadOp.get(counter, [zero]))).results[0]
                m = at(arith.SubiOp(n, one)).results[0]
                at(_unchecked(memref.StoreOp.get(m, counter, [zero])))
                value = at(_unchecked(memref.LoadOp.get(buffer, [m]))).results[0]
                rewriter.replace(user, [], [value])
            elif isinstance(user, TapeReserveOp):  # the buffer has room for every push
                rewriter.erase(user)
            elif isinstance(user, TapeFreeOp):
                if not on_stack:
                    at(memref.DeallocOp.get(buffer)).attributes[WORKSPACE_ATTR] = UnitAttr()
                rewriter.erase(user)
        rewriter.erase(op)


def _lower_fixed(op: TapeCreateOp, layout: FixedLayout, stack_limit: int, rewriter: PatternRewriter) -> None:
    """The tape as a (capacity / (m1*...*md*k), m1, ..., md, k) buffer, m
    the trip counts of the inner loops around the pushes: forward
    iteration (i, j1, ...) stores its c-th push at [(i - lb) / step,
    (j1 - lb1) / step1, ..., c] (no division for a step of 1); reverse iteration (r, r1, ...) loads its p-th pop from
    [T - 1 - r, m1 - 1 - r1, ..., k - 1 - p] (tape_layout.py). No counter."""
    elem = op.tape.type.element_type
    k = layout.k
    static = _static_int(op.capacity)  # type: ignore[arg-type]
    b = Builder(InsertPoint.before(op))

    def emit(new: Operation, where: Operation = op, builder: Builder = b) -> SSAValue:
        new.location = where.location
        return builder.insert(new).results[0]

    def const(value: int, where: Operation = op, builder: Builder = b) -> SSAValue:
        return emit(arith.ConstantOp(IntegerAttr(value, IndexType())), where, builder)

    on_stack = static is not None and not layout.inner and static * byte_size(elem) <= stack_limit
    if static is not None and not layout.inner:
        shape = [max(static // k, 1), k]
        buffer = emit((memref.AllocaOp if on_stack else memref.AllocOp).get(elem, shape=shape))
    else:
        built: dict[SSAValue, SSAValue] = {}
        zero = const(0)
        trips = []
        for loop in layout.inner:  # their bounds are known here (fixed_layout)
            span = emit(arith.SubiOp(materialize(loop.ub, op, built), materialize(loop.lb, op, built)))
            trip = emit(arith.MaxSIOp(span, zero))
            if _static_int(loop.step) != 1:  # ceil(span / step): the iterations of a loop by step
                trip = emit(arith.CeilDivSIOp(trip, materialize(loop.step, op, built)))
            trips.append(trip)
        per_row = const(k)
        for trip in trips:
            per_row = emit(arith.MuliOp(per_row, trip))
        rows = emit(arith.DivUIOp(op.capacity, emit(arith.MaxSIOp(per_row, const(1)))))  # type: ignore[arg-type]
        buffer = emit(memref.AllocOp.get(elem, shape=[DYNAMIC_INDEX] * (1 + len(trips)) + [k],
                                         dynamic_sizes=[rows, *trips]))
    buffer.name_hint = op.tape.name_hint
    buffer.owner.attributes[LAYOUT_ATTR] = IntegerAttr(k, IndexType())
    if not on_stack:
        buffer.owner.attributes[WORKSPACE_ATTR] = UnitAttr()

    forward_index = []
    for loop in layout.forward:
        fb = Builder(InsertPoint.at_start(loop.body.block))
        row = loop.body.block.args[0]
        if _static_int(loop.lb) != 0:
            row = emit(arith.SubiOp(row, loop.lb), loop, fb)
        if _static_int(loop.step) != 1:  # the iteration's number: lb + row*step is i, step > 0
            row = emit(arith.DivUIOp(row, loop.step), loop, fb)
        forward_index.append(row)
    reverse_index = []
    for loop in layout.reverse:
        rb = Builder(InsertPoint.at_start(loop.body.block))
        last = emit(arith.SubiOp(loop.ub, const(1, loop, rb)), loop, rb)
        reverse_index.append(emit(arith.SubiOp(last, loop.body.block.args[0]), loop, rb))
    # Columns follow program order in each loop body (uses are unordered).
    order = {o: n for block in (layout.push_block, layout.pop_block) for n, o in enumerate(block.ops)}
    pushed = popped = 0
    for user in sorted({u.operation for u in op.tape.uses}, key=lambda o: order.get(o, -1)):
        ub = Builder(InsertPoint.before(user))
        if isinstance(user, TapePushOp):
            column = const(pushed, user, ub)
            pushed += 1
            store = _unchecked(memref.StoreOp.get(user.value, buffer, [*forward_index, column]))
            store.location = user.location
            ub.insert(store)
            rewriter.erase(user)
        elif isinstance(user, TapePopOp):
            column = const(k - 1 - popped, user, ub)
            popped += 1
            value = emit(_unchecked(memref.LoadOp.get(buffer, [*reverse_index, column])), user, ub)
            rewriter.replace(user, [], [value])
        elif isinstance(user, TapeReserveOp):
            rewriter.erase(user)
        elif isinstance(user, TapeFreeOp):
            if not on_stack:
                emit_free = memref.DeallocOp.get(buffer)
                emit_free.attributes[WORKSPACE_ATTR] = UnitAttr()
                emit_free.location = user.location
                ub.insert(emit_free)
            rewriter.erase(user)
    rewriter.erase(op)


def _unchecked(op: Operation) -> Operation:
    op.attributes[UNCHECKED_ATTR] = UnitAttr()
    return op


STACK_LIMIT = 4096
"""Largest static tape, in bytes, placed on the stack."""


def lower_tapes(root: Operation, stack_limit: int = STACK_LIMIT) -> None:
    PatternRewriteWalker(
        GreedyRewritePatternApplier([LowerCapacityTape(stack_limit)], dce_enabled=False),
        apply_recursively=False,
    ).rewrite_module(root)


@dataclass(frozen=True)
class LowerTapesPass(ModulePass):
    name = "ad-lower-tapes"

    stack_limit: int = STACK_LIMIT
    marked_only: bool = False
    """Lower only the tapes of the gradients the reverse pipeline is
    building (functions marked `ad.gradient_of`), as its step does."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.marked_only:
            lower_tapes(op, self.stack_limit)
            return
        for function in marked_functions(op):
            lower_tapes(function, self.stack_limit)
