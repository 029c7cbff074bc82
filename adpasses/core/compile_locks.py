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
  an import lock (a fork must not copy a half-done import: see below);
  `load_compiler(registry=True)` also the parser's dialect registry;
  `load_runtime()` likewise what a call imports besides the compiler.

Fork: a child forked while another thread held one of these locks (or
llvmlite's own lock) would wait forever for a thread that does not exist in
it. `os.register_at_fork` handlers take `LLVM_LOCK` and llvmlite's lock
before the fork (so no LLVM call is in flight while the process is copied:
a fork waits for a running code generation step to finish), and before
them the import lock of `load_compiler`, release them in parent and child
afterwards, and give the child a fresh table of per-key locks. Compilation
imports its modules before its first step (`load_compiler`, under the
import lock), so no thread is inside one of those imports at a fork
either. Imports elsewhere (the cache report, a disk cache load, user code
on any thread) are handled generically by `fork_imports`: the fork waits
for imports in flight on other threads, and the child forgets any module
still half-imported by a thread it does not have. The child then compiles
by itself.
"""

from __future__ import annotations

import ast
import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from adpasses.core import fork_imports

T = TypeVar("T")

LLVM_LOCK = threading.RLock()
# Held while `load_compiler` imports; a fork takes it (before LLVM_LOCK).
# Not LLVM_LOCK itself: LLVM work on another thread (the dispatch builtins,
# adpasses.native.dispatch.prepare) goes on while the compiler is imported.
_IMPORT_LOCK = threading.RLock()


class ChildFreshLock:
    """A module-level lock that a forked child gets back unlocked.

    Locks of the native helpers (BLAS and libmvec symbols, extern
    registrations) are taken on a compile thread, sometimes around a wait
    for `LLVM_LOCK`, which the fork handlers hold: a fork at that moment
    copies them locked, and the child, which lacks the thread that would
    release them, waited forever on its first compilation (CI, test
    fork_while_another_thread_compiles_text). What they guard is computed
    once per process and is idempotent, so the child simply computes it
    again under a fresh lock."""

    _instances: "weakref.WeakSet[ChildFreshLock]"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        ChildFreshLock._instances.add(self)

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        try:
            self._lock.release()
        except RuntimeError:  # taken before a fork, replaced in the child since
            pass

    def __enter__(self) -> "ChildFreshLock":
        self._lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    @classmethod
    def renew_all(cls) -> None:
        for lock in list(cls._instances):
            lock._lock = threading.Lock()


ChildFreshLock._instances = weakref.WeakSet()


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
_registry_loaded = False


def load_compiler(registry: bool = False) -> None:
    """Import every module a compilation may import, once per process,
    holding the import lock. A fork waits for that lock, so it never copies a
    process in which another thread is half-way through importing one of
    them: the child would wait forever for that module's import lock (seen:
    a child stuck importing adpasses.cache.mincut, which a compiling thread was
    importing at the fork).

    `registry=True` (compiling MLIR text: `compile_module(text)`) also
    builds the parser's dialect registry, which imports importlib.metadata
    and xDSL's plugins and the LLVM dialect. The Python API builds its IR
    and never needs it (`core.context.compiler_context`): its first
    gradient does not pay for it (docs/deployment.md, "Cold start")."""
    global _compiler_loaded, _registry_loaded
    if _compiler_loaded and (_registry_loaded or not registry):
        return
    import importlib

    with _IMPORT_LOCK:
        import pkgutil  # under the lock too: a fork must not copy its import half-done

        if not _compiler_loaded:
            # Recursively: the stage packages (core, analysis, cache, ...) hold
            # the modules a compilation imports lazily.
            for package in _COMPILER_PACKAGES:
                path = importlib.import_module(package).__path__
                for info in pkgutil.walk_packages(path, package + "."):
                    if not info.name.startswith(_NOT_COMPILER):
                        importlib.import_module(info.name)
            for name in _LAZY_IMPORTS:
                importlib.import_module(name)
            from adpasses.core.context import compiler_context

            compiler_context()
            _compiler_loaded = True
        if registry and not _registry_loaded:
            # The dialect registry imports importlib.metadata and xDSL's
            # entry-point plugins on first use: the same hazard (seen: a
            # child stuck in Universe.get_multiverse, which a compiling
            # thread was running at the fork), so it is built here too.
            from adpasses.core.context import make_context

            make_context()
            _registry_loaded = True


# What a call imports lazily besides the compiler: loading compiled code
# (the disk cache, the entry callers), the dispatch builtins, llvmlite. None
# of them imports xDSL (a warm process never does).
_RUNTIME_MODULES = ("adpasses.core.stop_codes", "adpasses.api.disk_cache", "adpasses.native.runtime",
                    "adpasses.native.object_cache", "adpasses.native.llvm_jit",
                    "adpasses.native.callers", "adpasses.native.dispatch", "importlib.util")
_runtime_loaded = False


def load_runtime() -> None:
    """Import, once per process and under the import lock, the modules a
    call imports lazily besides the compiler (`_RUNTIME_MODULES`): a fork
    during a process's first call, on any thread, then never copies a
    half-done import of one of them (as `load_compiler` for the compiler).
    Every slow call passes here (`JitFunction.bind`); after the first, the
    test of a flag."""
    global _runtime_loaded
    if _runtime_loaded:
        return
    import importlib

    with _IMPORT_LOCK:
        if not _runtime_loaded:
            for name in _RUNTIME_MODULES:
                importlib.import_module(name)
            _runtime_loaded = True


def import_locked(name: str):  # type: ignore[no-untyped-def]
    """`importlib.import_module(name)` under the import lock (the lazy
    attributes of `adpasses`: a first `adpasses.grad` on some thread)."""
    import importlib

    with _IMPORT_LOCK:
        return importlib.import_module(name)


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
# How long a fork waits for other threads' imports, before and after taking
# the locks (an import normally takes milliseconds; one that waits for the
# forking thread is not waited for).
_IMPORT_WAIT_S = 10.0
_IMPORT_WAIT_HOLDING_S = 2.0


def _before_fork() -> None:
    # Imports other threads have under way finish first (fork_imports), then
    # our locks are taken in the order every thread takes them in (no LLVM
    # step calls load_compiler), and imports begun meanwhile finish too
    # (briefly: the child forgets whatever is still half-imported).
    fork_imports.wait_for_imports(_IMPORT_WAIT_S)
    _IMPORT_LOCK.acquire()
    LLVM_LOCK.acquire()
    lock = _llvmlite_lock()
    if lock is not None:
        lock.__enter__()
        _held_for_fork.append(lock)
    fork_imports.wait_for_imports(_IMPORT_WAIT_HOLDING_S)


def _release_after_fork() -> None:
    while _held_for_fork:
        _held_for_fork.pop().__exit__(None, None, None)  # type: ignore[attr-defined]
    LLVM_LOCK.release()
    _IMPORT_LOCK.release()


def _after_fork_in_child() -> None:
    global _keyed
    # Locks held by threads that the child does not have would never be
    # released: start with none. (The forking thread owns the import lock,
    # LLVM_LOCK and llvmlite's lock, taken in _before_fork, and releases them.)
    _keyed = _KeyedLocks()
    ChildFreshLock.renew_all()
    fork_imports.forget_orphaned_imports()
    _release_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_release_after_fork,
                        after_in_child=_after_fork_in_child)
