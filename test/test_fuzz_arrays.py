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
        f(*arrays._copies(arrays.inputs(p, np.random.default_rng(seed)), p.layouts))
    wanted = ["slice", "step slice", "reversed", "column", "row", "transpose", "broadcast row",
              "broadcast column", "slice store", "slice update", "in place", "copy", "column loop",
              "np.sum", "np.mean", "np.dot", ".sum()", "np.linalg.norm", "np.sum axis", "np.mean axis",
              "np.exp", "np.log", "np.sqrt", "np.tanh", "power", "op /", "temporary",
              "return number", "return array", "return tuple",
              # issue 16's idioms
              "matmul", "transpose matmul", "np.dot matrix", "np.outer", "np.cumsum", "np.prod", "np.max",
              "np.min", ".max()", "np.max axis", "np.min axis", "np.abs", "abs", "np.clip", "np.sign", "op %",
              "min max", "np.maximum", "np.minimum", "np.where", "mask", "if else", "negative index",
              "element", "None row", "argument store", "for in", "enumerate", "enumerate zip", "for row in",
              "time steps swap", "return arrays", "return an array twice",
              "strided argument", "reversed argument", "offset argument", "fortran argument", "parallel",
              "prange sum", "prange rows", "helper returns a tuple", "helper returns a local array",
              "helper returns a view", "keyword argument", "default overridden", "default omitted"]
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


def test_argument_layouts_hold_the_values_in_other_memory() -> None:
    values = np.arange(12.0).reshape(3, 4)
    for layout in arrays.LAYOUTS:
        a = arrays._layout(values, layout)
        assert np.array_equal(a, values) and not np.shares_memory(a, values), layout
    assert not arrays._layout(values, "strided").flags.c_contiguous
    assert arrays._layout(values, "reversed").strides[0] < 0
    assert arrays._layout(values, "fortran").flags.f_contiguous
    assert arrays._layout(values, "offset").base.shape == (4, 4)


def test_finite_differences_that_straddle_a_kink_are_skipped() -> None:
    loss = arrays._Loss(lambda x: np.abs(x - 0.3), [np.ones(1)])

    def at(x0: float):  # type: ignore[no-untyped-def]
        return lambda t: [np.array([x0 + t])]

    assert loss.derivative(at(0.3 + 1e-7), 0.3) is None      # the step crosses |x - 0.3|'s kink
    fd, rounding = loss.derivative(at(0.8), 0.8)
    assert abs(fd - 1.0) < 1e-8 and rounding < 1e-8
    jump = arrays._Loss(lambda x: np.sign(x - 0.3) * x, [np.ones(1)])
    assert jump.derivative(at(0.3 - 4e-7), 0.3) is None


_WRITES = ("def writes(a0, a1):\n    a0[1:] = np.sin(a1[:-1])\n    a1 *= 2.0\n"
           "    return np.sum(a0 * a1) + np.max(np.abs(a0))\n")


def test_the_checker_compares_final_arguments_tangents_and_unchanged_arguments(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import adpasses

    p = _program(_WRITES, [(5,), (5,)], "number")
    p.layouts = ["strided", "reversed"]
    assert check_arrays(p).kind == "ok"
    real_jit, real_grad, real_jvp = adpasses.jit, adpasses.grad, adpasses.jvp

    def on_copies(f):  # type: ignore[no-untyped-def]
        jf = real_jit(f)
        return lambda *a: jf(*[x.copy() for x in a])   # the caller's arrays are never written

    monkeypatch.setattr(adpasses, "jit", on_copies)
    outcome = check_arrays(p)
    assert outcome.kind == "wrong primal" and "argument a0 after the call" in outcome.detail, outcome
    monkeypatch.setattr(adpasses, "jit", real_jit)

    def writes_back(f, argnums):  # type: ignore[no-untyped-def]
        g = real_grad(f, argnums)

        def call(*a):  # type: ignore[no-untyped-def]
            out = g(*a)
            a[1][0] = 7.0
            return out
        return call

    monkeypatch.setattr(adpasses, "grad", writes_back)
    assert check_arrays(p).kind == "changed argument"
    monkeypatch.setattr(adpasses, "grad", real_grad)

    monkeypatch.setattr(adpasses, "jvp", lambda f, x, t: (lambda v: (v[0], v[1] * 1.001))(real_jvp(f, x, t)))
    outcome = check_arrays(p)
    assert outcome.kind == "wrong tangent", outcome


def test_the_checker_runs_jit_parallel_bit_for_bit(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import adpasses

    source = ("def rows(a0, a1):\n    acc = 0.0\n    for i in range(a0.shape[0]):\n"
              "        acc += np.sum(np.sin(a0[i, :]) * a1)\n    return acc\n")
    p = _program(source, [(6, 4), (4,)], "number")
    p.parallel = True
    assert check_arrays(p).kind == "ok"
    real_jit, real_grad = adpasses.jit, adpasses.grad

    class Planted:
        """A jit(parallel=True) function whose primal goes through `change`."""

        def __init__(self, jf, change):  # type: ignore[no-untyped-def]
            self.jf, self.change, self.calls = jf, change, 0

        def __call__(self, *a):  # type: ignore[no-untyped-def]
            self.calls += 1
            return self.change(self.jf(*a), self.calls)

    def plant(change):  # type: ignore[no-untyped-def]
        def jit(f, parallel=False, **kw):  # type: ignore[no-untyped-def]
            jf = real_jit(f, parallel=parallel, **kw)
            return Planted(jf, change) if parallel else jf
        monkeypatch.setattr(adpasses, "jit", jit)
        monkeypatch.setattr(adpasses, "grad", lambda f, argnums: real_grad(
            f.jf if isinstance(f, Planted) else f, argnums))

    plant(lambda value, call: np.nextafter(value, np.inf) if call % 2 == 0 else value)
    assert check_arrays(p).kind == "parallel nondeterminism"
    plant(lambda value, call: value * (1 + 1e-7))
    assert check_arrays(p).kind == "parallel mismatch"


def test_the_checker_compares_vmap_with_a_loop_of_calls(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import adpasses

    source = "def batched(a0, a1, s):\n    return np.sum(np.sin(a0) * a1[0]) + s * np.max(a1)\n"
    p = _program(source, [(4,), (3, 4), ()], "number")
    assert check_arrays(p).kind == "ok"
    real_vmap = adpasses.vmap
    seen = []

    def off(f, in_axes=0, **kw):  # type: ignore[no-untyped-def]
        seen.append(in_axes)
        mapped = real_vmap(f, in_axes=in_axes, **kw)

        def call(*a):  # type: ignore[no-untyped-def]
            out = mapped(*a)
            return tuple(g[::-1] for g in out) if isinstance(out, tuple) else out[::-1]   # elements swapped
        return call

    monkeypatch.setattr(adpasses, "vmap", off)
    outcome = check_arrays(p)
    assert outcome.kind == "vmap mismatch", outcome
    assert seen and seen[0].count(0) == 1 and seen[0][2] is None   # one array batched, the float shared


def test_vmap_of_a_program_writing_a_shared_argument_is_a_loop_of_calls_on_it() -> None:
    """Arrays seed 101089: f writes its argument a0 (`t = a0; t += t[::-1]`);
    vmap over a1 with a0 shared runs the elements one after the other on a0
    itself, so the reference is a loop of calls sharing a0 (fresh copies per
    element gave a false vmap mismatch)."""
    import adpasses

    source = "def writes_shared(a0, a1):\n    t = a0\n    t += t[::-1] * 0.5\n    return np.sum(t * a1)\n"
    p = _program(source, [(5,), (5,)], "number")
    jf = adpasses.jit(python_function(p))
    x = arrays.inputs(p, np.random.default_rng(1))
    assert arrays._check_vmap(jf, x, ["contiguous"] * 2, [1], np.random.default_rng(2)) is None
