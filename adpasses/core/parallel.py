"""`prange` and the thread count of parallel loops (docs/parallel.md).

`prange` is `range` in Python; inside an `adpasses.jit` function it marks
the loop for running on several threads (like numba's `prange`): the
compiler must prove its iterations independent, or raises. The thread
count is read from ADPASSES_NUM_THREADS (default: os.cpu_count()) when the
runtime loads, and set by `adpasses.set_num_threads(n)`.
"""

from __future__ import annotations

import operator
import os
import warnings


def prange(*args: int) -> range:
    """`range(*args)`; in compiled code, a loop whose iterations may run on
    several threads (docs/parallel.md)."""
    return range(*args)


ENV_NUM_THREADS = "ADPASSES_NUM_THREADS"

SERIAL_ZERO_FILL_BYTES = 32 << 20
"""A serial gradient zeroes a result shadow of fewer bytes itself (grad
passes np.empty) and leaves a larger one to the caller's np.zeros
(private_copies.zero_marked_shadows, parallel=False). From this size on
(glibc's largest mmap threshold, DEFAULT_MMAP_THRESHOLD_MAX on 64-bit)
`calloc` gets fresh pages the kernel zeroes when they are first touched
and clears nothing with the GIL held, while a fill inside would be one
more pass over memory (kernel 1 strided, n = 10^7: 23 -> 26 ms)."""


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
POOL_FIELDS = {"workers": 2, "pooled_loops": 9, "busy_serial_loops": 10}
"""Words of the worker pool's state (adpasses.lowering.thread_state POOL_*)
that adpasses.native.runtime.pool_stats reports."""


def _integer_in(value: object, low: int, high: int) -> int | None:
    """`value` as an int when it is an integer (numpy's too, not bool) from
    `low` to `high`; else None (the callers say what was expected)."""
    if isinstance(value, bool):
        return None
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None
    return number if low <= number <= high else None


def check_num_threads(n: object, what: str = "num_threads") -> int:
    """`n` as a thread count: any integer (numpy's too, not bool) from 1 to
    MAX_THREADS."""
    count = _integer_in(n, 1, MAX_THREADS)
    if count is not None:
        return count
    raise ValueError(f"{what} must be an integer from 1 to {MAX_THREADS}, got {n!r}")


def startup_num_threads() -> int:
    """The thread count when the runtime loads: ADPASSES_NUM_THREADS, or, when
    that is not a valid count, the cores with a warning that says so. Every
    compiled function loads the runtime, so a bad variable must not stop
    functions that have no parallel loop."""
    try:
        return default_num_threads()
    except ValueError as error:
        cores = os.cpu_count() or 1
        warnings.warn(f"{error}; parallel loops run on {cores} threads (os.cpu_count()) "
                      "until adpasses.set_num_threads(n)", RuntimeWarning, stacklevel=2)
        return cores


ENV_MIN_WORK = "ADPASSES_PARALLEL_MIN_WORK"
DEFAULT_MIN_WORK = 20_000
"""Estimated operations a chunk of a parallel loop must have at least: an
operation of the estimate costs 0.1-0.36 ns, so a chunk is 2-7 us of work,
against about 1 us of hand-off to a worker (measured in docs/parallel.md,
"The runtime", "How 20000 was chosen")."""


ENV_SPIN_US = "ADPASSES_PARALLEL_SPIN_US"
DEFAULT_SPIN_US = 200
"""Microseconds a pool thread spins for the next loop after its chunk, and a
loop for its other chunks, before sleeping (docs/parallel.md, "The runtime")."""
MAX_SPIN_US = 1_000_000


def check_spin_us(us: object, what: str = "spin_us") -> int:
    """`us` as a spin time: an integer from 0 to MAX_SPIN_US (numpy's too, not bool)."""
    value = _integer_in(us, 0, MAX_SPIN_US)
    if value is not None:
        return value
    raise ValueError(f"{what} must be an integer from 0 to {MAX_SPIN_US} (microseconds), got {us!r}")


def startup_spin_us() -> int:
    """ADPASSES_PARALLEL_SPIN_US if set and valid (else a warning), or DEFAULT_SPIN_US."""
    text = os.environ.get(ENV_SPIN_US)
    if text is None or text.strip() == "":
        return DEFAULT_SPIN_US
    try:
        return check_spin_us(int(text), ENV_SPIN_US)
    except ValueError:
        warnings.warn(f"{ENV_SPIN_US}={text!r} is not an integer from 0 to {MAX_SPIN_US}; pool threads spin "
                      f"{DEFAULT_SPIN_US} us", RuntimeWarning, stacklevel=2)
        return DEFAULT_SPIN_US


def check_min_work(work: object, what: str = "min_work") -> int:
    """`work` as a minimum chunk work: an integer >= 1 (numpy's too, not bool)."""
    if not isinstance(work, bool):
        try:
            value = operator.index(work)  # type: ignore[arg-type]
        except TypeError:
            pass
        else:
            if value >= 1:
                return value
    raise ValueError(f"{what} must be a positive integer (estimated operations per chunk), got {work!r}")


def startup_min_work() -> int:
    """ADPASSES_PARALLEL_MIN_WORK if set and valid (else a warning), or
    DEFAULT_MIN_WORK."""
    text = os.environ.get(ENV_MIN_WORK)
    if text is None or text.strip() == "":
        return DEFAULT_MIN_WORK
    try:
        return check_min_work(int(text), ENV_MIN_WORK)
    except ValueError:
        warnings.warn(f"{ENV_MIN_WORK}={text!r} is not a positive integer; parallel loop chunks get at least "
                      f"{DEFAULT_MIN_WORK} operations", RuntimeWarning, stacklevel=2)
        return DEFAULT_MIN_WORK
