"""Locks that make compilation safe under threads and `fork` (issue 13).

- `LLVM_LOCK` (reentrant) is held around every sequence of llvmlite calls
  that makes machine code: target initialisation, parsing and optimising
  (LLVM's global context is not thread-safe, and llvmlite locks each single
  call only), MCJIT code generation and the JIT symbol table.
- `once(cache, key, build)` returns `cache[key]`, calling `build()` only if
  the key is missing, and at most once at a time per (cache, key): threads
  asking for a key that another thread is building wait for it and reuse
  its result. Each signature of a function is therefore compiled once, and
  no compiled object replaces another one that a caller may already hold.
- `locked(key)`: a short critical section per key (dispatch tables).
- `parse_python(source)`: `ast.parse`, one thread at a time (CPython 3.11).
- `load_compiler()`: every module compilation imports, imported once under
  `LLVM_LOCK` (a fork must not copy a half-done import: see below).

Fork: a child forked while another thread held one of these locks (or
llvmlite's own lock) would wait forever for a thread that does not exist in
it. `os.register_at_fork` handlers take `LLVM_LOCK` and llvmlite's lock
before the fork (so no LLVM call is in flight while the process is copied:
a fork waits for a running code generation step to finish), release them in
parent and child afterwards, and give the child a fresh table of per-key
locks. Compilation imports its modules before its first step
(`load_compiler`, under `LLVM_LOCK`), so no thread is inside one of those
imports at a fork either. The child then compiles by itself.
"""

from __future__ import annotations

import ast
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

LLVM_LOCK = threading.RLock()


class _KeyedLocks:
    """A reentrant lock per key, existing while some thread uses it."""

    def __init__(self) -> None:
        self.guard = threading.Lock()
        self.entries: dict[object, list[Any]] = {}  # key -> [RLock, number of users]

    def acquire(self, key: object) -> list[Any]:
        with self.guard:
            entry = self.entries.get(key)
            if entry is None:
                entry = self.entries[key] = [threading.RLock(), 0]
            entry[1] += 1
        entry[0].acquire()
        return entry

    def release(self, key: object, entry: list[Any]) -> None:
        entry[0].release()
        with self.guard:
            entry[1] -= 1
            if entry[1] == 0 and self.entries.get(key) is entry:
                del self.entries[key]


_keyed = _KeyedLocks()


@contextmanager
def locked(key: object) -> Iterator[None]:
    """Hold the lock of `key` (hashable; compared by value)."""
    locks = _keyed  # the table this thread took its lock from, even across a fork
    entry = locks.acquire(key)
    try:
        yield
    finally:
        locks.release(key, entry)


def once(cache: Any, key: object, build: Callable[[], T]) -> T:
    """`cache[key]`, built by `build()` if missing; concurrent callers for the
    same cache and key wait for the first one and get its result. `cache` is
    any mapping with `get` and item assignment (a dict, a WeakValueDictionary).
    A `build` that raises caches nothing: the next caller tries again."""
    hit = cache.get(key)
    if hit is not None:
        return hit
    # The lock's key names the cache object: while a thread holds the lock,
    # it also holds the cache, so its id is not reused meanwhile.
    with locked((id(cache), key)):
        hit = cache.get(key)
        if hit is None:
            hit = build()
            cache[key] = hit
        return hit


# Packages whose modules compilation imports (many lazily, inside
# functions), and the other modules those functions import.
_COMPILER_PACKAGES = ("adpasses", "adpasses.dialects", "adpasses.frontend", "adpasses.lowering",
                      "adpasses.ops", "adpasses.reverse.rules", "adpasses.transforms")
_NOT_COMPILER = ("adpasses.tools.fuzz", "adpasses.tools", "adpasses.__main__")
_LAZY_IMPORTS = ("llvmlite.binding", "xdsl.printer", "xdsl.universe", "xdsl.pattern_rewriter",
                 "xdsl.traits", "xdsl.transforms.canonicalize",
                 "xdsl.transforms.common_subexpression_elimination",
                 "xdsl.transforms.dead_code_elimination")
_compiler_loaded = False


def load_compiler() -> None:
    """Import every module a compilation may import, once per process,
    holding LLVM_LOCK. A fork waits for LLVM_LOCK, so it never copies a
    process in which another thread is half-way through importing one of
    them: the child would wait forever for that module's import lock (seen:
    a child stuck importing adpasses.cache.mincut, which a compiling thread was
    importing at the fork)."""
    global _compiler_loaded
    if _compiler_loaded:
        return
    import importlib
    import pkgutil

    with LLVM_LOCK:
        if _compiler_loaded:
            return
        # Recursively: the stage packages (core, analysis, cache, ...) hold
        # the modules a compilation imports lazily.
        for package in _COMPILER_PACKAGES:
            path = importlib.import_module(package).__path__
            for info in pkgutil.walk_packages(path, package + "."):
                if not info.name.startswith(_NOT_COMPILER):
                    importlib.import_module(info.name)
        for name in _LAZY_IMPORTS:
            importlib.import_module(name)
        # The dialect registry imports importlib.metadata and xDSL's
        # entry-point plugins on first use: the same hazard (seen: a child
        # stuck in Universe.get_multiverse, which a compiling thread was
        # running at the fork), so it is built here too.
        from adpasses.core.context import make_context

        make_context()
        _compiler_loaded = True


def parse_python(source: str) -> ast.Module:
    """`ast.parse(source)`, one thread at a time. CPython 3.11 keeps the
    depth counter of its AST object constructor per interpreter, not per
    thread: two threads parsing at once fail now and then with "SystemError:
    AST constructor recursion depth mismatch" (python/cpython#106905; seen
    here when 8 threads make first calls)."""
    with locked("ast.parse"):
        return ast.parse(source)


# -- fork -------------------------------------------------------------------------------


def _llvmlite_lock():  # type: ignore[no-untyped-def]
    """llvmlite's lock around each of its C calls (llvmlite.binding.ffi),
    or None if this llvmlite has none where we look for it."""
    # Not imported yet: no llvmlite call can be in flight (and a fork
    # handler must not import).
    ffi = sys.modules.get("llvmlite.binding.ffi")
    lock = getattr(getattr(ffi, "lib", None), "_lock", None)
    return lock if hasattr(lock, "__enter__") and hasattr(lock, "__exit__") else None


_held_for_fork: list[object] = []


def _before_fork() -> None:
    LLVM_LOCK.acquire()
    lock = _llvmlite_lock()
    if lock is not None:
        lock.__enter__()
        _held_for_fork.append(lock)


def _release_after_fork() -> None:
    while _held_for_fork:
        _held_for_fork.pop().__exit__(None, None, None)  # type: ignore[attr-defined]
    LLVM_LOCK.release()


def _after_fork_in_child() -> None:
    global _keyed
    # Locks held by threads that the child does not have would never be
    # released: start with none. (The forking thread owns LLVM_LOCK and
    # llvmlite's lock, taken in _before_fork, and releases them.)
    _keyed = _KeyedLocks()
    _release_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_release_after_fork,
                        after_in_child=_after_fork_in_child)
