"""The runtime generated code talks to: allocation counters and an error slot.

Both are plain memory owned by this module (ctypes buffers) whose addresses
are given to LLVM under fixed symbol names, so generated code updates them
directly with loads and stores: no Python callback on any path.

- `adpasses_alloc_stats` [2 x i64]: heap allocations and bytes requested by
  generated code (memref.alloc, tapes, tape growth) since `reset_stats()`.
- `adpasses_error_slot` [5 x i64]: flag, check site, index, axis, size of the
  first out-of-bounds access of the current call (see adpasses.pyentry).
"""

from __future__ import annotations

import ctypes

_STATS = (ctypes.c_int64 * 2)()
ERROR_SLOT = (ctypes.c_int64 * 5)()
_registered = False


def register_symbols() -> None:
    """Make the buffers visible to the JIT linker (once per process)."""
    global _registered
    if _registered:
        return
    import llvmlite.binding as llvm

    llvm.add_symbol("adpasses_alloc_stats", ctypes.addressof(_STATS))
    llvm.add_symbol("adpasses_error_slot", ctypes.addressof(ERROR_SLOT))
    _registered = True


def stats() -> dict[str, int]:
    """Heap allocations and bytes made by generated code since the last reset."""
    return {"allocations": int(_STATS[0]), "bytes": int(_STATS[1])}


def reset_stats() -> None:
    _STATS[0] = 0
    _STATS[1] = 0
