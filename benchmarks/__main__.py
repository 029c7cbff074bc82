"""python -m benchmarks [--quick] [--only KERNEL ...] [--wall] [--out DIR] [--no-plots]

Runs the benchmark suite from the repository root, prints a markdown table
per kernel, writes latest.json, latest.md and PNG plots. A full run writes
to benchmarks/results/; --quick or --only runs write to
benchmarks/results/tmp/ (not committed) unless --out is given.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import platform
import subprocess
import sys
import time
import traceback

import benchmarks  # noqa: F401  (sets one thread per tool before numpy loads)

KERNELS = ["strided", "energy", "small", "dense", "inplace", "euler", "mlp", "neohookean", "forward",
           "compiled_mlir", "activity", "policy", "threads", "sinkhorn", "per_example", "lse", "smallvec", "parallel"]


def machine() -> dict:
    info = {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "memory": "?", "python": platform.python_version(), "platform": platform.platform()}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=5).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                info["cpu"] = line.split(":", 1)[1].strip()
            if line.startswith("Flags:"):
                flags = line.split()
                info["simd"] = " ".join(f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f") if f in flags)
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
        info["memory"] = f"{kb / 1024**2:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return info


def _warm(x):  # type: ignore[no-untyped-def]
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


def warm_up() -> None:
    """Load xDSL, LLVM and the entry-shim machinery once, so that the first
    kernel's compile time is not charged with one-time initialisation."""
    import numpy as np

    import adpasses

    x = np.ones(3)
    adpasses.jit(_warm)(x)
    adpasses.grad(adpasses.jit(_warm))(x)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks",
                                     description="adpasses benchmark suite (docs/benchmarks.md)")
    parser.add_argument("--quick", action="store_true", help="small sizes only (under a minute)")
    parser.add_argument("--only", action="append", metavar="KERNEL", choices=KERNELS,
                        help=f"run only this kernel (repeatable): {', '.join(KERNELS)}")
    parser.add_argument("--wall", action="store_true",
                        help="wall-clock time instead of process CPU time")
    parser.add_argument("--out", help="output folder (default benchmarks/results, or "
                        "benchmarks/results/tmp for --quick/--only)")
    parser.add_argument("--without", action="append", default=[], metavar="PEER",
                        choices=["numba", "jax", "autograd", "torch"],
                        help="leave a peer out as if it were not installed (repeatable)")
    parser.add_argument("--no-plots", action="store_true")
    args = parser.parse_args(argv)

    from benchmarks import harness, peers, report

    harness.OPTIONS.quick = args.quick
    harness.OPTIONS.wall = args.wall
    if args.quick:
        harness.OPTIONS.target_s = 0.01
        harness.OPTIONS.repeats = 3
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = args.out or os.path.join(here, "results", "tmp" if (args.quick or args.only) else "")
    os.makedirs(outdir, exist_ok=True)

    skipped: list[str] = []

    def log(message: str) -> None:
        if "is not installed" in message or "is excluded" in message:
            skipped.append(message)
        print(message, file=sys.stderr, flush=True)

    harness.OPTIONS.log = log
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    kernels = args.only or KERNELS
    print(f"# adpasses benchmarks ({'quick' if args.quick else 'full'}; kernels: {', '.join(kernels)})\n")
    if load_before > 0.5 * (os.cpu_count() or 1):
        print(f"Note: load average {load_before:.1f} on {os.cpu_count()} cores: other work is "
              "running, figures will be noisy; take final numbers on a quiet machine.\n")
    if not harness.malloc_for_timing():
        log("note: could not fix glibc's malloc thresholds (not glibc?)")
    for name in args.without:
        peers.exclude(name)
    for name in ("numba", "jax", "autograd", "torch"):
        peers.get(name)
    warm_up()
    rows = []
    failures = []
    seconds: dict[str, tuple[float, float]] = {}
    for key in kernels:
        mod = importlib.import_module(f"benchmarks.kernels.{key}")
        print(f"## {mod.TITLE}\n", flush=True)
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            got = mod.run(None)
        except Exception:
            failures.append(key)
            traceback.print_exc()
            print(f"(kernel {key} failed; see the traceback above)\n")
            continue
        harness.keep_first_compile(got)
        rows += got
        print(report.table(got))
        seconds[key] = (time.perf_counter() - t0, time.process_time() - c0)
        print(f"\n({seconds[key][0]:.0f} s, {seconds[key][1]:.0f} s CPU)\n", flush=True)

    summary = report.summary_tables(rows)
    if summary:
        print(summary)
    from benchmarks import cold_start

    print("## Cold start (fresh process, energy kernel)\n", flush=True)
    try:
        cold = cold_start.measure(runs=1 if args.quick else 3,
                                  tools=tuple(t for t in ("adpasses", "numba", "jax") if t not in args.without))
        print(cold_start.table(cold) + "\n")
    except Exception:
        failures.append("cold_start")
        traceback.print_exc()
        cold = []
    meta = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "duration_s": time.perf_counter() - start,
        "options": {"quick": args.quick, "only": args.only, "clock": "wall (perf_counter)" if args.wall
                    else "process CPU time (process_time)"},
        "machine": machine(),
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "versions": peers.versions(),
        "skipped": skipped,
        "failures": failures,
        "peer_import_s": peers.import_seconds,
        "kernel_seconds": {k: {"wall": w, "cpu": c} for k, (w, c) in seconds.items()},
        "cpu_s": time.process_time(),
        "cold_start": cold,
    }
    meta["plots"] = [] if args.no_plots else report.plots(rows, outdir)
    report.write_json(os.path.join(outdir, "latest.json"), rows, meta)
    with open(os.path.join(outdir, "latest.md"), "w") as f:
        f.write(report.markdown(rows, meta))
    print(f"wrote {os.path.relpath(os.path.join(outdir, 'latest.json'))}, latest.md"
          + (f", {', '.join(meta['plots'])}" if meta["plots"] else "")
          + f" ({meta['duration_s']:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
