"""The parallel mode of the fuzzer: `python -m adpasses.tools.fuzz --mode parallel`.

Each seed's program (the default mode's programs, with a loop of one of
the shapes `ad-parallelize` proves or must refuse in front of most:
`parallel_patterns.py`) is compiled twice: as it
is, and with every top-level loop of the function marked `ad.parallel`
(what `jit(parallel=True)` does), so `ad-parallelize` runs on its own
(after differentiation) every marked loop of the primal and of the
gradient whose iterations it proves independent on `THREADS` threads. Both
are called on the same input point: results, final buffers and shadows
must agree (to `RTOL`: parallel sums add chunk sums, a different rounding
than the serial order), and an exception must be the same exception (type
and message: a bounds error in a chunk reports the serial loop's index).

Outcome kinds: `parallel mismatch` (a value differs), `parallel error`
(one raised and the other did not, or another exception); the outcome's
detail of an ok program counts the loops that ran in parallel
(`parallel loops: primal P, gradient G`).
"""

from __future__ import annotations

import math

import numpy as np

from adpasses.tools.fuzz.check import Outcome, choose_point
from adpasses.tools.fuzz.program import Program
from adpasses.tools.fuzz.threads import Record, call_gradient, call_primal, describe
from adpasses.tools.fuzz.to_mlir import mlir_function
from adpasses.tools.fuzz.to_python import Oracle

PARALLEL_KINDS = ("parallel mismatch", "parallel error")
THREADS = 3
"""Threads of the parallel loops: more than the 2 cores of the test
machine, so chunks interleave, and a chunk boundary inside small loops."""
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
    set_num_threads(THREADS)
    # One chunk per thread however small the loop (the programs' loops are
    # far below the minimum work per chunk, which would run them on the
    # calling thread alone).
    work = set_parallel_min_work(1)
    try:
        for what, call, k in (("primal", call_primal, 0), ("gradient", call_gradient, 1)):
            want = call(p, serial[k], point)
            got = call(p, parallel[k], point)
            if not close(got, want):
                kind = "parallel error" if got[0] != want[0] or got[0] == "raised" else "parallel mismatch"
                return Outcome(kind, f"{what}: parallel {describe(got)}; serial {describe(want)}")
    finally:
        set_num_threads(before)
        set_parallel_min_work(work)
    return Outcome("ok", f"parallel loops: primal {parallel[2]}, gradient {parallel[3]}")


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
