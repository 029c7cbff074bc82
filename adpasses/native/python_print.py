"""Python's `print` from compiled code: a ctypes callback generated code
calls by symbol (`adpasses_python_print`), for the `printf.print_format`
ops the frontend marks `ad.python_print` (adpasses/lowering/printf.py).

Python formats the values (`str(x)`: floats print as Python's repr, float32
values as numpy's float32, arrays as numpy prints them) and writes to
`sys.stdout`, the stream Python's own print uses: output stays in order
with the Python side's, whatever its buffering. A ctypes callback takes
the GIL itself, so it works from code running with the GIL released.

The call passes the format string (`{}` per value), the format specs
(`SPEC_SEP`-separated: "" for `str` (a print argument), ":" for an
f-string field without spec (`format(x, "")`), "!r", ":.3f", "!r:>8"), the number of
values, a kind per value and their data as i64 slots (adpasses/core/print_codes.py).
"""

from __future__ import annotations

import ctypes
import struct
import sys

import numpy as np

from adpasses.core.print_codes import ARRAY, ARRAY_DTYPES, BOOL, F32, F64, INT32_REPR, NUMPY_REPR, SPEC_SEP


def _array(dtype: np.dtype, data, pos: int) -> tuple[np.ndarray, int]:  # type: ignore[no-untyped-def]
    ptr, offset, rank = data[pos], data[pos + 1], data[pos + 2]
    sizes = [data[pos + 3 + k] for k in range(rank)]
    strides = [data[pos + 3 + rank + k] for k in range(rank)]
    pos += 3 + 2 * rank
    item = dtype.itemsize
    if any(s == 0 for s in sizes):
        return np.zeros(sizes, dtype), pos
    low = sum(min(0, (n - 1) * s) for n, s in zip(sizes, strides))
    high = sum(max(0, (n - 1) * s) for n, s in zip(sizes, strides))
    start = ptr + (offset + low) * item
    raw = (ctypes.c_char * ((high - low + 1) * item)).from_address(start)
    flat = np.frombuffer(raw, dtype=dtype)
    view = np.lib.stride_tricks.as_strided(flat[-low:], shape=sizes, strides=[s * item for s in strides])
    return view.copy(), pos


def _value(kind: int, data, pos: int) -> tuple[object, int]:  # type: ignore[no-untyped-def]
    if kind >= ARRAY:
        return _array(np.dtype(ARRAY_DTYPES[kind - ARRAY]), data, pos)
    raw = data[pos]
    if kind in (F64, F32):
        x = struct.unpack("<d", struct.pack("<q", raw))[0]
        return (np.float32(x) if kind == F32 else x), pos + 1
    if kind == BOOL:
        return bool(raw), pos + 1
    return int(raw), pos + 1


def _numpy_scalar(value: object) -> object:
    """The numpy scalar Python would hold (an element of an array of the
    value's kind; float32 values are np.float32 already)."""
    if isinstance(value, np.generic):
        return value
    if isinstance(value, bool):
        return np.bool_(value)
    if isinstance(value, int):
        return np.int64(value)
    return np.float64(value)


def _format(value: object, spec: str) -> str:
    """"" (a print argument): str(value); otherwise an f-string field,
    `[!r|!s][:format_spec]`: the conversion, then format(value,
    format_spec), as Python does (f"{x}" is format(x, ""), which for
    numpy float32 is the widened float's text, not str(x))."""
    if not spec:
        return str(value)
    conversion, _, format_spec = spec.partition(":")
    if conversion == NUMPY_REPR:
        value = repr(_numpy_scalar(value))
    elif conversion == INT32_REPR:
        value = repr(np.int32(value))
    elif conversion == "!r":
        value = repr(value)
    elif conversion == "!s":
        value = str(value)
    return format(value, format_spec)


def _print(fmt: bytes, specs: bytes, n: int, kinds, data) -> None:  # type: ignore[no-untyped-def]
    pieces = fmt.decode().split("{}")
    spec_list = specs.decode().split(SPEC_SEP) if n else []
    out, pos = [pieces[0]], 0
    for k in range(n):
        value, pos = _value(kinds[k], data, pos)
        out.append(_format(value, spec_list[k] if k < len(spec_list) else ""))
        out.append(pieces[k + 1])
    sys.stdout.write("".join(out))


_CALLBACK_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64,
                                  ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64))
CALLBACK = _CALLBACK_TYPE(_print)


def address() -> int:
    return ctypes.cast(CALLBACK, ctypes.c_void_p).value  # type: ignore[return-value]
