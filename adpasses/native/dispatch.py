"""Per-call dispatch, compiled once per process as CPython builtins (the
LLVM IR is in dispatch_ir.py).

- `signature_code(*args)`: a small int naming the argument types (float,
  int, bool, or array dtype, rank and C-contiguity), 10 bits per argument,
  read from the objects directly; numpy's float64/float32, int64/int32 and
  bool scalars (exactly these classes, whose conversion runs no Python
  code: runtime.NUMPY_SCALARS) have codes of their own (jit compiles a
  version for each: NEP 50 makes them strong). 0
  when some argument needs the slow path (more than 6 arguments, other
  scalars, other dtypes, non-native byte order, ndarray subclasses). Reading `a.flags.c_contiguous` from Python
  alone costs more than this whole call.
- `arrays_overlap(*args)`: True if the memory ranges of two of the numpy
  arrays among the arguments intersect (other arguments are ignored).
- `DispatchTable(fallback)`: a builtin `table.function(*args)` that calls the
  target registered for the arguments' signature code, or `fallback(*args)`.
  `jit` and `grad` objects use it as their `__call__`, so that a call with a
  known signature goes from Python into compiled code through two builtins
  and no Python frame.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable

import numpy as np

from adpasses.core.compile_locks import load_runtime, locked
from adpasses.native.dispatch_ir import check_layouts, dispatch_module

check_layouts()

# What the dispatch code is made of: its key in the disk cache.
_DISPATCH_SOURCES = ("adpasses.native.dispatch_ir", "adpasses.core.llvm_loops", "adpasses.native.runtime")


class _PyMethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_METH_FASTCALL = 0x80
_METH_KEYWORDS = 0x2
_new_cfunction = ctypes.pythonapi.PyCFunction_NewEx
_new_cfunction.restype = ctypes.py_object
_new_cfunction.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]


def _builtin(name: str, address: int, self: object) -> tuple[Callable, _PyMethodDef]:
    """A builtin function object calling the FASTCALL function at `address`
    with `self`; the returned PyMethodDef must outlive it."""
    method = _PyMethodDef(name.encode(), address, _METH_FASTCALL, None)
    return _new_cfunction(ctypes.addressof(method), self, None), method


class _Compiled:
    def __init__(self) -> None:
        from adpasses.native import object_cache

        # Kept for the life of the process (module global _COMPILED). From
        # the disk cache when a function asked for it (jit(cache=True)).
        self.code = object_cache.runtime_machine_code("dispatch", _DISPATCH_SOURCES,
                                                      lambda: str(dispatch_module()))
        self.dispatch_address = self.code.address("adpasses_dispatch")
        self.signature_code, self._sig_def = _builtin(
            "signature_code", self.code.address("adpasses_signature_code"), None)
        self.arrays_overlap, self._ovl_def = _builtin(
            "arrays_overlap", self.code.address("adpasses_arrays_overlap"), None)
        # One method definition shared by every dispatch table.
        self.dispatch_def = _PyMethodDef(b"dispatch", self.dispatch_address,
                                         _METH_FASTCALL | _METH_KEYWORDS, None)


_COMPILED: _Compiled | None = None
_preparing: threading.Thread | None = None


def _compiled() -> _Compiled:
    global _COMPILED
    if _COMPILED is None:
        with locked("dispatch builtins"):  # one per process: tables point into its code forever
            if _COMPILED is None:
                _COMPILED = _Compiled()
    return _COMPILED


def ready() -> bool:
    """Whether the builtins exist (a call of them waits for nothing)."""
    return _COMPILED is not None


def prepare() -> None:
    """Start making the builtins on a thread of their own, unless they exist
    or are being made. A process's first compilation calls this before it
    imports the compiler and runs the frontend (Python, holding the GIL):
    LLVM, which releases the GIL, compiles the builtins meanwhile on another
    core (cold start, docs/deployment.md). Whoever needs them first waits
    for that thread (`_compiled` takes the same per-key lock), or makes them
    itself if the thread has not begun; an error on the thread is left for
    that caller to meet again."""
    global _preparing
    if _COMPILED is not None or (_preparing is not None and _preparing.is_alive()):
        return
    # Imported here, on the caller's thread: the thread then imports nothing
    # (a fork must not copy a half-done import: core/compile_locks.py).
    load_runtime()

    def make() -> None:
        try:
            _compiled()
        except BaseException:  # noqa: BLE001 - met again by the caller that needs them
            pass

    thread = threading.Thread(target=make, name="adpasses dispatch builtins")
    try:
        thread.start()
    except RuntimeError:  # no thread to be had: made when first needed
        return
    _preparing = thread


def signature_code(*args: object) -> int:
    return _compiled().signature_code(*args)


def arrays_overlap(*args: object) -> bool:
    return _compiled().arrays_overlap(*args)


def fast_functions() -> tuple:
    """(signature_code, arrays_overlap) as builtins, for hot paths."""
    c = _compiled()
    return c.signature_code, c.arrays_overlap


class _Table(np.ndarray):
    """The dispatch builtin's `self`: [count, fallback, (code, target)...]
    as int64 object addresses, and `targets`, the objects themselves, so
    that whoever holds the builtin keeps every target it may call alive."""

    targets: list[Callable]


class DispatchTable:
    """`function(*args)`: `target(*args)` for the target added under the
    arguments' signature code, else `fallback(*args)`. Holds at most
    CAPACITY targets; later signatures go to the fallback."""

    CAPACITY = 16

    def __init__(self, fallback: Callable) -> None:
        c = _compiled()
        self.table = np.zeros(2 + 2 * self.CAPACITY, np.int64).view(_Table)
        self.table[1] = id(fallback)
        self.table.targets = [fallback]
        self.function = _new_cfunction(ctypes.addressof(c.dispatch_def), self.table, None)

    @property
    def targets(self) -> list[Callable]:
        return self.table.targets

    def add(self, code: int, target: Callable) -> None:
        # Threads adding the first fast paths of a function at once must
        # not write the same slot: one entry at a time.
        with locked(("dispatch table", id(self))):
            n = int(self.table[0])
            if code == 0 or n >= self.CAPACITY or code in self.table[2 : 2 + 2 * n : 2]:
                return
            self.table.targets.append(target)
            self.table[2 + 2 * n] = code
            self.table[3 + 2 * n] = id(target)
            self.table[0] = n + 1  # published last: the entry is complete when counted
