"""Shadow arrays for the Python API, and the overlap test between arrays.

A shadow is indexed with its primal's strides (Enzyme's convention and
ours: the gradient function receives one memref layout for both), so a
shadow of a non-contiguous view must have the view's strides.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def zeros_like_layout(x: np.ndarray) -> np.ndarray:
    """Zeros with the shape, dtype and strides of `x`."""
    if x.flags.c_contiguous or x.size == 0:
        return np.zeros(x.shape, x.dtype)
    item = x.itemsize
    lo = sum(min(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(x.shape, x.strides)) + item
    buffer = np.zeros((hi - lo) // item, x.dtype)
    start = buffer[(-lo) // item:]
    return np.lib.stride_tricks.as_strided(start, x.shape, x.strides)


def compact(shadow: np.ndarray) -> np.ndarray:
    """A gradient handed to the user: a C-contiguous array of its own."""
    return shadow if shadow.flags.c_contiguous else np.array(shadow)


def _byte_range(a: np.ndarray) -> tuple[int, int]:
    """[lowest, highest + itemsize) byte addresses of a's elements."""
    data = a.__array_interface__["data"][0]
    lo = data + sum(min(0, (n - 1) * s) for n, s in zip(a.shape, a.strides))
    hi = data + sum(max(0, (n - 1) * s) for n, s in zip(a.shape, a.strides)) + a.itemsize
    return lo, hi


def _overlap_groups(arrays: dict[int, np.ndarray]) -> list[list[int]]:
    """Positions of the arrays grouped by (transitively) overlapping memory."""
    ranges = {k: _byte_range(a) for k, a in arrays.items() if a.size}
    groups: list[list[int]] = []
    for k in arrays:
        touching = [g for g in groups if k in ranges and any(
            j in ranges and ranges[j][0] < ranges[k][1] and ranges[k][0] < ranges[j][1] for j in g)]
        merged = [k] + [j for g in touching for j in g]
        groups = [g for g in groups if g not in touching] + [merged]
    return groups


def aliased_shadows(args: Sequence[object], activity: Sequence[str], written: set[int]) -> dict[int, np.ndarray]:
    """Shadows for the `dup` arrays of a call in which some arrays share
    memory. Overlapping arrays one of which the function writes get views
    of one zeroed shadow of the memory they span, at the same byte offsets
    and strides, so that derivatives flow through the shared memory exactly
    as values do (each such view then holds the derivative with respect to
    the memory it covers). Arrays whose memory is only read get shadows of
    their own (the derivative with respect to each argument, as if the
    arguments were distinct)."""
    dup = {k: a for k, (a, act) in enumerate(zip(args, activity)) if act == "dup"}
    result: dict[int, np.ndarray] = {}
    for members in _overlap_groups(dup):  # type: ignore[arg-type]
        if len(members) == 1 or not written.intersection(members):
            for k in members:
                result[k] = zeros_like_layout(dup[k])  # type: ignore[arg-type]
            continue
        item = dup[members[0]].itemsize  # type: ignore[union-attr]
        lo = min(_byte_range(dup[k])[0] for k in members)  # type: ignore[arg-type]
        hi = max(_byte_range(dup[k])[1] for k in members)  # type: ignore[arg-type]
        if any(dup[k].itemsize != item or (_byte_range(dup[k])[0] - lo) % item for k in members):  # type: ignore[union-attr, arg-type]
            raise ValueError("arrays passed to a compiled function share memory at offsets that are "
                             "not a multiple of their element size; pass copies")
        flat = np.zeros((hi - lo) // item, dup[members[0]].dtype)  # type: ignore[union-attr]
        for k in members:
            a = dup[k]
            assert isinstance(a, np.ndarray)
            first = (a.__array_interface__["data"][0] - lo) // item
            result[k] = np.lib.stride_tricks.as_strided(flat[first:], a.shape, a.strides)
    return result


# The per-call helpers are CPython builtins compiled on first use
# (adpasses.dispatch); these stubs replace themselves with them.

def signature_code(*args: object) -> int:
    """A small int naming the argument types; 0 when some argument needs
    the slow path (see adpasses.dispatch)."""
    _load_dispatch()
    return signature_code(*args)


def arrays_overlap(*args: object) -> bool:
    """True if the memory of two of the numpy arrays among `args` overlaps."""
    _load_dispatch()
    return arrays_overlap(*args)


def _load_dispatch() -> None:
    global signature_code, arrays_overlap
    from adpasses.dispatch import fast_functions

    signature_code, arrays_overlap = fast_functions()
