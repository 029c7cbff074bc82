"""Why generated code stopped a call, beyond bounds checks: the codes the
lowering writes into the error slot's `axis` field, and the Python
exception each one becomes.

The error slot (adpasses.native.runtime) holds `flag, site, index, axis, size`.
`axis` >= 0 is an out-of-bounds index, -1 an integer division by zero and
`-2 - d` a shadow whose size in dimension d is not its primal's (those
three are decoded by adpasses.native.pyentry.CallErrors.stopped). The codes here
lie far below any shadow dimension, and `index`/`size` carry the values
their messages need:

| code | raised as | index | size |
|---|---|---|---|
| NEGATIVE_SIZE | ValueError | the size | its dimension |
| SIZE_OVERFLOW | MemoryError | element count (-1: it overflowed too) | what, element bytes |
| ALLOCATION_FAILED | MemoryError | bytes asked | what, element bytes |
| STACK_LIMIT | MemoryError | bytes asked | the limit |
| FLOAT_TO_INT | ValueError (NaN) / OverflowError | the float's f64 bits | bit width (negative: unsigned) |
| LOOP_STEP | ValueError | the step of an scf.for (<= 0) | - |
| RAISED | the site's exception (`ad.raise_if`; `cf.assert`: AssertionError; `ad.broadcast`: ValueError) | value 0 of its message | value 1 |

A RAISED site's text is `raise_site_text(class name, message, location)`.
"""

from __future__ import annotations

import struct

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


def exception(code: int, where: str, index: int, size: int) -> Exception:
    """The exception for a call that stopped with `code` at source location
    `where`. It carries `location` (where) and `detail` (the message
    without the location), so `ad-run` can print `where: error: ...`."""
    if code == RAISED:
        kind, detail, where = _raised(where, index, size)
    else:
        kind, detail = _describe(code, index, size)
    err = kind(f"{detail} (at {where})")
    err.location = where  # type: ignore[attr-defined]
    err.detail = detail  # type: ignore[attr-defined]
    return err


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
