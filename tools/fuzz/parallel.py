"""The parallel mode of the fuzzer: `python -m adpasses.tools.fuzz --mode parallel`.

Each seed's program (the default mode's programs, with a loop of one of
the shapes `ad-parallelize` proves or must refuse in front of most:
`parallel_patterns.py`) is compiled twice: as it
is, and with every top-level loop of the function marked `ad.parallel`
(what `jit(parallel=True)` does), so `ad-parallelize` runs on its own
(after differentiation) every marked loop of the primal and of the
gradient whose iterations it proves independent. Both are called on the
same input point, the parallel one on 3, 2 and 1 threads
(`THREAD_COUNTS`): results, final buffers and shadows must agree with the
serial call (to `RTOL`: parallel sums add chunk sums, a different rounding
than the serial order), and an exception must be the same exception (type
and message: a bounds error in a chunk reports the serial loop's index).
On each thread count a second call, and on 3 threads two Python threads
calling at once (sharing the pool), must give the first call's bits
(docs/parallel.md, "Determinism").

Outcome kinds: `parallel mismatch` (a value differs from the serial run),
`parallel error` (one raised and the other did not, or another
exception), `parallel nondeterminism` (two runs on the same thread count
differ in a bit); the outcome's detail of an ok program counts the loops
that ran in parallel (`parallel loops: primal P, gradient G`).
"""

from __future__ import annotations

import math

import numpy as np

from adpasses.tools.fuzz.check import PARALLEL_KINDS, Outcome, choose_point
from adpasses.tools.fuzz.program import Program
from adpasses.tools.fuzz.threads import Record, call_gradient, call_primal, describe, run_at_once, same
from adpasses.tools.fuzz.to_mlir import mlir_function
from adpasses.tools.fuzz.to_python import Oracle

THREAD_COUNTS = (3, 2, 1)
"""Threads of the parallel loops, one run each: 3 is more than the 2 cores
of the test machine, so chunks interleave, and a chunk boundary falls
inside small loops; 1 runs the outlined bodies on the calling thread."""
CONCURRENT = 2
"""Python threads calling the parallel program at once (on THREAD_COUNTS[0])."""
RTOL = 1e-9


def compile_variant(p: Program, parallel: bool):  # type: ignore[no-untyped-def]
    """(primal, gradient, loops run in parallel in the primal, in the gradient)."""
    from xdsl.dialects import func

    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.parallelize import mark_parallel, parallel_report
    from adpasses.transforms.reverse_pass import ReverseOptions, differentiate

    o = p.options
    module = parse_module(mlir_function(p), f"fuzz_{p.seed}.mlir")
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    if parallel:
        mark_parallel(functions[p.name])
    primal_loops = sum(problem is None for _, problem in parallel_report(functions[p.name]))
    grad = differentiate(
        module, p.name, p.activity, list(p.ret_activity), with_primal=o.with_primal,
        options=ReverseOptions(cache_policy=o.policy, activity=o.activity, simplify=o.simplify),
    )
    gradient_function = next(op for op in module.ops if isinstance(op, func.FuncOp)
                             and op.sym_name.data == grad.name)
    gradient_loops = sum(problem is None for _, problem in parallel_report(gradient_function))
    compiled = compile_module(module, boundscheck=o.boundscheck, opt_level=o.opt_level)
    return compiled[p.name], compiled[grad.name], primal_loops, gradient_loops


def close(a: Record, b: Record) -> bool:
    if a[0] != b[0] or len(a) != len(b):
        return False
    if a[0] == "raised":
        return a == b

    def near(x: float, y: float) -> bool:
        return (math.isnan(x) and math.isnan(y)) or x == y or abs(x - y) <= RTOL * max(1.0, abs(y))

    if len(a[1]) != len(b[1]) or not all(near(x, y) for x, y in zip(a[1], b[1])):
        return False
    return all(len(xs) == len(ys) and all(
        x.shape == y.shape and np.allclose(x, y, rtol=RTOL, atol=RTOL, equal_nan=True) for x, y in zip(xs, ys))
        for xs, ys in zip(a[2:], b[2:]))


def check_parallel(p: Program) -> Outcome:
    from adpasses.native.runtime import get_num_threads, set_num_threads, set_parallel_min_work

    found = choose_point(p, Oracle(p))
    if isinstance(found, str):
        return Outcome("discard", found)
    point, _ = found
    try:
        serial = compile_variant(p, parallel=False)
    except Exception as err:  # noqa: BLE001 - the default mode's finding
        return Outcome("compiler error", f"{type(err).__name__}: {err}".splitlines()[0])
    parallel = compile_variant(p, parallel=True)
    before = get_num_threads()
    # One chunk per thread however small the loop (the programs' loops are
    # far below the minimum work per chunk, which would run them on the
    # calling thread alone).
    work = set_parallel_min_work(1)
    try:
        calls = (("primal", call_primal, 0), ("gradient", call_gradient, 1))
        want = {what: call(p, serial[k], point) for what, call, k in calls}
        for threads in THREAD_COUNTS:
            set_num_threads(threads)
            for what, call, k in calls:
                got = call(p, parallel[k], point)
                if not close(got, want[what]):
                    kind = "parallel error" if got[0] != want[what][0] or got[0] == "raised" \
                        else "parallel mismatch"
                    return Outcome(kind, f"{what} on {threads} threads: parallel {describe(got)}; "
                                         f"serial {describe(want[what])}")
                # docs/parallel.md, "Determinism": the same bits on every run
                # with the same thread count, also while other Python threads
                # run parallel loops on the same pool.
                again = [call(p, parallel[k], point)]
                if threads == THREAD_COUNTS[0]:
                    again += concurrent_calls(lambda: call(p, parallel[k], point))
                for n, record in enumerate(again):
                    if not same(record, got):
                        how = "a second call" if n == 0 else f"Python thread {n} of {CONCURRENT}"
                        return Outcome("parallel nondeterminism", f"{what} on {threads} threads: "
                                       f"{how} {describe(record)}; first call {describe(got)}"
                                       f"{first_difference(record, got)}")
    finally:
        set_num_threads(before)
        set_parallel_min_work(work)
    return Outcome("ok", f"parallel loops: primal {parallel[2]}, gradient {parallel[3]}")


def concurrent_calls(call) -> list[Record]:  # type: ignore[no-untyped-def]
    """`call()` from CONCURRENT Python threads at once (compiled calls
    release the GIL, so their parallel loops share the pool)."""
    import threading

    barrier = threading.Barrier(CONCURRENT)
    records: list[Record | None] = [None] * CONCURRENT

    def work(t: int) -> None:
        barrier.wait()
        records[t] = call()

    run_at_once(work, CONCURRENT)
    return [r if r is not None else ("raised", "fuzzer", "the thread did not finish") for r in records]


def first_difference(a: Record, b: Record) -> str:
    """Where two returned records first differ (for the outcome's detail)."""
    if a[0] != "returned" or b[0] != "returned":
        return ""
    for group, (xs, ys) in enumerate(zip(a[2:], b[2:])):
        for n, (x, y) in enumerate(zip(xs, ys)):
            if x.shape == y.shape and not np.array_equal(x, y, equal_nan=True):
                at = np.flatnonzero(~((x == y) | (np.isnan(x) & np.isnan(y))))[0]
                what = "buffer" if group == 0 else "shadow"
                return f" ({what} {n} element {at}: {x.flat[at]!r} vs {y.flat[at]!r})"
    return ""


def loops_summary(outcomes: list[Outcome]) -> str:
    """How many ok programs ran a loop in parallel (from their details)."""
    import re

    counts = [tuple(map(int, re.findall(r"(?:primal|gradient) (\d+)", o.detail))) for o in outcomes if o.detail]
    primal = sum(1 for c in counts if c and c[0] > 0)
    gradient = sum(1 for c in counts if len(c) > 1 and c[1] > 0)
    patterns: dict[str, list[int]] = {}
    for o in outcomes:
        found = re.search(r"\(pattern (\w+)\)", o.detail or "")
        if found:
            c = tuple(map(int, re.findall(r"(?:primal|gradient) (\d+)", o.detail)))
            seen = patterns.setdefault(found.group(1), [0, 0, 0])
            seen[0] += 1
            seen[1] += bool(c and c[0] > 0)
            seen[2] += bool(len(c) > 1 and c[1] > 0)
    by_pattern = ", ".join(f"{k} {n} (primal parallel {a}, gradient {b})"
                           for k, (n, a, b) in sorted(patterns.items()))
    return (f"programs with a parallel loop: {primal} of {len(counts)} primals, "
            f"{gradient} of {len(counts)} gradients" + (f"; patterns: {by_pattern}" if by_pattern else ""))


def run_parallel_case(item: int) -> Outcome:
    """One seed of the parallel mode (the runner's `case` in worker processes)."""
    import warnings

    from adpasses.tools.fuzz.generate import generate
    from adpasses.tools.fuzz.parallel_patterns import with_pattern
    from adpasses.tools.fuzz.program import Invalid, validate
    from adpasses.tools.fuzz.runner import forget_compiled

    warnings.simplefilter("ignore")
    try:
        program, pattern = with_pattern(generate(item))
        try:
            validate(program)
        except Invalid:
            program, pattern = generate(item), None
        outcome = check_parallel(program)
        if pattern is not None and outcome.kind == "ok":
            outcome = Outcome(outcome.kind, f"{outcome.detail} (pattern {pattern})")
        return outcome
    except Exception as err:  # noqa: BLE001
        return Outcome("fuzzer error", f"{type(err).__name__}: {err}")
    finally:
        forget_compiled()
