"""Imports in flight on other threads at a `fork` (issue 13, item 1).

CPython guards each module's import with a per-module lock
(`importlib._bootstrap._ModuleLock`) and does not reset those locks in a
forked child. A child forked while another thread is half-way through
importing a module inherits that module half-initialised in `sys.modules`
and its lock owned by a thread the child does not have: the child's first
import of the module waits forever (seen: CI, a child forked just as another
thread's first gradient imported `pkgutil`).

`compile_locks` imports what compilation needs under its own import lock,
but any thread may import anything at any time (the cache report, a disk
cache load, the user's own code). So the fork handlers deal with imports in
general:

- `wait_for_imports(timeout)`, before the fork: wait until no other thread
  holds a module lock, except threads that wait, directly or through a
  chain, for a lock of the forking thread (they cannot finish before the
  fork does). Bounded: after `timeout` seconds the fork goes on.
- `forget_orphaned_imports()`, in the child: a module lock still owned by a
  thread that did not survive the fork (the bound ran out, or an import
  started in the instant between the last check and the fork) is dropped
  together with its half-initialised module, so the child imports that
  module afresh instead of waiting forever.

Both read CPython's importlib internals (`_module_locks`, `_blocking_on`,
the lock's `owner` and `count`); where these are not what this code knows
(another Python version or implementation) they do nothing.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

try:
    import importlib._bootstrap as _bootstrap
except ImportError:  # pragma: no cover - not CPython
    _bootstrap = None  # type: ignore[assignment]


def _module_locks() -> Iterator[tuple[str, Any]]:
    """(module name, lock) for every module lock that exists now."""
    table = getattr(_bootstrap, "_module_locks", None)
    if not isinstance(table, dict):
        return
    for name, ref in list(table.items()):
        lock = ref() if callable(ref) else ref
        if lock is not None and hasattr(lock, "owner") and hasattr(lock, "count"):
            yield name, lock


def _holders(lock: Any) -> int:
    count = lock.count
    return len(count) if isinstance(count, list) else int(count)


def _waits_for(owner: int, me: int) -> bool:
    """Whether thread `owner` waits, through a chain of module locks, for a
    lock held by thread `me` (it cannot finish its import before we fork)."""
    blocking_on = getattr(_bootstrap, "_blocking_on", None)
    if not isinstance(blocking_on, dict):
        return False
    seen: set[int] = set()
    tid = owner
    while tid not in seen:
        seen.add(tid)
        waiting = blocking_on.get(tid)
        if waiting is None:
            return False
        tid = getattr(waiting, "owner", None)  # type: ignore[assignment]
        if tid == me:
            return True
    return False


def imports_in_flight() -> list[str]:
    """Modules that other threads are importing now (and could finish)."""
    me = threading.get_ident()
    return [name for name, lock in _module_locks()
            if _holders(lock) > 0 and lock.owner not in (None, me) and not _waits_for(lock.owner, me)]


def wait_for_imports(timeout: float) -> bool:
    """Wait (releasing the GIL) until `imports_in_flight()` is empty, at
    most `timeout` seconds; whether it became empty."""
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while imports_in_flight():
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.01)
    return True


def forget_orphaned_imports() -> list[str]:
    """In a forked child (only the forking thread survives): drop every
    module lock owned by another thread, and the half-initialised module it
    guarded, so that importing the module starts over. The names dropped."""
    table = getattr(_bootstrap, "_module_locks", None)
    if not isinstance(table, dict):
        return []
    me = threading.get_ident()
    dropped = []
    for name, lock in list(_module_locks()):
        if _holders(lock) == 0 or lock.owner in (None, me):
            continue
        module = sys.modules.get(name)
        spec = getattr(module, "__spec__", None)
        if module is not None and getattr(spec, "_initializing", False):
            del sys.modules[name]
        table.pop(name, None)
        dropped.append(name)
    blocking_on = getattr(_bootstrap, "_blocking_on", None)
    if isinstance(blocking_on, dict):
        for tid in [t for t in blocking_on if t != me]:
            blocking_on.pop(tid, None)
    return dropped
