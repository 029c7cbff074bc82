"""Compilation on a thread with a large stack and a high recursion limit.

Compiling recurses in proportion to the input's nesting: the frontend's AST
walk over a long expression, xDSL's parser, verifier and printer over nested
regions, our passes and the lowering, and, in C++, LLVM's optimiser (constant
folding a 50,000-op chain recurses once per op: it overflowed the 8 MB main
stack). A Python `RecursionError` is caught and reported; a C stack overflow
kills the process. So every compiler entry point (`build_module`,
`differentiate`, `compile_module`, `emit_llvm_ir`, `ad-opt`, `ad-run`) runs
its work on a fresh thread with `STACK_BYTES` of stack (virtual memory: only
the pages a deep compile touches are committed) while the interpreter's
recursion limit is at least `RECURSION_LIMIT`.

`RECURSION_LIMIT` is sized to the stack: a Python frame that recurses through
C (a constructor, `map`, a generator) measured 400-800 bytes of C stack on
CPython 3.11; the limit allows 5 KB per level. The limit is interpreter-wide
on CPython 3.11, so it is raised only while some compilation runs and put
back when the last one ends.

The hop costs one thread start (about 80 us); nested entry points run inline
on the thread they are already on. Exceptions (and their tracebacks) reach the
caller unchanged; context variables are copied into the thread.
"""

from __future__ import annotations

import contextvars
import functools
import os
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

STACK_BYTES = 512 << 20
RECURSION_LIMIT = 100_000
# If the operating system refuses a stack this large, smaller ones are tried
# before compiling on the caller's thread as before.
_FALLBACK_STACKS = (STACK_BYTES, 128 << 20, 32 << 20)

_local = threading.local()
_start_lock = threading.Lock()   # threading.stack_size is process-wide
_limit_lock = threading.Lock()
_running = 0                     # compilations holding the raised limit
_saved_limit: int | None = None
_stack_size_before: int | None = None  # set while threading.stack_size is ours


def on_compile_thread() -> bool:
    """True when running on a compile thread (a big stack, a high limit)."""
    return getattr(_local, "stack_bytes", 0) > 0


def current_stack_bytes() -> int | None:
    """The stack size of the calling thread when this module started it."""
    return getattr(_local, "stack_bytes", None)


def compile_entry(fn: Callable[..., T]) -> Callable[..., T]:
    """Decorator: run `fn` on a compile thread unless already on one; a
    `RecursionError` that still escapes becomes a `CompileError`."""

    @functools.wraps(fn)
    def entry(*args: object, **kwargs: object) -> T:
        if on_compile_thread():
            return fn(*args, **kwargs)
        try:
            return run_with_stack(fn, *args, **kwargs)
        except RecursionError:
            raise too_deep_error() from None  # its traceback is thousands of frames

    return entry


def too_deep_error(location: str | None = None):  # type: ignore[no-untyped-def]
    """The `CompileError` for input nested beyond the recursion limit."""
    from adpasses.core.diagnostics import CompileError

    return CompileError(
        f"this is nested too deeply to compile (the compiler's recursion went past "
        f"{max(RECURSION_LIMIT, sys.getrecursionlimit())} levels); split long expressions into "
        "statements with intermediate variables, and deeply nested loops, ifs or regions into "
        "functions", location=location)


def run_with_stack(fn: Callable[..., T], *args: object, stack_bytes: int = STACK_BYTES,
                   **kwargs: object) -> T:
    """`fn(*args, **kwargs)` on a new thread with `stack_bytes` of stack and
    the raised recursion limit; its result or exception. Where no such thread
    can be started, `fn` runs on the caller's thread."""
    context = contextvars.copy_context()
    outcome: list[tuple[bool, object]] = []

    def body(size: int) -> None:
        _local.stack_bytes = size
        _raise_limit()
        try:
            outcome.append((True, context.run(fn, *args, **kwargs)))
        except BaseException as err:  # noqa: BLE001 - handed to the caller as is
            outcome.append((False, err))
        finally:
            _restore_limit()

    thread = _start(body, stack_bytes)
    if thread is None:
        return fn(*args, **kwargs)
    thread.join()
    ok, value = outcome[0]
    if ok:
        return value  # type: ignore[return-value]
    assert isinstance(value, BaseException)
    try:
        raise value
    finally:
        del value  # no reference cycle through this frame


def _start(body: Callable[[int], None], stack_bytes: int) -> threading.Thread | None:
    global _stack_size_before
    sizes = [stack_bytes] + [s for s in _FALLBACK_STACKS if s < stack_bytes]
    with _start_lock:
        previous = _stack_size_before = threading.stack_size()
        try:
            for size in sizes:
                try:
                    threading.stack_size(size)
                    thread = threading.Thread(target=body, args=(size,),
                                              name="adpasses-compile", daemon=True)
                    thread.start()
                    return thread
                except (RuntimeError, ValueError, MemoryError):
                    continue  # the system refused this stack: try a smaller one
            return None
        finally:
            threading.stack_size(previous)
            _stack_size_before = None


def _after_fork_in_child() -> None:
    """A forked child has none of the parent's compile threads: locks they
    held would never be released, and the limit they raised stays raised."""
    global _start_lock, _limit_lock, _running, _saved_limit
    _start_lock, _limit_lock = threading.Lock(), threading.Lock()
    if _running and _saved_limit is not None and sys.getrecursionlimit() == RECURSION_LIMIT:
        sys.setrecursionlimit(_saved_limit)
    _running, _saved_limit = 0, None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _raise_limit() -> None:
    global _running, _saved_limit
    with _limit_lock:
        if _running == 0:
            current = sys.getrecursionlimit()
            if current < RECURSION_LIMIT:
                _saved_limit = current
                sys.setrecursionlimit(RECURSION_LIMIT)
        _running += 1


def _restore_limit() -> None:
    global _running, _saved_limit
    with _limit_lock:
        _running -= 1
        if _running == 0 and _saved_limit is not None:
            # Put the user's limit back unless they changed it meanwhile.
            if sys.getrecursionlimit() == RECURSION_LIMIT:
                sys.setrecursionlimit(_saved_limit)
            _saved_limit = None


def _after_fork_in_child() -> None:
    """Only the forking thread survives a fork: the compilations of other
    threads are gone, and a lock one of them held would stay locked forever.
    Fresh locks, the user's recursion limit and thread stack size back."""
    global _start_lock, _limit_lock, _running, _saved_limit, _stack_size_before
    _start_lock, _limit_lock = threading.Lock(), threading.Lock()
    if _stack_size_before is not None:
        threading.stack_size(_stack_size_before)
        _stack_size_before = None
    if on_compile_thread():  # forked from inside a compilation: it goes on here
        _running = 1
        return
    if _saved_limit is not None and sys.getrecursionlimit() == RECURSION_LIMIT:
        sys.setrecursionlimit(_saved_limit)
    _running, _saved_limit = 0, None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
