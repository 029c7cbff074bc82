"""Jitted functions and grad/value_and_grad objects pickle by reference
(module, qualified name, options) and work in other processes: spawn, fork,
ProcessPoolExecutor (docs/deployment.md). Gradients computed in workers
are checked against central finite differences."""

from __future__ import annotations

import math
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import adpasses
import pickle_kernels as pk
from adpasses.api.functions import JitFunction


@pytest.fixture(autouse=True)
def cache_outside_the_repository(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """pickle_kernels.loss has cache=True: its entries go to a temporary folder."""
    monkeypatch.setenv("ADPASSES_CACHE_DIR", str(tmp_path_factory.mktemp("adpasses_cache")))


def central_differences(f, w: np.ndarray, h: float = 1e-6) -> np.ndarray:  # type: ignore[no-untyped-def]
    out = np.empty_like(w)
    for i in range(w.size):
        up, down = w.copy(), w.copy()
        up[i] += h
        down[i] -= h
        out[i] = (f(up) - f(down)) / (2 * h)
    return out


def data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=3), rng.normal(size=(6, 3)), rng.normal(size=6)


def test_round_trip_in_process_is_the_same_object() -> None:
    for obj in (pk.loss, pk.scaled, adpasses.grad(pk.loss), adpasses.value_and_grad(pk.scaled, argnums=(0, 1)),
                adpasses.jit(pk.plain), adpasses.grad(pk.plain), adpasses.jit(pk.plain, boundscheck=False)):
        back = pickle.loads(pickle.dumps(obj))
        assert back is obj, obj
    # the options travel: the same function with other options is another object
    fast = adpasses.jit(pk.plain, fastmath=True)
    assert pickle.loads(pickle.dumps(fast)) is fast and fast is not adpasses.jit(pk.plain)


def test_pickle_holds_a_reference_not_code() -> None:
    w, x, y = data()
    adpasses.grad(pk.loss)(w, x, y)  # compiled: the pickle must not grow with it
    blob = pickle.dumps(adpasses.grad(pk.loss))
    assert len(blob) < 400 and b"pickle_kernels" in blob and b"loss" in blob


def test_local_functions_say_why_they_cannot_be_pickled() -> None:
    def local(x):
        return x[0]

    with pytest.raises(pickle.PicklingError, match="define it at the top level of a module"):
        pickle.dumps(adpasses.jit(local))
    with pytest.raises(pickle.PicklingError, match="inside another function"):
        pickle.dumps(adpasses.grad(local))


def test_unpickling_a_name_bound_to_something_else_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    blob = pickle.dumps(pk.scaled)
    monkeypatch.setattr(pk, "scaled", 3)
    with pytest.raises(pickle.UnpicklingError, match="pickle_kernels.scaled is a int here"):
        pickle.loads(blob)


def _expected(w, x, y):  # type: ignore[no-untyped-def]
    return central_differences(lambda v: pk.loss_reference(v, x, y), w)


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_multiprocessing_pool(method: str, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} on this platform")
    monkeypatch.setenv("ADPASSES_CACHE_DIR", str(tmp_path))  # workers inherit it
    jobs = [data(seed) for seed in range(4)]
    g, vg = adpasses.grad(pk.loss), adpasses.value_and_grad(pk.scaled, argnums=(0, 1))
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(2) as pool:
        grads = pool.starmap(pk.call, [(g, *job) for job in jobs])
        values = pool.starmap(pk.call, [(pk.loss, *job) for job in jobs])
        sweep = pool.starmap(pk.call, [(vg, a, np.linspace(0, 1, 5)) for a in (0.5, 2.0)])
    for (w, x, y), got, value in zip(jobs, grads, values):
        np.testing.assert_allclose(got, _expected(w, x, y), rtol=1e-6, atol=1e-8)
        assert value == pytest.approx(pk.loss_reference(w, x, y), rel=1e-12)
    for a, (value, (da, dx)) in zip((0.5, 2.0), sweep):
        xs = np.linspace(0, 1, 5)
        assert value == pytest.approx(a * np.sum(np.sin(xs)), rel=1e-12)
        assert da == pytest.approx(np.sum(np.sin(xs)), rel=1e-12)
        np.testing.assert_allclose(dx, a * np.cos(xs), rtol=1e-12)


def test_process_pool_executor_loads_from_the_disk_cache(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ADPASSES_CACHE_DIR", str(tmp_path))
    w, x, y = data(7)
    g = adpasses.grad(pk.loss)
    # Filled by this process: a fresh JitFunction of the same source writes the entries.
    fresh = JitFunction(pk.loss.py_func, cache=True)
    assert adpasses.grad(fresh)(w, x, y) is not None
    assert list(tmp_path.glob("*.adc"))
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as ex:
        got = list(ex.map(pk.call_with_stats, [g] * 2, [w] * 2, [x] * 2, [y] * 2))
    for r, stats in got:
        np.testing.assert_allclose(r, _expected(w, x, y), rtol=1e-6, atol=1e-8)
        # the worker found the facts and the gradient on disk: no compiler imported
        assert stats["hits"] >= 2 and not stats["xdsl"], stats


def misaligned(values: np.ndarray) -> np.ndarray:
    """A float64 array whose data is 1 byte off an 8-byte boundary, like
    arrays unpickled out of a byte stream (Dask workers) can be."""
    raw = np.zeros(values.nbytes + 1, np.uint8)[1:]
    out = raw.view(np.float64)
    out[:] = values
    assert not out.flags.aligned
    return out


def test_grad_copies_misaligned_arrays_on_both_paths() -> None:
    xs = np.linspace(0.0, 1.0, 5)
    g = adpasses.value_and_grad(pk.scaled, argnums=(0, 1))
    want_value, (want_da, want_dx) = g(2.0, xs)  # aligned: installs the fast path
    for _ in range(2):  # the fast path, then again (nothing cached wrongly)
        value, (da, dx) = g(2.0, misaligned(xs))
        assert value == want_value and da == want_da
        np.testing.assert_array_equal(dx, want_dx)
    fresh = adpasses.grad(adpasses.jit(pk.plain, fastmath=True))  # a first call that is misaligned
    np.testing.assert_allclose(fresh(misaligned(xs)), 3 * xs**2, rtol=1e-12)
    with pytest.raises(ValueError, match="not aligned"):  # jit calls run on the caller's memory
        pk.scaled(2.0, misaligned(xs))


def test_custom_functions_pickle_by_reference() -> None:
    """A custom_vjp function is a module attribute like a jitted one: it
    pickles by name (it failed: "not the same object as
    pickle_kernels.softplus", the function inside it being pickled), and a
    spawned worker gets it, its rule and its callers' gradients."""
    assert pickle.loads(pickle.dumps(pk.softplus)) is pk.softplus
    xs = np.linspace(-2.0, 2.0, 5)
    g = adpasses.grad(pk.softplus_sum)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as ex:
        value = ex.submit(pk.call, pk.softplus, 0.3).result()
        grad = ex.submit(pk.call, g, xs).result()
        dsoft = ex.submit(pk.call, adpasses.grad(pk.softplus), 0.3).result()
    assert value == pytest.approx(math.log1p(math.exp(0.3)), rel=1e-15)
    np.testing.assert_allclose(grad, 1.0 / (1.0 + np.exp(-xs)), rtol=1e-14)
    assert dsoft == pytest.approx(1.0 / (1.0 + math.exp(-0.3)), rel=1e-14)


def test_unpickling_a_custom_function_name_bound_to_something_else(monkeypatch: pytest.MonkeyPatch) -> None:
    blob = pickle.dumps(pk.softplus)
    monkeypatch.setattr(pk, "softplus", pk.softplus_fwd)
    with pytest.raises(pickle.UnpicklingError, match="not the custom function that was pickled"):
        pickle.loads(blob)
