"""Run many cases in worker processes, surviving crashes and hangs.

Each worker (a `spawn`ed Python process, so nothing compiled in the parent
leaks in) receives batches of seeds and sends one outcome per seed as soon
as it is known. So when a worker dies (a signal: segfault, abort) the
parent knows the seed in flight; it re-runs that seed alone in a fresh
worker to tell a crash of that program from one caused by an earlier
program of the batch (memory corruption), and queues the rest of the batch
again. A worker silent for longer than the timeout is killed and its seed
reported as a crash ("timeout"). Workers are replaced after
`RECYCLE_AFTER` cases, which bounds the memory the JIT's engines hold.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait

from adpasses.tools.fuzz.check import Outcome
from adpasses.tools.fuzz.program import Program

RECYCLE_AFTER = 250


@dataclass
class Result:
    seed: int
    outcome: Outcome
    seconds: float


# -- the worker side --------------------------------------------------------------------


def run_case(item: int | Program) -> Outcome:
    """Generate (for a seed) and check one program; errors of the fuzzer
    itself are reported as `fuzzer error`, never as findings."""
    import warnings

    from adpasses.tools.fuzz.check import check_program
    from adpasses.tools.fuzz.generate import generate

    warnings.simplefilter("ignore")  # numpy overflow warnings of rejected points
    try:
        program = generate(item) if isinstance(item, int) else item
        return check_program(program)
    except Exception as err:  # noqa: BLE001
        return Outcome("fuzzer error", f"{type(err).__name__}: {err}")
    finally:
        forget_compiled()


def forget_compiled() -> None:
    """Drop the JIT's in-memory caches of compiled modules: every program is
    new (each entry holds an MCJIT engine until nothing uses it)."""
    from adpasses.native import llvm_jit

    llvm_jit.clear_caches()


def _worker(conn: Connection, case: Callable[[int | Program], Outcome]) -> None:
    while True:
        batch = conn.recv()
        if batch is None:
            return
        for item in batch:
            start = time.perf_counter()
            outcome = case(item)
            conn.send((outcome, time.perf_counter() - start))


# -- the parent side --------------------------------------------------------------------


def _exit_reason(process: mp.Process) -> str:
    process.join(timeout=5)
    code = process.exitcode
    if code is not None and code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"worker exited with status {code}"


@dataclass
class _Worker:
    process: mp.Process
    conn: Connection
    pending: deque = field(default_factory=deque)
    """(seed, isolated) in flight, in order; isolated: run alone in a fresh
    process to confirm a crash."""
    history: list[int] = field(default_factory=list)
    """Seeds this process finished, in order."""
    since: float = 0.0

    case: Callable = run_case

    @classmethod
    def start(cls, case: Callable[[int | Program], Outcome]) -> _Worker:
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_worker, args=(child, case), daemon=True)
        process.start()
        child.close()
        return cls(process, parent, case=case)

    def send(self, items: list[tuple[int, bool]]) -> None:
        self.pending.extend(items)
        self.since = time.monotonic()
        self.conn.send([seed for seed, _ in items])

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()

    def kill(self) -> None:
        self.process.kill()
        self.process.join(timeout=5)


class _Pool:
    """Workers, the queue of batches, and what to do when a worker dies."""

    def __init__(self, batches: list[list[tuple[int, bool]]], jobs: int, timeout: float,
                 report: Callable[[int, Outcome, float], None], case: Callable):
        self.queue: deque[list[tuple[int, bool]]] = deque(batches)
        self.timeout = timeout
        self.report = report
        self.case = case
        self.crashed_after: dict[int, list[int]] = {}
        self.workers = [_Worker.start(case) for _ in range(max(1, min(jobs, len(batches))))]

    def run(self) -> None:
        try:
            while self.queue or any(w.pending for w in self.workers):
                self.dispatch()
                busy = {w.conn: w for w in self.workers if w.pending}
                for conn in wait(list(busy), timeout=1.0):
                    self.receive(busy[conn])
                self.check_timeouts()
        finally:
            for w in self.workers:
                w.stop()

    def dispatch(self) -> None:
        for k, w in enumerate(self.workers):
            if w.pending or not self.queue:
                continue
            isolated = self.queue[0][0][1]
            if len(w.history) >= RECYCLE_AFTER or (isolated and w.history):
                w.stop()
                self.workers[k] = w = _Worker.start(self.case)
            w.send(self.queue.popleft())

    def receive(self, w: _Worker) -> None:
        seed, isolated = w.pending[0]
        try:
            outcome, seconds = w.conn.recv()
        except (EOFError, OSError):
            self.died(w)
            return
        w.pending.popleft()
        w.history.append(seed)
        w.since = time.monotonic()
        if isolated and seed in self.crashed_after:
            outcome = Outcome("crash", f"the worker died running this seed after seeds "
                              f"{self.crashed_after[seed]}; alone it gives: {outcome.kind} "
                              f"{outcome.detail}".strip())
        self.report(seed, outcome, seconds)

    def died(self, w: _Worker) -> None:
        """A worker died running `w.pending[0]`: a crash if it was alone in a
        fresh process; otherwise run it again so, alone."""
        seed, isolated = w.pending.popleft()
        reason = _exit_reason(w.process)
        if isolated:
            self.report(seed, Outcome("crash", reason), 0.0)
        else:
            self.crashed_after[seed] = list(w.history)
            if not w.history:  # it was alone already
                self.crashed_after.pop(seed)
                self.report(seed, Outcome("crash", reason), 0.0)
            else:
                self.queue.appendleft([(seed, True)])
        self.restart(w)

    def check_timeouts(self) -> None:
        now = time.monotonic()
        for w in list(self.workers):
            if w.pending and now - w.since > self.timeout:
                seed, _ = w.pending.popleft()
                w.kill()
                self.report(seed, Outcome("crash", f"timeout: no result after {self.timeout:.0f} s"),
                            self.timeout)
                self.restart(w)

    def restart(self, w: _Worker) -> None:
        """Queue the rest of the dead worker's batch again; start a new one."""
        rest = list(w.pending)
        if rest:
            self.queue.appendleft(rest)
        self.workers[self.workers.index(w)] = _Worker.start(self.case)


def run_seeds(seeds: Iterable[int], *, jobs: int = 1, timeout: float = 120.0, batch: int = 20,
              on_result: Callable[[Result], None] | None = None,
              case: Callable[[int | Program], Outcome] = run_case) -> list[Result]:
    """Check every seed in `jobs` worker processes; one result per seed, in
    completion order. `case` (a module-level function, so workers can import
    it) checks one seed."""
    seeds = list(seeds)
    batches = [[(s, False) for s in seeds[k:k + batch]] for k in range(0, len(seeds), batch)]
    results: list[Result] = []

    def report(seed: int, outcome: Outcome, seconds: float) -> None:
        results.append(Result(seed, outcome, seconds))
        if on_result:
            on_result(results[-1])

    if batches:
        _Pool(batches, jobs, timeout, report, case).run()
    return results


class WorkerCheck:
    """`check(program) -> Outcome` in a separate process that is restarted
    after a crash or a hang (for shrinking crashing programs)."""

    def __init__(self, timeout: float = 120.0, case: Callable[[int | Program], Outcome] = run_case):
        self.timeout = timeout
        self.case = case
        self.worker = _Worker.start(case)

    def __call__(self, program: Program) -> Outcome:
        self.worker.conn.send([program])
        try:
            if not self.worker.conn.poll(self.timeout):
                self.worker.kill()
                self.worker = _Worker.start(self.case)
                return Outcome("crash", f"timeout: no result after {self.timeout:.0f} s")
            outcome, _ = self.worker.conn.recv()
        except (EOFError, OSError):
            reason = _exit_reason(self.worker.process)
            self.worker = _Worker.start(self.case)
            return Outcome("crash", reason)
        if len(self.worker.history) > RECYCLE_AFTER:
            self.worker.stop()
            self.worker = _Worker.start(self.case)
        self.worker.history.append(program.seed)
        return outcome

    def close(self) -> None:
        self.worker.stop()
