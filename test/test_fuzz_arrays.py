"""The array mode of the fuzzer (`tools/fuzz/arrays.py`, `--mode arrays`):
its programs cover the array language, a few seeds pass end to end, and
its checker fails on a wrong value and on a wrong gradient (so a passing
run means something)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from adpasses.tools.fuzz import arrays
from adpasses.tools.fuzz.arrays import check_arrays, generate_arrays, python_function, run_array_case


def test_programs_cover_the_array_language() -> None:
    seen: Counter[str] = Counter()
    for seed in range(300):
        p = generate_arrays(seed)
        seen.update(p.features)
        seen[f"return {p.returns}"] += 1
        f = python_function(p)  # every program is valid Python that numpy runs
        f(*arrays.inputs(p, np.random.default_rng(seed)))
    wanted = ["slice", "step slice", "reversed", "column", "row", "transpose", "broadcast row",
              "broadcast column", "slice store", "slice update", "in place", "copy", "column loop",
              "np.sum", "np.mean", "np.dot", ".sum()", "np.linalg.norm", "np.sum axis", "np.mean axis",
              "np.exp", "np.log", "np.sqrt", "np.tanh", "power", "op /", "temporary",
              "return number", "return array", "return tuple"]
    missing = [w for w in wanted if not seen[w]]
    assert not missing, missing


@pytest.mark.parametrize("seed", [0, 1, 2, 7])
def test_seeds_pass(seed: int) -> None:
    outcome = run_array_case(seed)
    assert outcome.kind == "ok", outcome.detail
    assert outcome.checked > 0


def _program(source: str, args, returns: str) -> arrays.ArrayProgram:  # type: ignore[no-untyped-def]
    name = source.split("(")[0].removeprefix("def ")
    return arrays.ArrayProgram(10**6 + len(source), name, source, args, returns)


def test_the_checker_catches_a_wrong_value_and_a_wrong_gradient(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import adpasses

    p = _program("def shifted(a0):\n    t = np.exp(np.tanh(a0))\n    return t[1:] * a0[:-1]\n", [(5,)], "array")
    assert check_arrays(p).kind == "ok"
    real_jit, real_vjp = adpasses.jit, adpasses.vjp

    def off_by_ulps(f):  # type: ignore[no-untyped-def]
        jf = real_jit(f)
        return lambda *a: jf(*a) * (1 + 1e-8)

    monkeypatch.setattr(adpasses, "jit", off_by_ulps)
    assert check_arrays(p).kind == "wrong primal"
    monkeypatch.setattr(adpasses, "jit", real_jit)

    def wrong_vjp(f):  # type: ignore[no-untyped-def]
        at = real_vjp(f)

        def call(*a):  # type: ignore[no-untyped-def]
            out, pullback = at(*a)
            return out, lambda ct: tuple(g * 1.001 for g in pullback(ct))
        return call

    monkeypatch.setattr(adpasses, "vjp", wrong_vjp)
    outcome = check_arrays(p)
    assert outcome.kind == "wrong gradient", outcome
