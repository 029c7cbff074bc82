"""ADPASSES_LOG=info and `inspect` show what each compilation cost, stage
by stage, and whether the disk cache had it (issue 19, item 6)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap

import numpy as np

import adpasses
from adpasses.api.functions import JitFunction


def cubes(x, a):
    s = 0.0
    for i in range(len(x)):
        s += a * x[i] * x[i] * x[i]
    return s


STEPS = ("ad-clone-primals", "ad-build-gradients", "ad-dead-forward")


def test_records_and_log_lines(caplog) -> None:  # type: ignore[no-untyped-def]
    jf = JitFunction(cubes)
    x = np.linspace(0.0, 1.0, 4)
    with caplog.at_level(logging.INFO, logger="adpasses"):
        adpasses.grad(jf)(x, 2.0)
        jf(x, 2.0)
        adpasses.grad(jf)(x, 2.0)  # nothing compiled: no record
    grad_record, primal_record = jf.compilations
    assert (grad_record.kind, grad_record.activity, grad_record.signature) == \
        ("gradient", ("dup", "const"), "float64[:], float")
    assert primal_record.kind == "primal" and primal_record.activity == ()
    for record in jf.compilations:
        assert record.disk_cache == "off" and record.source in ("compiled", "memory")
        assert record.stages["frontend"] > 0
    assert all(grad_record.stages[s] > 0 for s in STEPS)
    if grad_record.source == "compiled":
        assert all(grad_record.stages[s] > 0 for s in ("lower", "llvm-opt", "codegen"))
    lines = [r.getMessage() for r in caplog.records if r.name == "adpasses"]
    assert len(lines) == 2
    assert lines[0].startswith("cubes gradient (dup, const) for (float64[:], float): ")
    assert "ad-build-gradients" in lines[0] and "total" in lines[0]


def test_inspect_includes_the_timings() -> None:
    jf = JitFunction(cubes)
    x = np.linspace(0.0, 1.0, 4)
    adpasses.grad(jf)(x, 2.0)
    ins = adpasses.inspect(jf, x, 2.0)
    assert ins.timings["frontend"] > 0 and ins.timings["lower"] > 0
    assert all(s in ins.timings for s in STEPS)
    assert ins.compilations == jf.compilations and len(ins.compilations) == 1
    text = str(ins)
    assert "== timings ==" in text and "cubes gradient (dup, const)" in text


def test_adpasses_log_env_prints_hits_and_misses(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "logged_kernel.py").write_text(textwrap.dedent('''
        import adpasses

        @adpasses.jit(cache=True)
        def sq(x):
            s = 0.0
            for i in range(len(x)):
                s += x[i] * x[i]
            return s
    '''))
    code = ("import sys, numpy as np, adpasses; sys.path.insert(0, %r); import logged_kernel as m; "
            "print(adpasses.grad(m.sq)(np.ones(3)))" % str(tmp_path))
    env = {**os.environ, "ADPASSES_LOG": "info", "XDG_CACHE_HOME": str(tmp_path / "user")}
    env.pop("ADPASSES_CACHE_DIR", None)
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
        assert "[2. 2. 2.]" in r.stdout
    cold = [line for line in runs[0].stderr.splitlines() if line.startswith("adpasses: sq gradient")]
    warm = [line for line in runs[1].stderr.splitlines() if line.startswith("adpasses: sq gradient")]
    assert len(cold) == 1 and "compiled, disk cache miss" in cold[0] and "llvm-opt" in cold[0], runs[0].stderr
    assert len(warm) == 1 and "disk, disk cache hit" in warm[0] and "load" in warm[0], runs[1].stderr
