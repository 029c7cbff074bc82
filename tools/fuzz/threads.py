"""The threads mode of the fuzzer: `python -m adpasses.tools.fuzz --threads N`.

Each seed's program (the same programs as the default mode) is compiled
and called by N threads at once, first call included: after a barrier,
every thread parses the program, differentiates it and compiles it (one
compilation runs, the others wait for it and share it: `compile_once`),
then calls the compiled primal and gradient `REPEATS` times on its own
copies of the input point, while the other threads do the same. Then the
program is compiled again on the calling thread alone (a fresh module) and
called once: every thread's every call must give exactly what that
single-threaded call gives (results, final buffers, shadows; bit for bit,
NaN equal to NaN; an exception must be the same exception).

Compilation is deterministic (the same IR text twice in a process), so an
exact comparison is right. What this mode catches that the default one
cannot: state that compiled code or the compiler shares between threads
(caches, tape workspaces, the error slot, locks, code freed while a thread
still runs it). Correctness of the numbers themselves is the default
mode's job: the default mode runs the same seeds against the oracle.

Outcome kinds: `thread mismatch` (a thread's call differs from the
single-threaded one), `thread error` (a thread raised where the
single-threaded run did not, or the other way round); a hang or a dying
worker is a `crash` (runner.py); a program with no usable input point is
discarded, one the compiler rejects is a `compiler error` (as in the
default mode).
"""

from __future__ import annotations

import functools
import math
import threading

import numpy as np

from adpasses.tools.fuzz.check import Outcome, choose_point, compile_case
from adpasses.tools.fuzz.inputs import Point, as_tuple, call_args
from adpasses.tools.fuzz.program import Program
from adpasses.tools.fuzz.to_python import Oracle

REPEATS = 3
"""Calls of the primal and of the gradient per thread."""
SWITCH_INTERVAL = 1e-5
"""Seconds between the interpreter's thread switches while threads run
(the default 5 ms would let each thread finish its calls alone)."""

Record = tuple
"""What one call gave: ("returned", results, final buffers[, shadows]) or
("raised", exception type, message)."""


def call_primal(p: Program, primal, point: Point) -> Record:  # type: ignore[no-untyped-def]
    work = [b.copy() for b in point.buffers]
    try:
        out = as_tuple(primal(*call_args(p, work, point.floats)))
    except Exception as err:  # noqa: BLE001 - compared with the single-threaded run
        return ("raised", type(err).__name__, str(err))
    return ("returned", tuple(float(v) for v in out), work)


def call_gradient(p: Program, gradient, point: Point) -> Record:  # type: ignore[no-untyped-def]
    work = [b.copy() for b in point.buffers]
    shadows = [point.shadow_seeds[b].copy() if b in point.shadow_seeds else np.zeros(0)
               for b in range(len(work))]
    args = call_args(p, work, point.floats, shadows)
    args += [s for s, act in zip(point.result_seeds, p.ret_activity) if act == "active"]
    try:
        out = as_tuple(gradient(*args))
    except Exception as err:  # noqa: BLE001 - compared with the single-threaded run
        return ("raised", type(err).__name__, str(err))
    return ("returned", tuple(float(v) for v in out), work, shadows)


def same(a: Record, b: Record) -> bool:
    """Bit for bit (NaN equal to NaN, -0.0 equal to 0.0)."""
    if a[0] != b[0] or len(a) != len(b):
        return False
    if a[0] == "raised":
        return a == b
    values_a, values_b = a[1], b[1]
    if len(values_a) != len(values_b) or not all(
            x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(values_a, values_b)):
        return False
    return all(len(xs) == len(ys) and all(np.array_equal(x, y, equal_nan=True) for x, y in zip(xs, ys))
               for xs, ys in zip(a[2:], b[2:]))


def describe(record: Record) -> str:
    if record[0] == "raised":
        return f"raised {record[1]}: {record[2].splitlines()[0] if record[2] else ''}"
    return f"returned {list(record[1])}"


def run_at_once(work, threads: int) -> None:  # type: ignore[no-untyped-def]
    """`work(t)` for t in range(threads), each on its own Python thread,
    with a short switch interval so the threads interleave as much as
    they can; returns when all have finished."""
    import sys

    interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()
    finally:
        sys.setswitchinterval(interval)


def check_threads(p: Program, threads: int) -> Outcome:
    """Run `p` from `threads` threads at once, then alone; compare."""
    from adpasses.native import llvm_jit

    found = choose_point(p, Oracle(p))
    if isinstance(found, str):
        return Outcome("discard", found)
    point, _ = found
    barrier = threading.Barrier(threads)
    calls: dict[int, list[tuple[str, Record]]] = {t: [] for t in range(threads)}
    compile_errors: dict[int, str] = {}

    def work(t: int) -> None:
        barrier.wait()
        try:
            primal, gradient = compile_case(p)
        except Exception as err:  # noqa: BLE001 - compared with the single-threaded compile
            compile_errors[t] = f"{type(err).__name__}: {err}"
            return
        for _ in range(REPEATS):
            calls[t].append(("primal", call_primal(p, primal, point)))
            calls[t].append(("gradient", call_gradient(p, gradient, point)))

    llvm_jit.clear_caches()
    run_at_once(work, threads)

    llvm_jit.clear_caches()  # the reference: a fresh compilation, one thread
    try:
        primal, gradient = compile_case(p)
    except Exception as err:  # noqa: BLE001 - the default mode's finding
        text = f"{type(err).__name__}: {err}"
        if len(compile_errors) != threads:
            return Outcome("thread error", f"compiling alone raised {text.splitlines()[0]}, but "
                           f"{threads - len(compile_errors)} of {threads} threads compiled it")
        return Outcome("compiler error", text.splitlines()[0])
    if compile_errors:
        t, text = next(iter(compile_errors.items()))
        return Outcome("thread error", f"thread {t} of {threads}: compiling raised "
                       f"{text.splitlines()[0]}; alone it compiles")
    reference = {"primal": call_primal(p, primal, point), "gradient": call_gradient(p, gradient, point)}
    for t, records in calls.items():
        for k, (what, record) in enumerate(records):
            want = reference[what]
            if not same(record, want):
                kind = "thread error" if record[0] != want[0] else "thread mismatch"
                return Outcome(kind, f"thread {t} of {threads}, {what} call {k // 2 + 1}: "
                               f"{describe(record)}; alone: {describe(want)}")
    return Outcome("ok")


def run_threads_case(item: int, threads: int) -> Outcome:
    """One seed of the threads mode (the runner's `case` in worker processes)."""
    import warnings

    from adpasses.tools.fuzz.generate import generate
    from adpasses.tools.fuzz.runner import forget_compiled

    warnings.simplefilter("ignore")
    try:
        return check_threads(generate(item), threads)
    except Exception as err:  # noqa: BLE001
        return Outcome("fuzzer error", f"{type(err).__name__}: {err}")
    finally:
        forget_compiled()


def threads_case(threads: int):  # type: ignore[no-untyped-def]
    """The runner's `case` for N threads (picklable, for spawned workers)."""
    return functools.partial(run_threads_case, threads=threads)
