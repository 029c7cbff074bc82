"""The Dask path (docs/deployment.md): a LocalCluster of 2 worker
processes computes (a) a partitioned loss's gradient and (b) a parameter
sweep with examples/dask_gradients.py; gradients are checked against
central finite differences. Needs the `dask` extra (part of `test`)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
sys.path.insert(0, str(EXAMPLES))

import dask_gradients as dg  # noqa: E402
from partitioned_loss import loss_reference  # noqa: E402


def central_differences(f, w: np.ndarray, h: float = 1e-6) -> np.ndarray:  # type: ignore[no-untyped-def]
    out = np.empty_like(w)
    for i in range(w.size):
        up, down = w.copy(), w.copy()
        up[i] += h
        down[i] -= h
        out[i] = (f(up) - f(down)) / (2 * h)
    return out


def test_partitioned_gradient_and_sweep_on_two_worker_processes(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from dask.distributed import Client, LocalCluster

    monkeypatch.setenv("ADPASSES_CACHE_DIR", str(tmp_path))  # the workers' cache, not the repository
    x, y = dg.make_data(rows=600, cols=5, seed=3)
    w = np.linspace(-0.5, 0.5, 5)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        value, grad = dg.partitioned_gradient(client, w, np.array_split(x, 5), np.array_split(y, 5))
        ws = [w * s for s in (0.0, 1.0, 2.0)]
        swept = dg.sweep(client, ws, x, y)
        workers = client.run(lambda: __import__("os").getpid())
    assert len(set(workers.values())) == 2
    assert value == pytest.approx(loss_reference(w, x, y), rel=1e-10)
    np.testing.assert_allclose(grad, central_differences(lambda v: loss_reference(v, x, y), w),
                               rtol=1e-6, atol=1e-8)
    for wk, (v, g) in zip(ws, swept):
        assert v == pytest.approx(loss_reference(wk, x, y), rel=1e-10)
        np.testing.assert_allclose(g, central_differences(lambda v_: loss_reference(v_, x, y), wk),
                                   rtol=1e-6, atol=1e-8)
