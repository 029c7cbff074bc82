"""Timing, memory and correctness helpers shared by every benchmark.

Method (docs/benchmarks.md):
- every callable is called once before timing (warm-up: compilation, JAX
  tracing, caches); the time of that first call minus a steady-state call
  is reported as the compile time;
- a timing is the median over `repeats` samples, each sample timing a
  batch of `number` calls (`number` chosen so a sample lasts >= ~20 ms);
  the contenders of one row group are sampled in turns (round-robin) so a
  change of machine load affects all of them alike;
- the clock is the process CPU time (`time.process_time`: every thread of
  this process, user + system) so that other processes on a shared machine
  inflate the figures less; `--wall` switches to `time.perf_counter`. Every
  tool runs on one thread (set before the peers are imported), so CPU time
  and wall time agree on a quiet machine;
- peak memory is the growth of the resident set during one call
  (`/proc/self/status` VmHWM after resetting it through
  `/proc/self/clear_refs`), for every tool alike, and, for numpy-based
  tools, the peak traced by `tracemalloc`;
- before a row is timed, its gradient is compared with ours (max-norm
  relative error < 1e-9 in float64); a row that disagrees is marked.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

TOLERANCE = 1e-9


# -- rows -------------------------------------------------------------------------------


@dataclass
class Row:
    """One measured configuration: a tool on a kernel at a size."""

    section: str                      # "1. strided difference", "issue 5: activity", ...
    kernel: str
    size: str                         # human-readable size, e.g. "n=10^6"
    tool: str                         # "adpasses", "numba hand gradient", "jax (vectorised)", ...
    n: int | None = None              # numeric size, for plots
    primal_s: float | None = None     # one primal evaluation
    grad_s: float | None = None       # one gradient (per gradient for batched rows)
    compile_s: float | None = None    # first call minus a steady call (jit, trace, LLVM)
    peak_rss: int | None = None       # bytes the resident set grew by during one gradient
    peak_traced: int | None = None    # tracemalloc peak during one gradient (numpy-based tools)
    taped_bytes: int | None = None    # adpasses: what the reverse sweep tapes per gradient
    allocations: int | None = None    # adpasses: heap allocations by generated code per gradient
    rel_err: float | None = None      # max-norm relative difference from our gradient
    ok: bool | None = None            # rel_err < TOLERANCE (None: nothing to compare)
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if self.primal_s and self.grad_s:
            return self.grad_s / self.primal_s
        return None

    def to_json(self) -> dict:
        d = asdict(self)
        d["ratio"] = self.ratio
        return d


# -- options ---------------------------------------------------------------------------------


@dataclass
class Options:
    quick: bool = False
    wall: bool = False
    loop_cap_s: float = 20.0          # loop-style peers: skip a size predicted to take longer
    target_s: float = 0.02            # one timing sample lasts at least this long
    repeats: int = 7
    log: Callable[[str], None] = print


OPTIONS = Options()


def clock() -> Callable[[], float]:
    return time.perf_counter if OPTIONS.wall else time.process_time


# -- timing ------------------------------------------------------------------------------------


def first_call(fn: Callable[[], object]) -> tuple[float, object]:
    """Wall time of the first call (compilation included) and its result."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _calibrate(fn: Callable[[], object], timer: Callable[[], float]) -> tuple[int, float]:
    start = timer()
    fn()
    once = max(timer() - start, 1e-7)
    number = 1
    if once < OPTIONS.target_s:
        number = max(1, min(1_000_000, int(OPTIONS.target_s / once)))
        start = timer()
        for _ in range(number):
            fn()
        once = max((timer() - start) / number, 1e-9)
        number = max(1, min(1_000_000, int(OPTIONS.target_s / once)))
    return number, once


def compare(fns: dict[str, Callable[[], object]], repeats: int | None = None) -> dict[str, float]:
    """Median seconds per call of each zero-argument callable, sampled in
    turns. Callables are assumed warm (called once already). Slow callables
    get fewer samples so that one comparison stays within a few seconds."""
    timer = clock()
    repeats = repeats or OPTIONS.repeats
    numbers: dict[str, int] = {}
    slowest = 0.0
    for key, fn in fns.items():
        numbers[key], once = _calibrate(fn, timer)
        slowest = max(slowest, once * numbers[key])
    if slowest > 2.0:
        repeats = min(repeats, 3)
    elif slowest > 0.5:
        repeats = min(repeats, 5)
    if OPTIONS.quick:
        repeats = min(repeats, 3)
    samples: dict[str, list[float]] = {key: [] for key in fns}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for key, fn in fns.items():
                number = numbers[key]
                start = timer()
                for _ in range(number):
                    fn()
                samples[key].append((timer() - start) / number)
    finally:
        if gc_was:
            gc.enable()
    return {key: statistics.median(v) for key, v in samples.items()}




# -- memory --------------------------------------------------------------------------------------


def _status_kb(field_name: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


# glibc malloc: M_TRIM_THRESHOLD, M_MMAP_THRESHOLD (mallopt parameters)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_TIMING_MMAP, _TIMING_TRIM = 32 << 20, 64 << 20


def _mallopt(param: int, value: int) -> bool:
    try:
        import ctypes

        return bool(ctypes.CDLL(None).mallopt(param, value))
    except (OSError, AttributeError):
        return False


def malloc_for_timing() -> bool:
    """Fix glibc's thresholds at the values its dynamic adjustment reaches
    after large frees (mmap 32 MiB, trim 64 MiB): every tool then reuses
    freed heap memory for arrays below 32 MiB, as it would once warm, and
    the run does not depend on which tool freed a big block first."""
    return _mallopt(_M_MMAP_THRESHOLD, _TIMING_MMAP) and _mallopt(_M_TRIM_THRESHOLD, _TIMING_TRIM)


def peak_rss(fn: Callable[[], object]) -> int | None:
    """Bytes by which the resident set's high-water mark during one call
    exceeds the resident set before it (Linux; None elsewhere). During the
    call glibc serves every block of 16 KiB or more with a fresh mmap, so
    memory a tool allocates shows up in the resident set even when freed
    heap memory would otherwise have absorbed it."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return None
    changed = _mallopt(_M_MMAP_THRESHOLD, 16 << 10) and _mallopt(_M_TRIM_THRESHOLD, 0)
    try:
        _mallopt_trim()
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = _status_kb("VmRSS")
        out = fn()
        hwm = _status_kb("VmHWM")
        del out
    finally:
        if changed:
            malloc_for_timing()
    if before is None or hwm is None:
        return None
    return max(0, hwm - before) * 1024


def _mallopt_trim() -> None:
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def peak_traced(fn: Callable[[], object]) -> int:
    """Peak bytes traced by tracemalloc during one call (numpy arrays and
    Python objects; not memory that C libraries allocate on their own)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
        del out
    finally:
        tracemalloc.stop()
    return max(0, peak - base)


# -- correctness ------------------------------------------------------------------------------


def to_numpy(value: object) -> object:
    if isinstance(value, (tuple, list)):
        return [to_numpy(v) for v in value]
    if hasattr(value, "detach"):  # torch
        return value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def rel_err(got: object, want: object) -> float:
    """max |got - want| / max |want| over all parts (arrays or floats)."""
    got, want = to_numpy(got), to_numpy(want)
    if isinstance(got, list) and len(got) == 1 and not isinstance(want, list):
        got = got[0]
    if isinstance(want, list) and len(want) == 1 and not isinstance(got, list):
        want = want[0]
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return math.inf
        pairs = list(zip(got, want))
    else:
        pairs = [(got, want)]
    num, den = 0.0, 0.0
    for g, w in pairs:
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if g.shape != w.shape:
            return math.inf
        if w.size:
            num = max(num, float(np.max(np.abs(g - w))))
            den = max(den, float(np.max(np.abs(w))))
    if not math.isfinite(num):
        return math.inf
    return num / den if den > 0 else num


def check(row: Row, got: object, want: object) -> bool:
    row.rel_err = float(rel_err(got, want))
    row.ok = bool(row.rel_err < TOLERANCE)
    if not row.ok:
        row.note = (row.note + "; " if row.note else "") + f"GRADIENT DIFFERS (rel. err {row.rel_err:.1e})"
    return row.ok


# -- formatting ---------------------------------------------------------------------------------


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1e-6:
        return f"{seconds * 1e9:.1f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    if n < 1024:
        return f"{n} B"
    if n < 1024**2:
        return f"{n / 1024:.1f} KiB"
    if n < 1024**3:
        return f"{n / 1024**2:.1f} MiB"
    return f"{n / 1024**3:.2f} GiB"


def size_label(n: int) -> str:
    if n >= 1000 and n == 10 ** round(math.log10(n)):
        return f"n=10^{round(math.log10(n))}"
    return f"n={n}"


def log(message: str) -> None:
    OPTIONS.log(message)










# -- groups of contenders ------------------------------------------------------------------------


@dataclass
class Contender:
    """A tool's primal and gradient as zero-argument callables. `grad()`
    returns the gradient (arrays, floats, or a tuple/list of them, in the
    order of ours)."""

    tool: str
    grad: Callable[[], object]
    primal: Callable[[], object] | None = None
    traced: bool = False              # numpy-based: also measure tracemalloc's peak
    note: str = ""
    memory: bool = True
    per: int = 1                      # gradients per call (batched rows): times are divided
    compiles: bool = False            # has a compile step (numba, JAX): report compile time
    extract: Callable[[object], object] | None = None  # first call's result -> gradient
    extra: dict = field(default_factory=dict)


def measure(section: str, kernel: str, size: str, n: int | None, contenders: Sequence[Contender],
            ref: object, repeats: int | None = None,
            reset: Callable[[], None] | None = None) -> list[Row]:
    """First call (compile time), correctness against `ref`, then all
    primals and gradients timed in turns, then memory; one Row each.
    `reset` runs after the checked first calls (kernels that mutate
    their inputs put them in a steady state there)."""
    rows: list[Row] = []
    fns: dict[str, Callable[[], object]] = {}
    for c in contenders:
        row = Row(section, kernel, size, c.tool, n, note=c.note, extra=dict(c.extra))
        first_grad, out = first_call(c.grad)
        first_primal = None
        if c.primal is not None:
            first_primal, _ = first_call(c.primal)
        if ref is not None:
            check(row, c.extract(out) if c.extract else out, ref)
        row.extra["first_grad_call_s"] = first_grad
        if first_primal is not None:
            row.extra["first_primal_call_s"] = first_primal
        fns[c.tool + "\0grad"] = c.grad
        if c.primal is not None:
            fns[c.tool + "\0primal"] = c.primal
        rows.append(row)
    if reset is not None:
        reset()
    t = compare(fns, repeats)
    for c, row in zip(contenders, rows):
        row.grad_s = t[c.tool + "\0grad"] / c.per
        if c.primal is not None:
            row.primal_s = t[c.tool + "\0primal"] / c.per
        if c.compiles:
            compile_s = row.extra["first_grad_call_s"] - t[c.tool + "\0grad"]
            if c.primal is not None:
                compile_s += row.extra["first_primal_call_s"] - t[c.tool + "\0primal"]
            row.compile_s = max(0.0, compile_s)
        if c.memory:
            row.peak_rss = peak_rss(c.grad)
            if c.traced and not OPTIONS.quick:
                row.peak_traced = peak_traced(c.grad)
    return rows


def keep_first_compile(rows: Sequence[Row]) -> None:
    """A tool compiles once per kernel (its first size); at later sizes
    'first call minus steady call' is noise: blank it (kept in extra)."""
    seen: set[tuple[str, str]] = set()
    for row in rows:
        if row.compile_s is None:
            continue
        key = (row.section, row.kernel, row.tool)
        if key in seen:
            row.extra["first_minus_steady_s"] = row.compile_s
            row.compile_s = None
        seen.add(key)
