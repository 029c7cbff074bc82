"""Checked sizes for every allocation generated code makes.

An allocation's byte count is the product of its sizes and the element
size. Computed with plain 64-bit multiplies it wraps (2**61 + 1 doubles ask
for 8 bytes, and every later access passes a bounds check against the
un-wrapped size), and a negative size becomes a huge unsigned one. Here:

- a negative size stops the call with ValueError;
- a product that overflows, or exceeds 2**63 - 1 bytes (no object may be
  larger: C's PTRDIFF_MAX, numpy's limit), stops it with MemoryError;
- a NULL from malloc/realloc stops it with MemoryError (a realloc that
  fails leaves the old buffer in place);
- memref.alloca: a static one larger than STACK_LIMIT is a compile error,
  and the dynamic ones of a call may take at most STACK_LIMIT bytes of
  stack in total (a loop of allocas cannot overflow the stack).

Each stop names the source location of the allocating op through the error
slot: `FunctionTranslator.stop_if`, codes in adpasses.core.stop_codes. These checks are always on: they cost
a compare per size per allocation, and `boundscheck=False` does not remove
them (an allocation is never in a hot loop the way an access is).
"""

from __future__ import annotations

from collections.abc import Sequence

from llvmlite import ir
from xdsl.ir import Operation

from adpasses.core import stop_codes
from adpasses.lowering.core import I1, I64, PTR, FunctionTranslator, const_i64, runtime_realloc

MAX_BYTES = (1 << 63) - 1
STACK_LIMIT = 1 << 20
"""Bytes of stack one call may allocate with memref.alloca (dynamic sizes in
total; each static alloca alone)."""


def _constant(v: ir.Value) -> int | None:
    return v.constant if isinstance(v, ir.Constant) and isinstance(v.constant, int) else None


def byte_count(ft: FunctionTranslator, site: int, sizes: Sequence[ir.Value], element_bytes: int,
               what: int = stop_codes.ALLOCATION) -> ir.Value:
    """sizes[0] * ... * sizes[-1] * element_bytes as an i64 that is known
    to be in [0, MAX_BYTES]; the call stops (ValueError / MemoryError at
    `site`) for a negative size or a product beyond MAX_BYTES."""
    b = ft.b
    for d, s in enumerate(sizes):
        c = _constant(s)
        if c is None or c < 0:
            negative = ir.Constant(I1, 1) if c is not None else b.icmp_signed("<", s, const_i64(0))
            ft.stop_if(negative, site, s, stop_codes.NEGATIVE_SIZE, const_i64(d))
    static = 1
    for s in sizes:
        c = _constant(s)
        static *= c if c is not None and c >= 0 else 1
    described = const_i64(stop_codes.describe_allocation(what, element_bytes))
    if static * element_bytes > MAX_BYTES:
        count = const_i64(static if static <= MAX_BYTES else -1)
        ft.stop_if(ir.Constant(I1, 1), site, count, stop_codes.SIZE_OVERFLOW, described)
        return const_i64(0)
    count: ir.Value = const_i64(static)
    overflow: ir.Value = ir.Constant(I1, 0)
    for s in sizes:
        if _constant(s) is not None:
            continue
        if _constant(count) == 1:
            count = s
            continue
        product = b.umul_with_overflow(count, s)
        count, overflow = b.extract_value(product, 0), b.or_(overflow, b.extract_value(product, 1))
    if isinstance(count, ir.Constant):
        return const_i64(count.constant * element_bytes)
    # Sizes are non-negative here: a count or byte count with its sign bit
    # set is beyond MAX_BYTES as well.
    overflow = b.or_(overflow, b.icmp_signed("<", count, const_i64(0)))
    shown = b.select(overflow, const_i64(-1), count)  # -1: the count itself overflowed
    nbytes: ir.Value = count
    if element_bytes != 1:
        product = b.umul_with_overflow(count, const_i64(element_bytes))
        nbytes, overflow = b.extract_value(product, 0), b.or_(overflow, b.extract_value(product, 1))
    overflow = b.or_(overflow, b.icmp_signed("<", nbytes, const_i64(0)))
    ft.stop_if(overflow, site, shown, stop_codes.SIZE_OVERFLOW, described)
    return nbytes


def heap_allocate(ft: FunctionTranslator, site: int, nbytes: ir.Value, what: int,
                  element_bytes: int) -> ir.Value:
    """malloc(nbytes) through the counting runtime; a NULL result (for a
    non-zero size: malloc(0) may return NULL) stops the call with
    MemoryError."""
    ptr = ft.malloc(nbytes)
    failed = ft.b.icmp_unsigned("==", ptr, ir.Constant(PTR, None))
    if _constant(nbytes) != 0:
        if _constant(nbytes) is None:
            failed = ft.b.and_(failed, ft.b.icmp_unsigned("!=", nbytes, const_i64(0)))
        ft.stop_if(failed, site, nbytes, stop_codes.ALLOCATION_FAILED,
                   const_i64(stop_codes.describe_allocation(what, element_bytes)))
    return ptr


def heap_grow(ft: FunctionTranslator, site: int, old: ir.Value, nbytes: ir.Value, what: int,
              element_bytes: int) -> ir.Value:
    """realloc(old, nbytes) (nbytes > 0); NULL stops the call with
    MemoryError, and the caller's record still holds `old`."""
    grown = ft.b.call(runtime_realloc(ft.mt), [old, nbytes])
    ft.stop_if(ft.b.icmp_unsigned("==", grown, ir.Constant(PTR, None)), site, nbytes,
               stop_codes.ALLOCATION_FAILED, const_i64(stop_codes.describe_allocation(what, element_bytes)))
    return grown


def check_static_alloca(op: Operation, nbytes: int) -> None:
    from adpasses.core.diagnostics import error_at

    if nbytes > STACK_LIMIT:
        raise error_at(op, f"allocates {nbytes} bytes on the stack, more than the limit of "
                           f"{STACK_LIMIT} bytes per stack allocation; use memref.alloc "
                           f"(heap) for large arrays")


def reserve_stack(ft: FunctionTranslator, site: int, nbytes: ir.Value) -> None:
    """Count a dynamic alloca of `nbytes` against the call's stack budget;
    stop with MemoryError when the call's dynamic allocas would exceed it."""
    b = ft.b
    used_slot = ft.stack_budget_slot()
    used = b.load(used_slot, typ=I64)
    # used <= STACK_LIMIT and nbytes <= MAX_BYTES: the sum cannot wrap.
    total = b.add(used, nbytes)
    ft.stop_if(b.icmp_unsigned(">", total, const_i64(STACK_LIMIT)), site, nbytes,
               stop_codes.STACK_LIMIT, const_i64(STACK_LIMIT))
    b.store(total, used_slot)


def saturating_double(b: ir.IRBuilder, capacity: ir.Value, minimum: int) -> ir.Value:
    """max(minimum, 2 * capacity), saturated at 2**63 - 1 (so a byte count
    computed from it overflows and stops, never wraps)."""
    doubled = b.umul_with_overflow(capacity, const_i64(2))
    value = b.select(b.extract_value(doubled, 1), const_i64(MAX_BYTES), b.extract_value(doubled, 0))
    return b.select(b.icmp_unsigned("<", value, const_i64(minimum)), const_i64(minimum), value)
