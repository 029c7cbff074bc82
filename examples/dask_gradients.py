"""adpasses gradients on Dask workers.

    pip install -e ".[dask]"
    python examples/dask_gradients.py            # a LocalCluster of 2 worker processes

(a) The gradient of a loss summed over a dataset split into partitions:
    each partition's (value, gradient) is computed by adpasses on a
    worker, and the pairs are added up on the workers (a tree reduction).
(b) A parameter sweep: value and gradient at many parameter vectors.

What travels to a worker: the pickled reference to the gradient
(`partitioned_loss.loss` and its options, a few hundred bytes) and the
data; never code. Each worker imports `partitioned_loss`, and loads the
compiled gradient from the disk cache (`cache=True`) if an earlier process
on a machine with the same CPU and versions wrote it, else compiles it
once. On a real cluster: `Client("scheduler-address")` instead of the
LocalCluster, the module installed (or `client.upload_file`) on the
workers, and ADPASSES_CACHE_DIR pointing at a shared folder if you want
them to share one cache.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # partitioned_loss, here and in workers

import adpasses  # noqa: E402
from partitioned_loss import add, loss  # noqa: E402


def partitioned_gradient(client, w: np.ndarray, x_parts: list, y_parts: list):  # type: ignore[no-untyped-def]
    """(loss, gradient) of the sum over partitions, each on a worker."""
    vg = adpasses.value_and_grad(loss)
    xs, ys = client.scatter(x_parts), client.scatter(y_parts)  # the data goes to the workers once
    pairs = client.map(vg, [w] * len(x_parts), xs, ys, pure=False)
    while len(pairs) > 1:  # add pairs of results where they are
        pairs = [client.submit(add, a, b) for a, b in zip(pairs[::2], pairs[1::2])] + pairs[len(pairs) & ~1:]
    return pairs[0].result()


def sweep(client, ws: list, x: np.ndarray, y: np.ndarray) -> list:  # type: ignore[no-untyped-def]
    """(loss, gradient) at each parameter vector of `ws`."""
    vg = adpasses.value_and_grad(loss)
    xf, yf = client.scatter(x, broadcast=True), client.scatter(y, broadcast=True)
    return client.gather(client.map(vg, ws, [xf] * len(ws), [yf] * len(ws), pure=False))


def make_data(rows: int = 20_000, cols: int = 16, seed: int = 0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, cols)) / np.sqrt(cols)
    w_true = rng.normal(size=cols)
    y = np.tanh(x @ w_true) + 0.1 * rng.normal(size=rows)
    return x, y


def main(n_workers: int = 2) -> None:
    from dask.distributed import Client, LocalCluster

    x, y = make_data()
    w = np.zeros(x.shape[1])
    parts = 4 * n_workers
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True) as cluster, \
            Client(cluster) as client:
        start = time.perf_counter()
        value, grad = partitioned_gradient(client, w, np.array_split(x, parts), np.array_split(y, parts))
        print(f"(a) loss {value:.6f}, |gradient| {np.linalg.norm(grad):.6f} over {parts} partitions "
              f"on {n_workers} workers ({time.perf_counter() - start:.2f} s incl. first compile/load)")
        # The same in this process, on the whole data set: the partitions' sum
        # differs from it by rounding only.
        vg = adpasses.value_and_grad(loss)
        here, here_grad = vg(w, x, y)
        print(f"    in this process, unpartitioned: loss {here:.6f}; largest relative difference "
              f"{max(abs(value - here) / abs(here), np.abs(grad - here_grad).max() / np.abs(here_grad).max()):.1e}")
        ws = [np.full(x.shape[1], s) for s in np.linspace(-1, 1, 8)]
        results = sweep(client, ws, x, y)
        print("(b) sweep:", ", ".join(f"{v:.2f}" for v, _ in results))
        worst = max(max(abs(v - r[0]) / abs(r[0]), np.abs(g - r[1]).max() / np.abs(r[1]).max())
                    for (v, g), r in zip(results, (vg(wk, x, y) for wk in ws)))
        print(f"    the same sweep in this process: largest relative difference {worst:.1e}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
