"""jit(cache=True): compiled code on disk (docs/deployment.md).

Each test writes a module into a temporary folder and imports it afresh, so
that every import makes new function objects (and new JitFunctions) reading
the same cache folder beside the source. Every gradient a test gets from the
cache is checked against central finite differences.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import adpasses
from adpasses.native import object_cache

KERNEL = '''
import math
import adpasses

SCALE = {scale}

def helper(v):
    return math.exp(-{rate} * (v + 1.0))

@adpasses.jit(cache=True{options})
def energy(x):
    rho = 0.0
    for i in range(len(x)):
        rho += helper(x[i])
    return SCALE * (rho**2 + rho**3 + rho**4 / 4)

@adpasses.jit(cache=True)
def axpy(a, x, y):
    for i in range(len(x)):
        y[i] = y[i] + a * x[i]
    return 0.5 * a

def plain(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i] * x[i]
    return s
'''


def write_kernel(folder: Path, name: str, scale: str = "1.0", rate: str = "3.0", options: str = "") -> None:
    (folder / f"{name}.py").write_text(KERNEL.format(scale=scale, rate=rate, options=options))


def fresh_import(folder: Path, name: str):  # type: ignore[no-untyped-def]
    """The module imported anew (new function objects, same source path)."""
    sys.modules.pop(name, None)
    importlib.invalidate_caches()
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(name)


def energy_reference(x: np.ndarray, scale: float = 1.0, rate: float = 3.0) -> float:
    rho = float(np.sum(np.exp(-rate * (x + 1.0))))
    return scale * (rho**2 + rho**3 + rho**4 / 4)


def central_differences(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:  # type: ignore[no-untyped-def]
    out = np.empty_like(x)
    for i in range(x.size):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        out[i] = (f(up) - f(down)) / (2 * h)
    return out


def check_energy_gradient(mod, scale: float = 1.0, rate: float = 3.0) -> None:  # type: ignore[no-untyped-def]
    x = np.linspace(-0.5, 0.5, 7)
    g = adpasses.grad(mod.energy)(x)
    fd = central_differences(lambda v: energy_reference(v, scale, rate), x)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    value, g2 = adpasses.value_and_grad(mod.energy)(x)
    assert value == pytest.approx(energy_reference(x, scale, rate), rel=1e-12)
    np.testing.assert_allclose(g2, fd, rtol=1e-6, atol=1e-8)


@pytest.fixture
def kernel_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(object_cache.ENV_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user_cache"))  # the dispatch code's folder
    monkeypatch.setattr(object_cache, "stats", {k: 0 for k in object_cache.stats})
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("dc_kernel")]:
        del sys.modules[name]
    if str(tmp_path) in sys.path:
        sys.path.remove(str(tmp_path))


def entries(folder: Path) -> list[Path]:
    return sorted((folder / object_cache.FOLDER).glob("*.adc"))


def test_miss_then_hit_beside_the_source(kernel_dir: Path) -> None:
    write_kernel(kernel_dir, "dc_kernel_a")
    mod = fresh_import(kernel_dir, "dc_kernel_a")
    check_energy_gradient(mod)
    first = dict(object_cache.stats)
    assert first["hits"] == 0
    written = entries(kernel_dir)
    assert len(written) >= 3  # facts, gradient, value_and_grad's gradient

    mod = fresh_import(kernel_dir, "dc_kernel_a")  # new JitFunction: in-memory caches empty
    check_energy_gradient(mod)
    assert object_cache.stats["hits"] >= 3
    assert object_cache.stats["writes"] == first["writes"]  # nothing compiled again
    assert entries(kernel_dir) == written


def test_primal_autodiff_and_written_arrays_from_the_cache(kernel_dir: Path) -> None:
    write_kernel(kernel_dir, "dc_kernel_b")
    for round_ in range(2):
        mod = fresh_import(kernel_dir, "dc_kernel_b")
        x, y = np.arange(5.0), np.ones(5)
        assert mod.axpy(2.0, x, y) == 1.0
        np.testing.assert_array_equal(y, 1.0 + 2.0 * x)
        dx, dy = np.zeros(5), np.ones(5)
        y = np.ones(5)
        derivs = adpasses.autodiff(mod.axpy, adpasses.Active(2.0), adpasses.Duplicated(x, dx),
                                   adpasses.Duplicated(y, dy))
        # d(0.5 a)/da = 0.5, and each y_i = y_i + a x_i with seed 1 on y: sum(x)
        assert derivs[0] == pytest.approx(0.5 + x.sum())
        np.testing.assert_allclose(dx, 2.0 * np.ones(5))
        # grad of a function that writes an array: the facts entry says so
        g = adpasses.grad(mod.axpy, argnums=(0, 1))(2.0, x, np.ones(5))
        assert g[0] == pytest.approx(0.5) and np.all(g[1] == 0.0)
        if round_ == 0:
            writes = object_cache.stats["writes"]
    assert object_cache.stats["writes"] == writes


def test_source_change_of_the_function_and_of_a_callee_and_of_a_constant(kernel_dir: Path) -> None:
    write_kernel(kernel_dir, "dc_kernel_c")
    check_energy_gradient(fresh_import(kernel_dir, "dc_kernel_c"))
    writes = object_cache.stats["writes"]
    for scale, rate in (("1.0", "2.0"), ("2.5", "2.0")):  # the callee's source; a global constant
        write_kernel(kernel_dir, "dc_kernel_c", scale=scale, rate=rate)
        before = object_cache.stats["writes"]
        check_energy_gradient(fresh_import(kernel_dir, "dc_kernel_c"), float(scale), float(rate))
        assert object_cache.stats["writes"] > before  # recompiled, not the stale code
    # a change of the function's own text (a comment moves nothing but the source)
    text = (kernel_dir / "dc_kernel_c.py").read_text().replace("    rho = 0.0\n", "    rho = 0.0  # start\n")
    (kernel_dir / "dc_kernel_c.py").write_text(text)
    before = object_cache.stats["writes"]
    check_energy_gradient(fresh_import(kernel_dir, "dc_kernel_c"), 2.5, 2.0)
    assert object_cache.stats["writes"] > before > writes


def test_option_change_misses(kernel_dir: Path) -> None:
    write_kernel(kernel_dir, "dc_kernel_d")
    check_energy_gradient(fresh_import(kernel_dir, "dc_kernel_d"))
    names = set(entries(kernel_dir))
    write_kernel(kernel_dir, "dc_kernel_d", options=", boundscheck=False")
    check_energy_gradient(fresh_import(kernel_dir, "dc_kernel_d"))
    assert object_cache.stats["hits"] == 0
    assert len(set(entries(kernel_dir)) - names) >= 2


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip"])
def test_damaged_file_is_recompiled(kernel_dir: Path, damage: str) -> None:
    name = f"dc_kernel_e_{damage}"
    write_kernel(kernel_dir, name)
    check_energy_gradient(fresh_import(kernel_dir, name))
    for path in entries(kernel_dir):
        data = path.read_bytes()
        if damage == "truncate":
            path.write_bytes(data[: len(data) // 2])
        elif damage == "garbage":
            path.write_bytes(b"not a cache file")
        else:
            path.write_bytes(data[:-10] + bytes(b ^ 0xFF for b in data[-10:]))
    writes = object_cache.stats["writes"]
    check_energy_gradient(fresh_import(kernel_dir, name))
    assert object_cache.stats["rejected"] >= 3
    assert object_cache.stats["writes"] > writes  # rewritten
    before = object_cache.stats["hits"]
    check_energy_gradient(fresh_import(kernel_dir, name))
    assert object_cache.stats["hits"] > before  # the rewritten files are good


def test_cache_dir_from_the_environment(kernel_dir: Path, tmp_path_factory: pytest.TempPathFactory,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path_factory.mktemp("cache_elsewhere")
    monkeypatch.setenv(object_cache.ENV_DIR, str(elsewhere))
    write_kernel(kernel_dir, "dc_kernel_f")
    check_energy_gradient(fresh_import(kernel_dir, "dc_kernel_f"))
    assert not (kernel_dir / object_cache.FOLDER).exists()
    assert list(elsewhere.glob("*.adc"))


def test_cache_flag_is_checked() -> None:
    with pytest.raises(TypeError, match="cache"):
        adpasses.jit(cache="yes")


# -- other processes ------------------------------------------------------------------------

CHILD = '''
import json, sys
import numpy as np
sys.path.insert(0, {folder!r})
import adpasses
from adpasses.native import object_cache
import {name} as mod
x = np.linspace(-0.5, 0.5, 7)
g = adpasses.grad(mod.energy)(x)
v = mod.energy(x)
x2, y = np.arange(3.0), np.zeros(3)
adpasses.autodiff(mod.axpy, adpasses.Active(1.5), adpasses.Duplicated(x2, np.zeros(3)),
                  adpasses.Duplicated(y, np.ones(3)))
print(json.dumps({{"grad": g.tolist(), "value": v, "stats": object_cache.stats,
                  "xdsl": sorted(m for m in sys.modules if m == "xdsl" or m.startswith("xdsl."))[:3]}}))
'''


def run_children(folder: Path, name: str, n: int, cache_env: dict) -> list[dict]:
    env = {**os.environ, **cache_env}
    env.pop(object_cache.ENV_DIR, None)
    code = CHILD.format(folder=str(folder), name=name)
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env, text=True) for _ in range(n)]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, stderr
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def test_concurrent_writers_then_a_warm_process_without_xdsl(kernel_dir: Path) -> None:
    write_kernel(kernel_dir, "dc_kernel_g")
    # The process-wide dispatch code goes to the user's cache folder: a private one here.
    env = {"XDG_CACHE_HOME": str(kernel_dir / "user_cache")}
    x = np.linspace(-0.5, 0.5, 7)
    fd = central_differences(energy_reference, x)
    cold = run_children(kernel_dir, "dc_kernel_g", 3, env)
    for r in cold:
        np.testing.assert_allclose(r["grad"], fd, rtol=1e-6, atol=1e-8)
        assert r["value"] == pytest.approx(energy_reference(x), rel=1e-12)
    assert not list((kernel_dir / object_cache.FOLDER).glob("*.tmp"))  # no leftovers
    [warm] = run_children(kernel_dir, "dc_kernel_g", 1, env)
    assert warm["stats"]["misses"] == 0 and warm["stats"]["writes"] == 0, warm["stats"]
    assert warm["stats"]["hits"] >= 5  # facts, gradient, primal, autodiff's gradient, dispatch
    np.testing.assert_allclose(warm["grad"], fd, rtol=1e-6, atol=1e-8)
    assert warm["xdsl"] == [], "loading from the disk cache imported xDSL"


HELPERS = '''
SCALE = {scale}

def f(v):
    return {rate} * v
'''

CALLER = '''
import adpasses
import dc_kernel_helpers_e as helpers
import dc_kernel_pkg_e.sub

def shifted(v, s=helpers.SCALE):      # a default evaluated where the callee is defined
    return v * s

@adpasses.jit(cache=True)
def through_module(x):
    s = 0.0
    for i in range(len(x)):
        s += helpers.f(x[i]) * x[i] + helpers.SCALE * x[i] + shifted(x[i]) + dc_kernel_pkg_e.sub.g(x[i])
    return s
'''


def test_module_attributes_and_callee_defaults_are_part_of_the_key(kernel_dir: Path) -> None:
    """`helpers.f(x)`, `helpers.SCALE`, `pkg.sub.g(x)` and a callee's default
    `s=helpers.SCALE` are read from other modules: editing them must
    recompile, not serve the code compiled for the old source (it did: the
    key held only the module's name, and the old numbers came back)."""
    (kernel_dir / "dc_kernel_pkg_e").mkdir()
    (kernel_dir / "dc_kernel_pkg_e" / "__init__.py").write_text("")
    (kernel_dir / "dc_kernel_caller_e.py").write_text(CALLER)
    x = np.linspace(-1.0, 1.0, 5)
    for scale, rate, power in (("2.0", "3.0", "2"), ("5.0", "3.0", "2"), ("5.0", "7.0", "2"),
                               ("5.0", "7.0", "3")):
        (kernel_dir / "dc_kernel_helpers_e.py").write_text(HELPERS.format(scale=scale, rate=rate))
        (kernel_dir / "dc_kernel_pkg_e" / "sub.py").write_text(f"def g(v):\n    return v ** {power}\n")
        for name in ("dc_kernel_helpers_e", "dc_kernel_pkg_e", "dc_kernel_pkg_e.sub"):
            sys.modules.pop(name, None)
        mod = fresh_import(kernel_dir, "dc_kernel_caller_e")
        a, c, p = float(scale), float(rate), int(power)

        def reference(v: np.ndarray) -> float:
            return float(np.sum(c * v * v + a * v + a * v + v**p))

        assert mod.through_module(x) == pytest.approx(reference(x), rel=1e-12)
        np.testing.assert_allclose(adpasses.grad(mod.through_module)(x), central_differences(reference, x),
                                   rtol=1e-6, atol=1e-8)
