"""Fresh jitted functions for the thread, fork and memory tests: each call
writes a new source file (the frontend reads a function's source), so that
every function is compiled for the first time, in whatever thread calls it.

`fresh(k)` is `s = sum_i sin(c x_i) x_i` (+ `0.5 s` carried, see `value`)
with `c = 1 + k / 1000`; `value` and `gradient` are the hand-derived
reference (no finite differences: the tests compare many calls exactly).
"""

from __future__ import annotations

import importlib.util
import math
import os
import tempfile

import numpy as np

import adpasses

_SOURCE = '''
import math


def fresh{k}(x):
    s = 0.0
    for i in range(len(x)):
        s = s * 0.5 + math.sin(x[i] * {c!r}) * x[i]
    return s
'''

_DIR = tempfile.mkdtemp(prefix="adpasses_fresh_")


def coefficient(k: int) -> float:
    return 1.0 + k / 1000.0


def plain(k: int):  # type: ignore[no-untyped-def]
    """The plain Python function number k (from a file of its own)."""
    path = os.path.join(_DIR, f"fresh{k}_{os.getpid()}.py")
    with open(path, "w") as f:
        f.write(_SOURCE.format(k=k, c=coefficient(k)))
    spec = importlib.util.spec_from_file_location(f"fresh{k}_{os.getpid()}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return getattr(module, f"fresh{k}")


def fresh(k: int) -> adpasses.api.functions.JitFunction:
    return adpasses.jit(plain(k))


def value(k: int, x: np.ndarray) -> float:
    c, s = coefficient(k), 0.0
    for xi in x:
        s = s * 0.5 + math.sin(xi * c) * xi
    return s


def gradient(k: int, x: np.ndarray) -> np.ndarray:
    """ds/dx_i = 0.5^(n-1-i) (c cos(c x_i) x_i + sin(c x_i))."""
    c, n = coefficient(k), len(x)
    weights = 0.5 ** (n - 1 - np.arange(n))
    return weights * (c * np.cos(c * x) * x + np.sin(c * x))
