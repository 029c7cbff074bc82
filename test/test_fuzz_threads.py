"""The fuzzer's threads mode (tools/fuzz/threads.py, docs/fuzzing.md):
a few seeds compiled and called from several threads at once, a planted
bug that only threads see, and the command line.
"""

from __future__ import annotations

import contextvars
import threading
from collections import Counter

import pytest
from xdsl.dialects import math

import adpasses.reverse.rules
from adpasses.tools.fuzz import threads as fuzz_threads
from adpasses.tools.fuzz.__main__ import main
from adpasses.tools.fuzz.check import THREAD_KINDS, Outcome
from adpasses.tools.fuzz.generate import generate
from adpasses.tools.fuzz.program import Op, program_size, stmt_exprs, sub_exprs, walk_stmts
from adpasses.tools.fuzz.runner import forget_compiled, run_seeds
from adpasses.tools.fuzz.threads import check_threads, threads_case

THREAD_SEEDS = range(16)


def test_threads_mode_on_a_set_of_seeds():
    """4 threads compile and call each program at once (first call
    included): every call equals the single-threaded one (2 workers)."""
    results = run_seeds(THREAD_SEEDS, jobs=2, timeout=180, case=threads_case(4))
    assert len(results) == len(THREAD_SEEDS)
    kinds = Counter(r.outcome.kind for r in results)
    failures = [f"seed {r.seed}: {r.outcome.kind}: {r.outcome.detail}" for r in results
                if r.outcome.kind not in ("ok", "discard")]
    assert not failures, "\n".join(failures)
    assert kinds["ok"] >= len(THREAD_SEEDS) - 2, kinds


def test_thread_kinds_are_failures():
    assert THREAD_KINDS == ("thread mismatch", "thread error")
    assert all(Outcome(kind).failed for kind in THREAD_KINDS)


_IN_WORKER_THREAD = contextvars.ContextVar("in_worker_thread", default=False)


class _SinIsCosInThreads(dict):
    """The rule table, except that sin is differentiated as cos when the
    compilation was started by one of the mode's worker threads (the
    context variable reaches the compiler's own threads)."""

    def get(self, key, default=None):  # type: ignore[no-untyped-def, override]
        if key is math.SinOp and _IN_WORKER_THREAD.get():
            return super().get(math.CosOp, default)
        return super().get(key, default)


def _uses_sin(p) -> bool:  # type: ignore[no-untyped-def]
    def has(e) -> bool:  # type: ignore[no-untyped-def]
        return (isinstance(e, Op) and e.op == "sin") or any(has(x) for x in sub_exprs(e))

    return any(has(e) for s in walk_stmts(p.body) for e in stmt_exprs(s)) or any(
        has(e) for e in p.results)


def test_a_bug_only_threads_see_is_found(monkeypatch):
    """A compilation that goes wrong only when started from a worker thread
    (sin differentiated as cos there) makes a `thread mismatch`; the same
    program without the planted bug is ok."""
    compile_case = fuzz_threads.compile_case

    def marked_compile_case(p):  # type: ignore[no-untyped-def]
        _IN_WORKER_THREAD.set(threading.current_thread() is not threading.main_thread())
        return compile_case(p)

    program = next(p for p in map(generate, range(200))
                   if _uses_sin(p) and program_size(p) <= 60 and "dup" in p.activity)
    assert check_threads(program, 3).kind == "ok"
    forget_compiled()
    monkeypatch.setattr(adpasses.reverse.rules, "_TABLE", _SinIsCosInThreads(adpasses.reverse.rules.rule_table()))
    monkeypatch.setattr(fuzz_threads, "compile_case", marked_compile_case)
    outcome = check_threads(program, 3)
    forget_compiled()
    assert outcome.kind == "thread mismatch", outcome
    assert "gradient call 1" in outcome.detail and "thread 0 of 3" in outcome.detail


def test_command_line(capsys):
    assert main(["--seeds", "2", "--start", "5", "--threads", "3", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "checked 2 programs" in out and "thread mismatch: 0" in out and "thread error: 0" in out
    assert main(["--case", "5", "--threads", "2"]) == 0
    assert capsys.readouterr().out.startswith("seed 5: ok")
    for bad in (["--threads", "1"], ["--threads", "2", "--aliased"], ["--threads", "2", "--shrink"]):
        with pytest.raises(SystemExit):
            main(bad)
        assert "--threads" in capsys.readouterr().err
