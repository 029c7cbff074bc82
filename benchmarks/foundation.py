"""Foundation benchmark: compiled loops against numpy and numba, call overhead.

    python -m benchmarks.foundation [--quick]

Times, in one run and on the same arrays, a dot product and
sum(exp(-3 * (x + 1))) written as `.mlir` loops and compiled by adpasses
(with and without bounds checks), numpy's vectorised expressions, and the
same loops under numba's @njit (skipped, with a line saying so, when numba
is not installed). Prints markdown tables: kernel times and ratios, compile
time per module, the cost of a module cache hit, and the Python call
overhead of a two-scalar and a two-array function through adpasses' entry
shim, ctypes and cffi (cffi skipped when absent). Every number is the median
of repeated timings after a warm-up call, timed in turns.

Times are the CPU time of the timing thread (`time.thread_time`), not wall
time, so that other processes on a busy machine do not inflate them; BLAS
is limited to one thread (OPENBLAS_NUM_THREADS=1, set before numpy loads)
so that every contender runs on one core. `--wall` uses wall-clock time.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one core for everyone

import argparse
import hashlib
import math
import statistics
import time
import timeit

import numpy as np

from adpasses.core.context import parse_module
from adpasses.native.llvm_jit import compile_module

TIMER = time.thread_time

LOOP = """
func.func @{name}({params}) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %m3 = arith.constant -3.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {{
{body}
    %s = arith.addf %acc, %t : f64
    scf.yield %s : f64
  }}
  func.return %r : f64
}}
"""
DOT = LOOP.format(
    name="dot",
    params="%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}",
    body="""    %a = memref.load %x[%i] : memref<?xf64>
    %b = memref.load %y[%i] : memref<?xf64>
    %t = arith.mulf %a, %b : f64""",
)
EXPSUM = LOOP.format(
    name="expsum",
    params="%x: memref<?xf64> {ad.noalias}",
    body="""    %a = memref.load %x[%i] : memref<?xf64>
    %p = arith.addf %a, %one : f64
    %q = arith.mulf %p, %m3 : f64
    %t = math.exp %q : f64""",
)
ADD = """
func.func @add(%a: f64, %b: f64) -> f64 {
  %r = arith.addf %a, %b : f64
  func.return %r : f64
}
"""


def median_seconds(stmt: str, env: dict, number: int, repeat: int) -> float:
    """Median over `repeat` samples of the time of one `stmt`, after a warm-up."""
    return interleaved({"x": stmt}, env, number, repeat)["x"]


def interleaved(stmts: dict[str, str], env: dict, number: int, repeat: int) -> dict[str, float]:
    """Median time of one execution of each statement. The statements are
    timed in turns (round-robin, after one warm-up each), so that a change
    of machine load while measuring affects all of them alike."""
    timers = {key: timeit.Timer(stmt, timer=TIMER, globals=env) for key, stmt in stmts.items()}
    for timer in timers.values():
        timer.timeit(1)
    samples: dict[str, list[float]] = {key: [] for key in stmts}
    for _ in range(repeat):
        for key, timer in timers.items():
            samples[key].append(timer.timeit(number) / number)
    return {key: statistics.median(values) for key, values in samples.items()}


def fmt_time(seconds: float) -> str:
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    return f"{seconds * 1e3:.3f} ms"


def numba_kernels():  # type: ignore[no-untyped-def]
    """The same loops under numba, or None when numba is missing."""
    try:
        import numba
    except ImportError:
        return None

    @numba.njit
    def dot(x, y):  # type: ignore[no-untyped-def]
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * y[i]
        return s

    @numba.njit
    def expsum(x):  # type: ignore[no-untyped-def]
        s = 0.0
        for i in range(x.shape[0]):
            s += math.exp(-3.0 * (x[i] + 1.0))
        return s

    @numba.njit
    def add(a, b):  # type: ignore[no-untyped-def]
        return a + b

    return {"dot": dot, "expsum": expsum, "add": add}


def compile_timed(text: str, **options: object) -> tuple[object, float]:
    start = time.perf_counter()
    compiled = compile_module(parse_module(text, "<benchmark>"), **options)  # type: ignore[arg-type]
    return compiled, time.perf_counter() - start


def kernel_table(quick: bool) -> None:
    nb = numba_kernels()
    if nb is None:
        print("numba is not installed: its column is skipped (pip install numba).\n")
    modules: dict[str, dict[bool, object]] = {}
    # The first compilation of a process also initialises LLVM's target,
    # the runtime symbols and the half-precision helpers: time it apart.
    _, first_seconds = compile_timed(ADD.replace("@add", "@warm_up"))
    compile_rows = [("first module of the process (one-time LLVM and runtime set-up)", True,
                     first_seconds, "")]
    for name, text in (("dot", DOT), ("expsum", EXPSUM)):
        modules[name] = {}
        for checked in (True, False):
            compiled, seconds = compile_timed(text, boundscheck=checked)
            modules[name][checked] = compiled
            times = getattr(compiled, "times", None)
            split = (f"{times.lower_s * 1e3:.1f} + {times.llvm_s * 1e3:.1f}" if times else "")
            compile_rows.append((name, checked, seconds, split))
    rng = np.random.default_rng(0)
    print("| kernel | n | adpasses | adpasses, no bounds checks | numpy | numba loop "
          "| adpasses / numba | adpasses / numpy | bounds-check cost |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in (10**3, 10**6):
        x, y = rng.random(n), rng.random(n)
        number, repeat = (2000, 7) if n <= 10**4 else (1, 9 if quick else 25)
        if quick:
            number = max(1, number // 4)
        for name in ("dot", "expsum"):
            args = "x, y" if name == "dot" else "x"
            env = {"x": x, "y": y, "np": np, "nb": nb[name] if nb else None,
                   "checked": modules[name][True][name], "unchecked": modules[name][False][name]}
            stmts = {"checked": f"checked({args})", "unchecked": f"unchecked({args})",
                     "numpy": "x @ y" if name == "dot" else "np.exp(-3.0 * (x + 1.0)).sum()"}
            if nb is not None:
                stmts["numba"] = f"nb({args})"
            t = interleaved(stmts, env, number, repeat)
            t_checked, t_unchecked, t_numpy = t["checked"], t["unchecked"], t["numpy"]
            if nb is not None:
                numba_cells = (fmt_time(t["numba"]), f"{t_checked / t['numba']:.2f}x")
            else:
                numba_cells = ("skipped", "-")
            got = env["checked"](*(x, y)[: 2 if name == "dot" else 1])
            want = x @ y if name == "dot" else np.exp(-3.0 * (x + 1.0)).sum()
            assert math.isclose(got, want, rel_tol=1e-9), (name, got, want)
            print(f"| {name} | 10^{round(math.log10(n))} | {fmt_time(t_checked)} | "
                  f"{fmt_time(t_unchecked)} | {fmt_time(t_numpy)} | {numba_cells[0]} | "
                  f"{numba_cells[1]} | {t_checked / t_numpy:.2f}x | "
                  f"{(t_checked / t_unchecked - 1) * 100:+.1f}% |")
    print("\n| module | bounds checks | compile time (parse + lower + LLVM O3 + MCJIT) "
          "| lower + LLVM (ms) |")
    print("|---|---|---|---|")
    for name, checked, seconds, split in compile_rows:
        print(f"| {name} | {'on' if checked else 'off'} | {seconds * 1e3:.1f} ms | {split} |")


def cache_table() -> None:
    """A cache hit still lowers the module and hashes its LLVM IR: compare
    that with a cold compile."""
    module = parse_module(EXPSUM.replace("@expsum", "@expsum_cache"), "<benchmark>")
    start = time.perf_counter()
    first = compile_module(module)
    cold = time.perf_counter() - start
    hits = []
    for _ in range(5):
        start = time.perf_counter()
        again = compile_module(module)
        hits.append(time.perf_counter() - start)
    assert again is first
    ir_text = first.llvm_ir
    sha = median_seconds("hashlib.sha1(t.encode()).hexdigest()", {"hashlib": hashlib, "t": ir_text}, 200, 5)
    print("\n| module cache | time |\n|---|---|")
    print(f"| cold compile of an xDSL module | {cold * 1e3:.1f} ms |")
    print(f"| compile_module again (lower + print LLVM IR + sha1 key; a hit) | "
          f"{statistics.median(hits) * 1e3:.2f} ms |")
    print(f"| of which sha1 of the {len(ir_text)}-byte IR text | {fmt_time(sha)} |")


def overhead_table(quick: bool) -> None:
    import ctypes

    number, repeat = (50_000, 5) if quick else (200_000, 9)
    add_mod = compile_module(ADD)
    dot_mod = compile_module(DOT)
    x, y = np.random.default_rng(1).random((2, 4))
    env: dict[str, object] = {"a": 1.5, "b": 2.5, "x": x, "y": y, "add": add_mod["add"],
                              "dot": dot_mod["dot"]}
    rows = [("adpasses callable, 2 floats", "add(a, b)"), ("adpasses callable, 2 arrays", "dot(x, y)")]
    raw_add = getattr(add_mod["add"], "raw", None)
    if raw_add is not None and raw_add is not add_mod["add"]:
        env["raw_add"], env["raw_dot"] = raw_add, dot_mod["dot"].raw
        rows += [("adpasses .raw builtin, 2 floats", "raw_add(a, b)"),
                 ("adpasses .raw builtin, 2 arrays", "raw_dot(x, y)")]
    # ctypes and cffi straight on the compiled function (internal ABI: each
    # array is data pointer, offset, size, stride), with only the minimal
    # Python work a binding must do per array.
    i64 = ctypes.c_int64
    env["c_add"] = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double)(add_mod.address("add"))
    c_dot = ctypes.CFUNCTYPE(ctypes.c_double, *([i64] * 8))(dot_mod.address("dot"))

    def ctypes_dot(x, y):  # type: ignore[no-untyped-def]
        return c_dot(x.ctypes.data, 0, x.shape[0], x.strides[0] >> 3,
                     y.ctypes.data, 0, y.shape[0], y.strides[0] >> 3)

    env["ctypes_dot"] = ctypes_dot
    rows += [("ctypes on the function address, 2 floats (no checks)", "c_add(a, b)"),
             ("ctypes, 2 arrays (no checks)", "ctypes_dot(x, y)")]
    try:
        import cffi
    except ImportError:
        print("\ncffi is not installed: its rows are skipped (pip install cffi).")
    else:
        ffi = cffi.FFI()
        env["f_add"] = ffi.cast("double(*)(double, double)", add_mod.address("add"))
        f_dot = ffi.cast("double(*)(" + ", ".join(["intptr_t"] * 8) + ")", dot_mod.address("dot"))

        def cffi_dot(x, y):  # type: ignore[no-untyped-def]
            return f_dot(x.ctypes.data, 0, x.shape[0], x.strides[0] >> 3,
                         y.ctypes.data, 0, y.shape[0], y.strides[0] >> 3)

        env["cffi_dot"] = cffi_dot
        rows += [("cffi on the function address, 2 floats (no checks)", "f_add(a, b)"),
                 ("cffi, 2 arrays (no checks)", "cffi_dot(x, y)")]
    nb = numba_kernels()
    if nb is not None:
        env["nb_add"], env["nb_dot"] = nb["add"], nb["dot"]
        rows += [("numba @njit dispatch, 2 floats", "nb_add(a, b)"),
                 ("numba @njit dispatch, 2 arrays", "nb_dot(x, y)")]

    def py_add(a, b):  # type: ignore[no-untyped-def]
        return a + b

    env["py_add"] = py_add
    rows.append(("plain Python function, 2 floats (reference)", "py_add(a, b)"))
    print("\n| call (tiny work, so this is per-call overhead) | ns per call |\n|---|---|")
    for label, stmt in rows:
        print(f"| {label} | {median_seconds(stmt, env, number, repeat) * 1e9:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--wall", action="store_true", help="wall-clock instead of thread CPU time")
    args = parser.parse_args()
    global TIMER
    if args.wall:
        TIMER = time.perf_counter
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# adpasses foundation benchmark (numpy {np.__version__}, {os.cpu_count()} cores, "
          f"load average {load:.1f}; {'wall-clock' if args.wall else 'thread CPU'} time, "
          f"BLAS threads: {os.environ['OPENBLAS_NUM_THREADS']})\n")
    kernel_table(args.quick)
    cache_table()
    overhead_table(args.quick)


if __name__ == "__main__":
    main()
