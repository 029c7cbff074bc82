"""Run `work(t)` on n threads released together (a barrier), and report
every thread's exception in the main thread: the isolated thread-safety
tests (test_safety_threads, test_safety_nogil) import it in their child
processes."""

from __future__ import annotations

import threading


def in_threads(n, work):  # type: ignore[no-untyped-def]
    barrier = threading.Barrier(n)
    errors = []

    def run(t):  # type: ignore[no-untyped-def]
        barrier.wait()
        try:
            work(t)
        except BaseException as e:  # reported by the main thread
            errors.append(f"thread {t}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=run, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[:3]
