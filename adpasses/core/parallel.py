"""`prange` and the thread count of parallel loops (docs/parallel.md).

`prange` is `range` in Python; inside an `adpasses.jit` function it marks
the loop for running on several threads (like numba's `prange`): the
compiler must prove its iterations independent, or raises. The thread
count is read from ADPASSES_NUM_THREADS (default: os.cpu_count()) when the
runtime loads, and set by `adpasses.set_num_threads(n)`.
"""

from __future__ import annotations

import os


def prange(*args: int) -> range:
    """`range(*args)`; in compiled code, a loop whose iterations may run on
    several threads (docs/parallel.md)."""
    return range(*args)


ENV_NUM_THREADS = "ADPASSES_NUM_THREADS"


def default_num_threads() -> int:
    """ADPASSES_NUM_THREADS if set (a positive integer), else the cores."""
    text = os.environ.get(ENV_NUM_THREADS)
    if text is None or text.strip() == "":
        return os.cpu_count() or 1
    try:
        n = int(text)
    except ValueError:
        raise ValueError(f"{ENV_NUM_THREADS}={text!r}: give a positive integer (threads of parallel loops)") from None
    return check_num_threads(n, ENV_NUM_THREADS)


MAX_THREADS = 1024


def check_num_threads(n: object, what: str = "num_threads") -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_THREADS:
        raise ValueError(f"{what} must be an integer from 1 to {MAX_THREADS}, got {n!r}")
    return n
