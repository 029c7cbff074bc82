"""The peers, imported on demand; a missing one is skipped with a line
saying so (once per peer) and how to install it."""

from __future__ import annotations

import importlib
import time

from benchmarks.harness import log

INSTALL = {
    "numba": "pip install numba==0.68.1",
    "jax": "pip install jax",
    "autograd": "pip install autograd",
    "torch": "pip install torch==2.13.0 (CPU wheel)",
}

_loaded: dict[str, object] = {}
_missing: dict[str, str] = {}
import_seconds: dict[str, float] = {}


def get(name: str):  # type: ignore[no-untyped-def]
    """The peer's module, configured (float64, one thread), or None."""
    if name in _loaded:
        return _loaded[name]
    if name in _missing:
        return None
    start = time.perf_counter()
    try:
        mod = importlib.import_module(name)
    except ImportError as err:
        _missing[name] = str(err)
        log(f"{name} is not installed: its rows are skipped ({INSTALL[name]}).")
        return None
    if name == "jax":
        mod.config.update("jax_enable_x64", True)
        mod.config.update("jax_platforms", "cpu")
    elif name == "torch":
        mod.set_num_threads(1)
        try:
            mod.set_num_interop_threads(1)
        except RuntimeError:
            pass
        mod.set_default_dtype(mod.float64)
    import_seconds[name] = time.perf_counter() - start
    _loaded[name] = mod
    return mod


def exclude(name: str) -> None:
    """Treat a peer as absent (python -m benchmarks --without NAME)."""
    _missing[name] = "excluded"
    log(f"{name} is excluded (--without {name}): its rows are skipped.")


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in ("numpy", "numba", "jax", "jaxlib", "autograd", "torch", "xdsl", "llvmlite",
                 "matplotlib"):
        try:
            from importlib.metadata import version

            out[name] = version(name)
        except Exception:
            out[name] = None
    return out


def missing() -> dict[str, str]:
    return dict(_missing)
