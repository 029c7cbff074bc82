"""The parallel mode of the fuzzer (`tools/fuzz/parallel.py`, `--mode
parallel`): seeds with loops proven parallel pass on 3, 2 and 1 threads,
and the checker reports a parallel run that differs from the serial one,
and a parallel run whose bits change from one call to the next (planted:
so a passing run means something)."""

from __future__ import annotations

import numpy as np

from adpasses.tools.fuzz import parallel
from adpasses.tools.fuzz.__main__ import main
from adpasses.tools.fuzz.check import Outcome
from adpasses.tools.fuzz.parallel import THREAD_COUNTS, run_parallel_case

SEED = 2  # its primal and gradient each run loops in parallel (pattern inner)


def test_a_seed_with_parallel_loops_passes_on_every_thread_count() -> None:
    outcome = run_parallel_case(SEED)
    assert outcome.kind == "ok", outcome.detail
    assert "primal 0" not in outcome.detail and "gradient 0" not in outcome.detail, outcome.detail
    assert THREAD_COUNTS[0] > 2 and 1 in THREAD_COUNTS


def _wrap_parallel_gradient(monkeypatch, change) -> None:  # type: ignore[no-untyped-def]
    """Plant a bug: the parallel variant's gradient passes its shadows through
    `change(shadows, threads, call number)` after each call."""
    from adpasses.native.runtime import get_num_threads

    real = parallel.compile_variant
    calls = [0]

    def compile_variant(p, parallel):  # type: ignore[no-untyped-def]
        primal, gradient, a, b = real(p, parallel)
        if not parallel:
            return primal, gradient, a, b

        def planted(*args):  # type: ignore[no-untyped-def]
            out = gradient(*args)
            calls[0] += 1
            for arg in args:
                if isinstance(arg, np.ndarray) and arg.size and arg.dtype == np.float64:
                    change(arg, get_num_threads(), calls[0])
            return out
        return primal, planted, a, b

    monkeypatch.setattr(parallel, "compile_variant", compile_variant)


def test_a_parallel_gradient_off_on_two_threads_is_a_mismatch(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def off(arr, threads, _):  # type: ignore[no-untyped-def]
        if threads == 2:
            arr *= 1 + 1e-6

    _wrap_parallel_gradient(monkeypatch, off)
    outcome = run_parallel_case(SEED)
    assert outcome.kind == "parallel mismatch", outcome
    assert "gradient on 2 threads" in outcome.detail


def test_a_parallel_gradient_that_changes_by_an_ulp_between_calls_is_nondeterminism(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # An ulp is within the serial comparison's tolerance: only the
    # same-thread-count comparison sees it.
    def flicker(arr, _, call):  # type: ignore[no-untyped-def]
        if call % 2 == 0:
            arr[...] = np.nextafter(arr, np.inf)

    _wrap_parallel_gradient(monkeypatch, flicker)
    outcome = run_parallel_case(SEED)
    assert outcome.kind == "parallel nondeterminism", outcome
    assert "gradient on 3 threads: a second call" in outcome.detail


def test_concurrent_python_threads_are_compared_bit_for_bit() -> None:
    from adpasses.tools.fuzz.parallel import concurrent_calls

    seen = []
    records = concurrent_calls(lambda: seen.append(1) or ("returned", (1.0,), [np.ones(3)]))
    assert len(records) == parallel.CONCURRENT == len(seen)
    assert all(parallel.same(r, records[0]) for r in records)
    assert not parallel.same(("returned", (1.0,), [np.ones(3)]),
                             ("returned", (1.0,), [np.nextafter(np.ones(3), 2.0)]))


def test_parallel_kinds_are_failures_and_set_the_exit_status(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    for kind in parallel.PARALLEL_KINDS:
        assert Outcome(kind).failed
    monkeypatch.setattr(parallel, "check_parallel", lambda p: Outcome("parallel nondeterminism", "planted"))
    assert main(["--mode", "parallel", "--case", "3"]) == 1
    assert "parallel nondeterminism planted" in capsys.readouterr().out
