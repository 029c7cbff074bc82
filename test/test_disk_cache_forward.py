"""jit(cache=True) for forward mode, second derivatives and Jacobians:
jvp, fwddiff, jacfwd, hessian, hvp and jacrev store their compiled code on
disk like gradients (adpasses/api/disk_cache.py, entries "forward" and
"jacrev"), and a fresh process loads it: nothing compiled, no xDSL
imported. Every derivative is checked against central finite differences
(of a numpy reference of the kernels) in both processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from adpasses.native import object_cache

KERNEL = '''
import math
import adpasses

@adpasses.jit(cache=True)
def energy(x):
    s = 0.0
    for i in range(len(x)):
        s += math.exp(-x[i]) * x[i] * x[i] + 0.5 * x[i] * x[(i + 1) % len(x)]
    return s

@adpasses.jit(cache=True)
def ring(x, out):
    for i in range(len(out)):
        out[i] = math.sin(x[i]) * x[(i + 1) % len(x)]
'''

CHILD = '''
import json, sys
import numpy as np
sys.path.insert(0, {folder!r})
import adpasses
from adpasses import Duplicated, Output
from adpasses.native import object_cache
import {name} as mod
x = np.linspace(-0.5, 0.7, 5)
u = np.array([0.3, -1.0, 0.5, 2.0, -0.25])
value, tangent = adpasses.jvp(mod.energy, (x,), (u,))
fwd = adpasses.fwddiff(mod.energy, Duplicated(x.copy(), u.copy()))
H = adpasses.hessian(mod.energy)(x)
hv = adpasses.hvp(mod.energy)(x, u)
Jf = adpasses.jacfwd(mod.ring)(x, Output(np.zeros(5)))
Jr = adpasses.jacrev(mod.ring)(x, Output(np.zeros(5)))
print(json.dumps({{"value": value, "tangent": tangent, "fwddiff": float(fwd), "H": H.tolist(),
                  "hv": hv.tolist(), "Jf": Jf.tolist(), "Jr": Jr.tolist(), "stats": object_cache.stats,
                  "xdsl": sorted(m for m in sys.modules if m == "xdsl" or m.startswith("xdsl."))[:3]}}))
'''


def energy(x: np.ndarray) -> float:
    return float(np.sum(np.exp(-x) * x * x + 0.5 * x * np.roll(x, -1)))


def ring(x: np.ndarray) -> np.ndarray:
    return np.sin(x) * np.roll(x, -1)


def differences(f, x: np.ndarray, h: float = 1e-5) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Central differences: column j is (f(x + h e_j) - f(x - h e_j)) / 2h."""
    cols = [(np.asarray(f(x + h * e)) - np.asarray(f(x - h * e))) / (2 * h) for e in np.eye(x.size)]
    return np.stack(cols, axis=-1)


def check(r: dict) -> None:
    x = np.linspace(-0.5, 0.7, 5)
    u = np.array([0.3, -1.0, 0.5, 2.0, -0.25])
    grad = differences(energy, x)
    assert r["value"] == pytest.approx(energy(x), rel=1e-12)
    assert r["tangent"] == pytest.approx(float(grad @ u), rel=1e-7)
    assert r["fwddiff"] == pytest.approx(float(grad @ u), rel=1e-7)
    hessian = differences(lambda v: differences(energy, v, 1e-4), x, 1e-4)
    np.testing.assert_allclose(r["H"], hessian, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r["hv"], hessian @ u, rtol=1e-5, atol=1e-6)
    jacobian = differences(ring, x)
    np.testing.assert_allclose(r["Jf"], jacobian, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(r["Jr"], jacobian, rtol=1e-7, atol=1e-9)


def run_child(folder: Path, name: str) -> dict:
    env = {**os.environ, "XDG_CACHE_HOME": str(folder / "user_cache")}
    env.pop(object_cache.ENV_DIR, None)
    code = CHILD.format(folder=str(folder), name=name)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_forward_derivatives_load_in_a_fresh_process_without_xdsl(tmp_path: Path) -> None:
    (tmp_path / "dc_forward_kernel.py").write_text(KERNEL)
    cold = run_child(tmp_path, "dc_forward_kernel")
    check(cold)
    assert cold["stats"]["writes"] >= 6  # jvp, fwddiff, hessian, hvp, jacfwd, jacrev (and facts)
    warm = run_child(tmp_path, "dc_forward_kernel")
    check(warm)
    assert warm["stats"]["misses"] == 0 and warm["stats"]["writes"] == 0, warm["stats"]
    assert warm["stats"]["hits"] >= 6
    assert warm["xdsl"] == [], "loading forward derivatives from the disk cache imported xDSL"


def test_a_changed_width_is_another_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The width is part of the key: a hessian of width 2 after one of the
    default width compiles again (and is right), in the same process."""
    import importlib

    import adpasses

    monkeypatch.delenv(object_cache.ENV_DIR, raising=False)
    monkeypatch.setattr(object_cache, "stats", {k: 0 for k in object_cache.stats})
    (tmp_path / "dc_forward_width.py").write_text(KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("dc_forward_width")
    x = np.linspace(-0.5, 0.7, 5)
    hessian = differences(lambda v: differences(energy, v, 1e-4), x, 1e-4)
    np.testing.assert_allclose(adpasses.hessian(mod.energy)(x), hessian, rtol=1e-5, atol=1e-6)
    writes = object_cache.stats["writes"]
    np.testing.assert_allclose(adpasses.hessian(mod.energy, width=2)(x), hessian, rtol=1e-5, atol=1e-6)
    assert object_cache.stats["writes"] == writes + 1
    sys.modules.pop("dc_forward_width", None)
