"""ad tape ops -> LLVM: a stack-allocated {data, count, capacity} record.

With a capacity operand, one allocation of exactly that many values
(through the counting allocator); pushes never check for room. Without one
(tapes of scf.while loops, and of loops whose trip counts vary with an outer
loop), the buffer doubles when full, tested at each push, or once per loop
nest at an `ad.tape.reserve` (its pushes, marked `ad.reserved`, then test
nothing and vectorise); with `workspace` (the JIT's default)
it comes from a per-site pool kept across calls
(adpasses.lowering.thread_state) and goes back there when the tape is freed,
so a call that pushes no more than an earlier one allocates nothing.
Sizes are checked (adpasses.lowering.sizes): a capacity whose byte count
overflows, or an allocation or growth that fails, stops the call with
MemoryError at the tape's location.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects.builtin import MemRefType

from adpasses.core import stop_codes
from adpasses.dialects.ad import (RESERVED_ATTR, TapeCreateOp, TapeExportOp, TapeFreeOp, TapeImportOp, TapePopOp,
                                  TapePushOp, TapeReserveOp)
from adpasses.lowering.core import (I64, PTR, FunctionTranslator, MemRefValue, const_i64, load_element, scalar_type,
                                    store_element)
from adpasses.lowering.memref import _element_bytes
from adpasses.lowering.sizes import MAX_BYTES, byte_count, heap_allocate, heap_grow, saturating_double
from adpasses.lowering.thread_state import HELD_TYPE, workspace_give_back, workspace_pool, workspace_take

TAPE = ir.LiteralStructType([PTR, I64, I64])
INITIAL_CAPACITY = 64


class Tape:
    def __init__(self, record: ir.Value, element: ir.Type, growable: bool, site: int,
                 workspace: tuple[ir.Value, ir.Value, ir.Value] | None = None):
        self.record, self.element, self.growable = record, element, growable
        self.site = site  # where a failed allocation or growth is reported
        # (pool, capacities, held) of a growable tape kept across calls.
        self.workspace = workspace

    def field(self, ft: FunctionTranslator, k: int) -> ir.Value:
        return ft.b.gep(self.record, [const_i64(0), ir.Constant(ir.IntType(32), k)], inbounds=True,
                        source_etype=TAPE)


def _create(ft: FunctionTranslator, op: TapeCreateOp) -> None:
    elem = scalar_type(op.tape.type.element_type)
    record = ft.entry_alloca(TAPE)
    growable = op.capacity is None
    site = ft.mt.check_site(op)
    workspace = None
    if growable and ft.mt.workspace and _freed_in_its_block(op):
        workspace = _take_workspace(ft)
        data = ft.b.load(_held_field(ft.b, workspace[2], 0), typ=PTR)
        capacity = ft.b.udiv(ft.b.load(_held_field(ft.b, workspace[2], 1), typ=I64),
                             const_i64(_element_bytes(ft, elem)))
    elif growable:
        data, capacity = ir.Constant(PTR, None), const_i64(0)
    else:
        capacity = ft.get(op.capacity)
        data = _allocate_unless_empty(ft, site, capacity, _element_bytes(ft, elem))
    tape = Tape(record, elem, growable, site, workspace)
    ft.b.store(data, tape.field(ft, 0))
    ft.b.store(const_i64(0), tape.field(ft, 1))
    ft.b.store(capacity, tape.field(ft, 2))
    ft.set(op.tape, tape)


def _freed_in_its_block(op: TapeCreateOp) -> bool:
    """The tape is freed once, later in the block that creates it: every
    execution of the create gives its buffer back before the next one."""
    frees = [u.operation for u in op.tape.uses if isinstance(u.operation, TapeFreeOp)]
    return (len(frees) == 1 and frees[0].parent_block() is op.parent_block()
            and op.is_before_in_block(frees[0]))


def _held_field(b: ir.IRBuilder, held: ir.Value, k: int) -> ir.Value:
    return b.gep(held, [const_i64(0), ir.Constant(ir.IntType(32), k)], inbounds=True, source_etype=HELD_TYPE)


def _take_workspace(ft: FunctionTranslator) -> tuple[ir.Value, ir.Value, ir.Value]:
    """A buffer of this tape site's pool, held for the call ({NULL, 0} if
    the pool is empty); the function's early exit gives it back."""
    pool, capacities = workspace_pool(ft.mt)
    held = ft.entry_alloca(HELD_TYPE)
    ft.alloca_builder.store(ir.Constant(HELD_TYPE, [ir.Constant(PTR, None), const_i64(0)]), held)
    ft.workspaces.append((pool, capacities, held))
    ft.b.call(workspace_take(ft.mt), [pool, capacities, held])
    return pool, capacities, held


def _allocate_unless_empty(ft: FunctionTranslator, site: int, capacity: ir.Value,
                           element_bytes: int) -> ir.Value:
    """One counted allocation of `capacity` values, or null (and no
    allocation) when the capacity is 0: a loop that runs no iteration tapes
    nothing. The size is checked (a wrapped byte count would let pushes
    run past the buffer)."""
    b = ft.b
    nbytes = byte_count(ft, site, [capacity], element_bytes, stop_codes.TAPE)
    if isinstance(capacity, ir.Constant):
        return heap_allocate(ft, site, nbytes, stop_codes.TAPE, element_bytes) if capacity.constant else ir.Constant(PTR, None)
    before = b.block
    with b.if_then(b.icmp_unsigned("!=", capacity, const_i64(0))):
        allocated = heap_allocate(ft, site, nbytes, stop_codes.TAPE, element_bytes)
        allocated_in = b.block
    data = b.phi(PTR)
    data.add_incoming(ir.Constant(PTR, None), before)
    data.add_incoming(allocated, allocated_in)
    return data


def _grow_to(ft: FunctionTranslator, tape: Tape, count: ir.Value, needed: ir.Value) -> None:
    """Room for `needed` values on a growable tape holding `count`: when
    the capacity is smaller, the buffer grows to max(needed, twice the
    capacity, INITIAL_CAPACITY)."""
    b = ft.b
    capacity = b.load(tape.field(ft, 2), typ=I64)
    with b.if_then(b.icmp_unsigned(">", needed, capacity), likely=False):
        doubled = saturating_double(b, capacity, INITIAL_CAPACITY)
        grown = b.select(b.icmp_unsigned(">", needed, doubled), needed, doubled)
        old = b.load(tape.field(ft, 0), typ=PTR)
        element_bytes = _element_bytes(ft, tape.element)
        nbytes = byte_count(ft, tape.site, [grown], element_bytes, stop_codes.TAPE)
        new = heap_grow(ft, tape.site, old, nbytes, stop_codes.TAPE, element_bytes)
        b.store(new, tape.field(ft, 0))
        b.store(grown, tape.field(ft, 2))
        if tape.workspace is not None:  # what a stop gives back
            b.store(new, _held_field(b, tape.workspace[2], 0))
            b.store(nbytes, _held_field(b, tape.workspace[2], 1))


def _push(ft: FunctionTranslator, op: TapePushOp) -> None:
    tape: Tape = ft.get(op.tape)
    b = ft.b
    count = b.load(tape.field(ft, 1), typ=I64)
    if tape.growable and RESERVED_ATTR not in op.attributes:
        _grow_to(ft, tape, count, b.add(count, const_i64(1)))
    data = b.load(tape.field(ft, 0), typ=PTR)
    store_element(b, ft.get(op.value), b.gep(data, [count], inbounds=True, source_etype=tape.element))
    b.store(b.add(count, const_i64(1)), tape.field(ft, 1))


def _reserve(ft: FunctionTranslator, op: TapeReserveOp) -> None:
    """Room for `count` more pushes; nothing for a tape with a capacity
    (it was allocated for all its pushes)."""
    tape: Tape = ft.get(op.tape)
    if not tape.growable:
        return
    b = ft.b
    count = b.load(tape.field(ft, 1), typ=I64)
    total = b.uadd_with_overflow(count, ft.get(op.count))
    # Saturated, never wrapped: a byte count from 2**63 - 1 values stops
    # the call with MemoryError.
    needed = b.select(b.extract_value(total, 1), const_i64(MAX_BYTES), b.extract_value(total, 0))
    _grow_to(ft, tape, count, needed)


def _pop(ft: FunctionTranslator, op: TapePopOp) -> None:
    tape: Tape = ft.get(op.tape)
    b = ft.b
    count = b.sub(b.load(tape.field(ft, 1), typ=I64), const_i64(1))
    b.store(count, tape.field(ft, 1))
    data = b.load(tape.field(ft, 0), typ=PTR)
    ft.set(op.value, load_element(b, b.gep(data, [count], inbounds=True, source_etype=tape.element), tape.element))


def _free(ft: FunctionTranslator, op: TapeFreeOp) -> None:
    tape: Tape = ft.get(op.tape)
    if tape.workspace is not None:
        ft.b.call(workspace_give_back(ft.mt), list(tape.workspace))
        return
    ft.free(ft.b.load(tape.field(ft, 0), typ=PTR))


def _export(ft: FunctionTranslator, op: TapeExportOp) -> None:
    """The tape's buffer as a memref of its capacity (at least one element:
    a tape that nothing was pushed on gets a one-element buffer, so that the
    memref always owns an allocation), and its count."""
    tape: Tape = ft.get(op.tape)
    b = ft.b
    element_bytes = _element_bytes(ft, tape.element)
    capacity = b.load(tape.field(ft, 2), typ=I64)
    with b.if_then(b.icmp_unsigned("==", capacity, const_i64(0)), likely=False):
        b.store(heap_allocate(ft, tape.site, const_i64(element_bytes), stop_codes.TAPE, element_bytes),
                tape.field(ft, 0))
        b.store(const_i64(1), tape.field(ft, 2))
    data = b.load(tape.field(ft, 0), typ=PTR)
    size = b.load(tape.field(ft, 2), typ=I64)
    assert isinstance(op.buffer.type, MemRefType)
    ft.set(op.buffer, MemRefValue(op.buffer.type, data, const_i64(0), [size], [const_i64(1)]))
    ft.set(op.count, b.load(tape.field(ft, 1), typ=I64))


def _import(ft: FunctionTranslator, op: TapeImportOp) -> None:
    buffer: MemRefValue = ft.get(op.buffer)
    b = ft.b
    element = buffer.element
    record = ft.entry_alloca(TAPE)
    tape = Tape(record, element, True, ft.mt.check_site(op))
    b.store(b.gep(buffer.ptr, [buffer.offset], inbounds=True, source_etype=element), tape.field(ft, 0))
    b.store(ft.get(op.count), tape.field(ft, 1))
    b.store(buffer.sizes[0], tape.field(ft, 2))
    ft.set(op.tape, tape)


LOWERINGS = {TapeCreateOp: _create, TapeExportOp: _export, TapeImportOp: _import, TapePushOp: _push, TapeReserveOp: _reserve, TapePopOp: _pop,
             TapeFreeOp: _free}
