"""Cold start: a fresh Python process imports the tool and computes its
first gradient, with the tool's on-disk cache cold (empty) or warm (filled
by an earlier process). adpasses (`jit(cache=True)`), numba
(`njit(cache=True)` of a hand-written gradient) and JAX (its persistent
compilation cache) on the energy kernel (docs/deployment.md).

    python -m benchmarks.cold_start [--runs N]

Each figure is the median over N fresh processes of the wall time from
the start of the script to the first gradient's return, split into
importing numpy, importing the tool (and defining the function) and the
first gradient; the interpreter's own start (~20 ms) is not included. `python -m benchmarks` runs it too and
puts the table into latest.md.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ENERGY = '''
def energy(x):
    rho = 0.0
    for i in range(len(x)):
        rho += math.exp(-3.0 * (x[i] + 1.0))
    return rho**2 + rho**3 + rho**4 / 4
'''

# Hand-written gradient for numba (the harness's numba rows are the same idea).
ENERGY_GRAD = '''
def energy_grad(x):
    rho = 0.0
    for i in range(len(x)):
        rho += math.exp(-3.0 * (x[i] + 1.0))
    d = 2 * rho + 3 * rho**2 + rho**3
    g = np.empty_like(x)
    for i in range(len(x)):
        g[i] = d * -3.0 * math.exp(-3.0 * (x[i] + 1.0))
    return g
'''

SCRIPTS = {
    "adpasses": ("import math\nimport numpy as np\nimport adpasses\n"
                 "energy = adpasses.jit(cache=True)(energy_py)\n",
                 "adpasses.grad(energy)(x)"),
    "numba": ("import math\nimport numpy as np\nimport numba\n"
              "energy_grad = numba.njit(cache=True)(energy_grad_py)\n",
              "energy_grad(x)"),
    "jax": ("import numpy as np\nimport jax\njax.config.update('jax_enable_x64', True)\n"
            "jax.config.update('jax_platforms', 'cpu')\n"
            "jax.config.update('jax_compilation_cache_dir', CACHE)\n"
            "jax.config.update('jax_persistent_cache_min_compile_time_secs', 0.0)\n"
            "jax.config.update('jax_persistent_cache_min_entry_size_bytes', 0)\n"
            "import jax.numpy as jnp\n"
            "g = jax.jit(jax.grad(lambda x: (lambda r: r**2 + r**3 + r**4 / 4)(jnp.sum(jnp.exp(-3.0 * (x + 1.0))))))\n",
            "g(x).block_until_ready()"),
}


def _module_text(tool: str, cache: str) -> str:
    setup, call = SCRIPTS[tool]
    body = (ENERGY.replace("def energy", "def energy_py") if tool == "adpasses"
            else ENERGY_GRAD.replace("def energy_grad", "def energy_grad_py") if tool == "numba" else "")
    return "\n".join([
        "import time",
        "_t0 = time.perf_counter()",
        f"CACHE = {cache!r}",
        "import math",
        "import numpy as np",
        "_tn = time.perf_counter()",
        body,
        setup,
        "_t1 = time.perf_counter()",
        "x = np.linspace(-0.5, 0.5, 8)",
        call,
        "_t2 = time.perf_counter()",
        "import json, sys",
        'print(json.dumps({"numpy": _tn - _t0, "import": _t1 - _tn, "first": _t2 - _t1, "xdsl": "xdsl" in sys.modules}))',
        "",
    ])


def _run(folder: str, tool: str, cache: str) -> dict:
    env = {**os.environ, "ADPASSES_CACHE_DIR": cache, "NUMBA_CACHE_DIR": cache,
           "PYTHONDONTWRITEBYTECODE": "0"}
    out = subprocess.run([sys.executable, os.path.join(folder, f"cold_{tool}.py")], env=env,
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"{tool}: {out.stderr.strip().splitlines()[-1] if out.stderr else out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def available(tool: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(tool) is not None


def measure(runs: int = 3, tools: tuple[str, ...] = ("adpasses", "numba", "jax")) -> list[dict]:
    """Rows: tool, cache (cold/warm), median import and first-gradient seconds."""
    rows = []
    for tool in tools:
        if not available(tool):
            rows.append({"tool": tool, "missing": True})
            continue
        folder = tempfile.mkdtemp(prefix="adpasses_cold_")
        try:
            cache = os.path.join(folder, "cache")
            with open(os.path.join(folder, f"cold_{tool}.py"), "w") as f:
                f.write(_module_text(tool, cache))
            samples: dict[str, list[dict]] = {"cold": [], "warm": []}
            for _ in range(runs):
                shutil.rmtree(cache, ignore_errors=True)
                samples["cold"].append(_run(folder, tool, cache))
                samples["warm"].append(_run(folder, tool, cache))  # the cache the cold run filled
            for state, got in samples.items():
                rows.append({"tool": tool, "cache": state,
                             "numpy_s": statistics.median(s["numpy"] for s in got),
                             "import_s": statistics.median(s["import"] for s in got),
                             "first_s": statistics.median(s["first"] for s in got),
                             "total_s": statistics.median(s["numpy"] + s["import"] + s["first"] for s in got),
                             "xdsl_imported": any(s["xdsl"] for s in got)})
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| tool | disk cache | import numpy | import the tool | first gradient | tool + first gradient | total |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("missing"):
            lines.append(f"| {r['tool']} | not installed | | | | | |")
            continue
        note = " (xDSL imported)" if r["tool"] == "adpasses" and r["cache"] == "warm" and r["xdsl_imported"] else ""
        lines.append(f"| {r['tool']} | {r['cache']} | {1e3 * r['numpy_s']:.0f} ms | {1e3 * r['import_s']:.0f} ms | "
                     f"{1e3 * r['first_s']:.0f} ms{note} | {1e3 * (r['import_s'] + r['first_s']):.0f} ms | "
                     f"{1e3 * r['total_s']:.0f} ms |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m benchmarks.cold_start", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    print(table(measure(args.runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
