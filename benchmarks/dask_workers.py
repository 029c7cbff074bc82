"""The Dask path with 1 and 2 worker processes (docs/deployment.md, "Dask").

    pip install -e ".[dask]"
    python -m benchmarks.dask_workers [--rows N] [--repeats R]

For each worker count: a LocalCluster of that many single-threaded worker
processes, the data scattered once in 8 partitions, then the time of one
partitioned (value, gradient) of examples/partitioned_loss.py (map over
the partitions, tree reduction on the workers), median of R after a
warm-up round (which compiles, or loads from the disk cache, on each
worker). Also the same gradient in this process without Dask, for the
overhead of the round trip.

Scaling needs a free core per worker: the table's header says how many
cores this process may use, the load average before and after, and the
threads each side ran (workers x threads per worker; numpy's BLAS is not
used by this kernel). With a load average at or above the core count the
second worker has no core of its own and the figure says nothing about
scaling (docs/deployment.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))


def no_gradient(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple:
    """A task of the same shape that computes nothing: the Dask round trip
    (scheduling, transfers, the reduction tree) alone."""
    return 0.0, np.zeros_like(w)


def machine() -> dict:
    """Cores this process may use and the 1-minute load average now."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return {"cores": cores, "load": load}


def measure(rows: int = 400_000, cols: int = 16, repeats: int = 5, parts: int = 8) -> list[dict]:
    from dask.distributed import Client, LocalCluster

    import adpasses
    import dask_gradients as dg
    from partitioned_loss import loss

    os.environ.setdefault("ADPASSES_CACHE_DIR", tempfile.mkdtemp(prefix="adpasses_dask_bench_"))
    x, y = dg.make_data(rows, cols)
    w = np.full(cols, 0.1)
    vg = adpasses.value_and_grad(loss)
    vg(w, x, y)
    local = []
    for _ in range(repeats):
        start = time.perf_counter()
        vg(w, x, y)
        local.append(time.perf_counter() - start)
    out = [{"workers": 0, "threads": 1, "seconds": statistics.median(local), "round_trip": 0.0,
            **_loads(machine())}]
    for n in (1, 2):
        before = machine()
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            xs = client.scatter(np.array_split(x, parts))
            ys = client.scatter(np.array_split(y, parts))

            def once(task=vg) -> float:  # type: ignore[no-untyped-def]
                start = time.perf_counter()
                pairs = client.map(task, [w] * parts, xs, ys, pure=False)
                while len(pairs) > 1:
                    pairs = [client.submit(dg.add, a, b) for a, b in zip(pairs[::2], pairs[1::2])] \
                        + pairs[len(pairs) & ~1:]
                pairs[0].result()
                return time.perf_counter() - start

            once()  # compile or load on every worker
            seconds = statistics.median(once() for _ in range(repeats))
            once(no_gradient)
            floor = statistics.median(once(no_gradient) for _ in range(repeats))
        out.append({"workers": n, "threads": n, "seconds": seconds, "round_trip": floor,
                    **_loads(before, machine())})
    return out


def _loads(before: dict, after: dict | None = None) -> dict:
    after = after or before
    return {"cores": before["cores"], "load_before": before["load"], "load_after": after["load"]}


def table(rows: list[dict], n_rows: int) -> str:
    lines = [f"cores usable: {rows[0]['cores']}",
             "",
             f"| workers | threads | partitioned (value, gradient), {n_rows} rows | speed-up vs 1 worker "
             "| same tasks computing nothing | load average before / after |",
             "|---|---|---|---|---|---|"]
    one = next(r["seconds"] for r in rows if r["workers"] == 1)
    for r in rows:
        name = "none (this process, no Dask)" if r["workers"] == 0 else str(r["workers"])
        floor = f"{1e3 * r['round_trip']:.1f} ms" if r["workers"] else ""
        lines.append(f"| {name} | {r['threads']} | {1e3 * r['seconds']:.1f} ms | {one / r['seconds']:.2f}x "
                     f"| {floor} | {r['load_before']:.2f} / {r['load_after']:.2f} |")
    busy = max(max(r["load_before"], r["load_after"]) for r in rows)
    if busy >= rows[0]["cores"] - 1:
        lines += ["", f"Load average up to {busy:.2f} on {rows[0]['cores']} cores: the workers shared "
                  "cores with other jobs; this is no scaling figure."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dask_workers")
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    print(table(measure(args.rows, repeats=args.repeats), args.rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
