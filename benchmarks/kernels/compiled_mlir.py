"""Issue 2 rows: hand-written `.mlir` loops compiled by
`adpasses.native.llvm_jit.compile_module` (identity-layout memref<?xf64> arguments
marked ad.noalias), against numpy and a numba @njit loop:

- dot product sum_i x_i y_i and sum_i exp(-3 (x_i + 1)), n = 10^3 and 10^6,
  with bounds checks (the default) and with compile_module(...,
  boundscheck=False): the difference is the cost of the checks;
- the compile time of each module (parse + lower + LLVM O3 + MCJIT, a cold
  compile: every module gets fresh symbol names);
- the Python call overhead of a function of two floats (ns per call),
  against numba's dispatcher and a plain Python function.

benchmarks/foundation.py (`python -m benchmarks.foundation`) prints a
longer stand-alone version of these tables (ctypes/cffi, cache hits).
"""

from __future__ import annotations

import math
import time

import numpy as np

from benchmarks import peers
from benchmarks.harness import OPTIONS, Row, compare, log, size_label

KEY = "compiled_mlir"
TITLE = "Issue 2: compiled .mlir loops against numpy and numba (primal only)"

LOOP = """
func.func @{name}({params}) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %m3 = arith.constant -3.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {{
{body}
    %s = arith.addf %acc, %t : f64
    scf.yield %s : f64
  }}
  func.return %r : f64
}}
"""
DOT_BODY = """    %a = memref.load %x[%i] : memref<?xf64>
    %b = memref.load %y[%i] : memref<?xf64>
    %t = arith.mulf %a, %b : f64"""
EXP_BODY = """    %a = memref.load %x[%i] : memref<?xf64>
    %p = arith.addf %a, %one : f64
    %q = arith.mulf %p, %m3 : f64
    %t = math.exp %q : f64"""
ADD = """
func.func @{name}(%a: f64, %b: f64) -> f64 {{
  %r = arith.addf %a, %b : f64
  func.return %r : f64
}}
"""
_count = 0


def module_text(kind: str) -> tuple[str, str]:
    """Fresh MLIR text (new symbol name, so no cache answers) and the name."""
    global _count
    _count += 1
    name = f"{kind}_{_count}"
    if kind == "add":
        return ADD.format(name=name), name
    if kind == "dot":
        params = "%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}"
        return LOOP.format(name=name, params=params, body=DOT_BODY), name
    return LOOP.format(name=name, params="%x: memref<?xf64> {ad.noalias}", body=EXP_BODY), name


def compiled(kind: str, boundscheck: bool = True):  # type: ignore[no-untyped-def]
    from adpasses.native.llvm_jit import compile_module

    text, name = module_text(kind)
    start = time.perf_counter()
    mod = compile_module(text, boundscheck=boundscheck)
    return mod[name], time.perf_counter() - start


def numba_versions():  # type: ignore[no-untyped-def]
    numba = peers.get("numba")
    if numba is None:
        return None

    @numba.njit
    def dot(x, y):  # type: ignore[no-untyped-def]
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * y[i]
        return s

    @numba.njit
    def expsum(x):  # type: ignore[no-untyped-def]
        s = 0.0
        for i in range(x.shape[0]):
            s += math.exp(-3.0 * (x[i] + 1.0))
        return s

    @numba.njit
    def add(a, b):  # type: ignore[no-untyped-def]
        return a + b

    return {"dot": dot, "expsum": expsum, "add": add}


def _py_add(a, b):  # type: ignore[no-untyped-def]
    return a + b


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    rows: list[Row] = []
    nb = numba_versions()
    fns = {}
    compile_times: dict[tuple[str, bool], list[float]] = {}
    for kind in ("dot", "expsum", "add"):
        for checked in (True, False):
            if kind == "add" and not checked:
                continue
            times = []
            for _ in range(1 if OPTIONS.quick else 3):  # a cold compile each time
                fns[(kind, checked)], t = compiled(kind, checked)
                times.append(t)
            compile_times[(kind, checked)] = sorted(times)[len(times) // 2]
    rng = np.random.default_rng(8)
    for n in (10**3, 10**6):
        x, y = rng.random(n), rng.random(n)
        for kind in ("dot", "expsum"):
            args = (x, y) if kind == "dot" else (x,)
            want = float(x @ y) if kind == "dot" else float(np.exp(-3.0 * (x + 1.0)).sum())
            chk, unchk = fns[(kind, True)], fns[(kind, False)]
            contenders = {
                "adpasses .mlir (bounds checks)": lambda: chk(*args),
                "adpasses .mlir (boundscheck=False)": lambda: unchk(*args),
                "numpy": (lambda: x @ y) if kind == "dot" else (lambda: np.exp(-3.0 * (x + 1.0)).sum()),
            }
            if nb is not None:
                f = nb[kind]
                f(*args)
                contenders["numba @njit loop"] = lambda: f(*args)
            log(f"  {KEY} {kind} {size_label(n)}")
            t = compare(contenders)
            for tool, fn in contenders.items():
                got = fn()
                err = abs(got - want) / abs(want)
                row = Row(TITLE, f"{kind} (.mlir)", size_label(n), tool, n, primal_s=t[tool],
                          rel_err=float(err), ok=bool(err < 1e-9), extra={"value_check": "against numpy"})
                if tool.startswith("adpasses"):
                    row.compile_s = compile_times[(kind, "False" not in tool)]
                if tool == "adpasses .mlir (bounds checks)":
                    cost = t[tool] / t["adpasses .mlir (boundscheck=False)"] - 1.0
                    row.note = f"bounds checks cost {cost * 100:+.1f}%"
                    row.extra["boundscheck_cost"] = cost
                if tool != "numpy":
                    row.note = (row.note + "; " if row.note else "") + \
                        f"{t[tool] / t['numpy']:.2f}x numpy"
                rows.append(row)
    # call overhead: a function of two floats
    add = fns[("add", True)]
    contenders = {"adpasses compiled add(a, b)": lambda: add(1.5, 2.5),
                  "plain Python function": lambda: _py_add(1.5, 2.5)}
    if nb is not None:
        nadd = nb["add"]
        nadd(1.5, 2.5)
        contenders["numba @njit add(a, b)"] = lambda: nadd(1.5, 2.5)
    contenders["(empty lambda: timing loop overhead)"] = lambda: None
    t = compare(contenders)
    base = t["(empty lambda: timing loop overhead)"]
    for tool, secs in t.items():
        if tool.startswith("(empty"):
            continue
        row = Row(TITLE, "call overhead, 2 floats", "1 call", tool, None, primal_s=secs - base,
                  note="per call, the timing loop's own cost subtracted", extra={"raw_s": secs,
                                                                                  "loop_s": base})
        if tool.startswith("adpasses"):
            row.compile_s = compile_times[("add", True)]
            row.rel_err = abs(add(1.5, 2.5) - 4.0)
            row.ok = row.rel_err == 0
        rows.append(row)
    return rows
