"""Every way compiled code stops a call, and the Python exception each
becomes: the one table of stop codes and their one decoder.

One mechanism (docs/lowering.md, "Stops"): a lowering that may stop calls
`adpasses.lowering.stops.stop_if(ft, cond, site, index, code, size)`, which
branches (unlikely) to `__adpasses_oob(site, index, code, size)` and
returns early; that cold function records the stop in the calling thread's
error slot (adpasses.lowering.thread_state), callers return early after a
call that stopped, a parallel loop re-records its first stopped chunk the
same way, and the entry hands the slot to `exception` (below), called by
adpasses.native.callers.CallErrors.stopped. `site` indexes the module's
site texts (`ModuleTranslator.check_sites`); `code` (the slot's `axis`
field) says which kind of stop it is; `index` and `size` carry the values
its message needs:

| code | raised as | index | size | site text |
|---|---|---|---|---|
| axis >= 0 (+ PY_INDEX_AXIS) | IndexError | the index | the axis' size | location |
| ZERO_DIVISION (-1) | ZeroDivisionError | - | - | location |
| SHADOW_AXIS - d (<= -2) | ValueError | the shadow's size | the primal's size | `argument_site_text` |
| NEGATIVE_SIZE | ValueError | the size | its dimension | location |
| SIZE_OVERFLOW | MemoryError | element count (-1: it overflowed too) | what, element bytes | location |
| ALLOCATION_FAILED | MemoryError | bytes asked | what, element bytes | location |
| STACK_LIMIT | MemoryError | bytes asked | the limit | location |
| FLOAT_TO_INT | ValueError (NaN) / OverflowError | the float's f64 bits | bit width (negative: unsigned) | location |
| LOOP_STEP | ValueError | the step of an scf.for (<= 0) | - | location |
| RAISED | the site's exception (`ad.raise_if`; `cf.assert`: AssertionError; `ad.broadcast`: ValueError) | value 0 of its message | value 1 | `raise_site_text` |

Stops with a location in their site text carry it as the exception's
`location` and the message without it as `detail` (ad-run prints them as
`file:line:col: error: Kind: detail`); index and zero-division errors
carry the location in their message only, as numpy-like errors, and a
shadow or size mismatch is an error of the call's arguments, prefixed
with the function's name like the entry's argument checks.
"""

from __future__ import annotations

import struct

ZERO_DIVISION = -1
SHADOW_AXIS = -2
"""Code of a shadow (or operand) size mismatch in dimension d: SHADOW_AXIS - d."""
PY_INDEX_AXIS = 1 << 32
"""Added to the axis of a failed check of a `PY_INDEX_ATTR` access: the error
then reports the index the user wrote (a negative one as `i - size`) and
the valid range `-size..size-1`."""

_BASE = -(1 << 40)
NEGATIVE_SIZE = _BASE - 1
SIZE_OVERFLOW = _BASE - 2
ALLOCATION_FAILED = _BASE - 3
STACK_LIMIT = _BASE - 4
FLOAT_TO_INT = _BASE - 5
LOOP_STEP = _BASE - 6
RAISED = _BASE - 8
CODES = (NEGATIVE_SIZE, SIZE_OVERFLOW, ALLOCATION_FAILED, STACK_LIMIT, FLOAT_TO_INT, LOOP_STEP,
         RAISED)


def raisable(name: str) -> type[BaseException] | None:
    """The builtin exception class `name` compiled code may raise (an
    Exception subclass of builtins), or None."""
    import builtins

    cls = getattr(builtins, name, None)
    return cls if isinstance(cls, type) and issubclass(cls, Exception) else None

# What an allocation was for (the `size` field of SIZE_OVERFLOW and
# ALLOCATION_FAILED): the message names it.
ALLOCATION, TAPE, WORKSPACE, ERROR_SLOT = 0, 1, 2, 3
WHAT = {
    ALLOCATION: "an array",
    TAPE: "the tape of a loop (values the reverse sweep reads back)",
    WORKSPACE: "the tape workspace of a gradient",
    ERROR_SLOT: "the calling thread's error slot",
}


def describe_allocation(what: int, element_bytes: int) -> int:
    """The `size` field of an allocation stop: what it was for, and the
    element size."""
    return (what << 16) | element_bytes


def _human(nbytes: int) -> str:
    """Bytes as numpy writes them in its MemoryError ('8.00 TiB')."""
    value = float(nbytes)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if value < 1024 or unit == "EiB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.2f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def raise_site_text(exception: str, message: str, where: str | None) -> str:
    """The site text of an `ad.raise_if`: what `exception()` decodes (the
    message last: it may hold newlines)."""
    return f"{exception}\n{where or '?'}\n{message}"


def _raised(site: str, index: int, size: int) -> tuple[type[Exception], str, str]:
    """(class, message, location) of an `ad.raise_if` stop; its `{0}`, `{1}`
    and `{k:shapeN}` placeholders filled with the stop's values, `{{` and
    `}}` read as braces."""
    import re

    name, where, message = (site.split("\n", 2) + ["", "?", ""])[:3]
    kind = raisable(name) or RuntimeError
    values = (index, size)

    def fill(match: re.Match) -> str:
        if match.group(0) in ("{{", "}}"):
            return match.group(0)[0]
        value = values[int(match.group(1))]
        if match.group(2) is None:
            return str(value)
        count = int(match.group(2))
        bits = 64 // count
        unsigned = value & ((1 << 64) - 1)
        sizes = [(unsigned >> (bits * (count - 1 - k))) & ((1 << bits) - 1) for k in range(count)]
        return "(" + ",".join(map(str, sizes)) + ("," if count == 1 else "") + ")"

    return kind, re.sub(r"\{\{|\}\}|\{([01])(?::shape([1-8]))?\}", fill, message), where


def exception(code: int, where: str, index: int, size: int, function: str = "?") -> Exception:
    """The exception for a call of `function` that stopped with `code` at
    site text `where` (a source location, or the text `raise_site_text` /
    `argument_site_text` made), `index` and `size` the slot's values."""
    if code == ZERO_DIVISION:
        return ZeroDivisionError(f"integer division or modulo by zero (at {where})")
    if code >= 0:
        return IndexError(index_error_text(index, code, size, where))
    if code > _BASE:  # SHADOW_AXIS - d: ad.shadow_check, ad.size_match
        text = where.replace("{index}", str(index)).replace("{dim}", str(SHADOW_AXIS - code))
        return ValueError(f"{function}(): {text.replace('{size}', str(size))}")
    if code == RAISED:
        kind, detail, where = _raised(where, index, size)
    else:
        kind, detail = _describe(code, index, size)
    err = kind(f"{detail} (at {where})")
    err.location = where  # type: ignore[attr-defined]
    err.detail = detail  # type: ignore[attr-defined]
    return err


def argument_site_text(message: str, function: str, where: str | None) -> str:
    """The site text of a stop about the call's arguments (`ad.shadow_check`,
    `ad.size_match`): `message` with `{index}`, `{size}` (and `{dim}`) left
    for `exception` to fill, and where in which function it was checked."""
    return f"{message} (in @{function}" + (f", at {where})" if where else ")")


def index_error_text(index: int, axis: int, size: int, where: str) -> str:
    """numpy's words for an out-of-bounds index, the location, and the valid
    indices. An axis code with PY_INDEX_AXIS added comes from an access with
    Python's negative indices: its index was wrapped (`i + size` for a
    negative `i`), so a negative index that failed is reported as written."""
    python = axis >= PY_INDEX_AXIS
    if python:
        axis -= PY_INDEX_AXIS
        if index < 0:
            index -= size
    if size <= 0:
        valid = f"axis {axis} is empty: no index is valid"
    elif python:
        valid = f"valid indices are -{size} to {size - 1}"
    else:
        valid = f"valid indices are 0 to {size - 1}"
    return f"index {index} is out of bounds for axis {axis} with size {size} (at {where}); {valid}"


def _describe(code: int, index: int, size: int) -> tuple[type[Exception], str]:
    if code == NEGATIVE_SIZE:
        return ValueError, (f"negative dimensions are not allowed: an allocation was asked for size "
                            f"{index} in dimension {size}")
    what, element_bytes = WHAT.get(size >> 16, "memory"), size & 0xFFFF
    if code == SIZE_OVERFLOW:
        count = f"{index} elements" if index >= 0 else "more than 2**64 elements"
        return MemoryError, (f"cannot allocate {what}: {count} of {element_bytes} bytes need more than "
                             f"2**63 - 1 bytes, more than any address space holds")
    if code == ALLOCATION_FAILED:
        return MemoryError, (f"unable to allocate {_human(index)} ({index // max(element_bytes, 1)} "
                             f"elements of {element_bytes} bytes) for {what}: out of memory")
    if code == STACK_LIMIT:
        return MemoryError, (f"a stack allocation (memref.alloca) of {_human(index)} would exceed the "
                             f"limit of {_human(size)} of stack memory per call; use memref.alloc "
                             f"for large or data-dependent sizes")
    if code == FLOAT_TO_INT:
        value = struct.unpack("<d", struct.pack("<q", index))[0]
        width, signed = abs(size), size > 0
        if value != value:
            return ValueError, "cannot convert float NaN to integer"
        if value in (float("inf"), float("-inf")):
            return OverflowError, "cannot convert float infinity to integer"
        kind = "a signed" if signed else "an unsigned"
        return OverflowError, (f"int({value!r}) does not fit in {kind} {width}-bit integer "
                               f"(compiled code has no big integers)")
    if code == LOOP_STEP:
        return ValueError, (f"scf.for step must be positive, got {index} (a loop with this step "
                            f"would never end)")
    raise ValueError(f"unknown stop code {code}")
