"""The cache decisions issue 6 expects, through the Python API: for each
kernel, the bytes `adpasses.cache_report` says are taped for concrete
arguments, the decision and location of the taped values, and the gradient
(which must stay right whatever is taped) against central finite
differences. The same cases in MLIR are FileChecked in
test/lit/cache/expected_decisions.mlir."""

from __future__ import annotations

import inspect as pyinspect

import numpy as np
import pytest
from finite_diff import assert_matches, copy_args, finite_differences

import adpasses

THIS_FILE = __file__


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


def line_of(fn, text: str) -> int:
    """The line number in this file of the first line of `fn` holding `text`."""
    source, first = pyinspect.getsourcelines(fn)
    for k, line in enumerate(source):
        if text in line:
            return first + k
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def sdiff(x):
    s = 0.0
    for i in range(0, len(x) - 1, 2):
        d = x[i + 1] - x[i]
        s += d * d
    return s


def energy(x):
    rho = 0.0
    for i in range(len(x)):
        rho += np.exp(-3.0 * (x[i] + 1.0))
    return rho ** 2 + rho ** 3 + rho ** 4 / 4.0


def square_then_sum(x):
    for i in range(len(x)):
        x[i] = x[i] * x[i]
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


def shift_then_sum(x):
    for i in range(len(x)):
        x[i] = x[i] + 1.0
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


def square_into(a, b):
    for i in range(len(a)):
        b[i] = a[i] * a[i]
    s = 0.0
    for i in range(len(b)):
        s += b[i] * a[i]
    return s


def euler(u, steps, dt):
    n = len(u)
    du = np.zeros(n)
    for t in range(steps):
        for i in range(1, n):
            du[i] = -u[i] ** 3 + 0.1 * u[i - 1]
        for i in range(1, n):
            u[i] = u[i] + dt * du[i]
    s = 0.0
    for i in range(n):
        s += u[i] * u[i]
    return s


def taped(report) -> list:
    return [e for e in report.entries if e.decision == "tape"]


def check_gradient(py, args, argnums) -> None:
    got = adpasses.grad(adpasses.jit(py), argnums)(*copy_args(args))
    got = got if isinstance(got, tuple) else (got,)
    expected = finite_differences(py, args, argnums)
    for g, e in zip(got, expected):
        assert_matches(g, e)


@pytest.mark.parametrize("n", [7, 40])
def test_strided_difference_tapes_nothing(rng, n):
    x = rng.standard_normal(n)
    report = adpasses.cache_report(adpasses.jit(sdiff), x)
    assert report.taped_bytes == 0
    assert not taped(report)
    # Its iterations are independent: reversed loop-locally, the difference
    # is still in a register, nothing is reloaded (without loop-local
    # reverse both loads are: test/lit/cache/expected_decisions.mlir,
    # --no-loop-local).
    [d] = [e for e in report.entries if e.value == "%d"]
    assert d.decision == "reuse" and "loop-locally" in d.reason
    assert not [e for e in report.entries if e.decision == "reload"]
    assert [local for _, local, _ in report.loops] == [True]
    check_gradient(sdiff, [x], (0,))


@pytest.mark.parametrize("n", [5, 100])
def test_energy_tapes_the_exponentials_by_the_cost_model(rng, n):
    x = rng.uniform(-0.5, 0.5, n)
    report = adpasses.cache_report(adpasses.jit(energy), x)
    [entry] = taped(report)
    assert entry.op.startswith("math.exp") and "cost model" in entry.reason
    assert entry.count == n and entry.bytes == 8 * n
    assert report.taped_bytes == 8 * n
    assert entry.location.startswith(f"{THIS_FILE}:{line_of(energy, 'np.exp')}:")
    check_gradient(energy, [x], (0,))


def test_an_integer_exponent_is_named_by_its_own_source_text(rng):
    """`rho ** 3`'s exponent (an i64 the gradient reuses) is the `3` at
    its own column; it was labelled `rho ** 3`, the whole power, with the
    type i64."""
    report = adpasses.cache_report(adpasses.jit(energy), rng.uniform(-0.5, 0.5, 4))
    ints = {e.value: e.location for e in report.entries if e.dtype == "i64"}
    line = line_of(energy, "rho ** 3")
    source = pyinspect.getsourcelines(energy)[0][line - line_of(energy, "def energy")]
    assert ints == {"3": f"{THIS_FILE}:{line}:{source.index('3') + 1}",
                    "4": f"{THIS_FILE}:{line}:{source.index('4') + 1}"}
    assert not [e for e in report.entries if e.value.startswith("rho **")]


@pytest.mark.parametrize("n", [3, 64])
def test_in_place_square_fused_and_reversed_loop_locally_tapes_nothing(rng, n):
    """The two loops fuse (ad-fuse-loops) and each iteration is reversed
    right after its forward: the overwritten value is still in a register.
    (Without loop-local reverse exactly the n overwritten values are taped:
    test/lit/cache/expected_decisions.mlir, --no-loop-local.)"""
    x = rng.standard_normal(n)
    report = adpasses.cache_report(adpasses.jit(square_then_sum), x)
    assert not taped(report) and report.taped_bytes == 0
    [(where, local, reason)] = report.loops
    line = line_of(square_then_sum, "for i in range(len(x)):")
    assert local and where.startswith(f"{THIS_FILE}:{line}:") and "fused with the loop at" in reason
    check_gradient(square_then_sum, [x], (0,))


def test_overwrite_whose_old_value_is_not_needed_tapes_nothing(rng):
    x = rng.standard_normal(50)
    report = adpasses.cache_report(adpasses.jit(shift_then_sum), x)
    assert report.taped_bytes == 0 and not taped(report)
    check_gradient(shift_then_sum, [x], (0,))


def test_noalias_arguments_tape_nothing_aliased_ones_tape_n_doubles(rng):
    f = adpasses.jit(square_into)
    a, b = rng.standard_normal(30), rng.standard_normal(30)
    separate = adpasses.cache_report(f, a, b, argnums=(0, 1))
    assert separate.taped_bytes == 0
    same = adpasses.cache_report(f, a, a, argnums=(0, 1))
    [entry] = taped(same)
    assert "may alias" in entry.reason and entry.bytes == 8 * 30
    check_gradient(square_into, [a, b], (0, 1))
    # The same array twice: the gradient of the aliased program, accumulated
    # into the one shared shadow.
    def aliased(v):
        return square_into(v, v)

    w = a.copy()
    got = adpasses.autodiff(f, adpasses.Duplicated(w, dw := np.zeros_like(w)),
                            adpasses.Duplicated(w, dw))
    assert got == (None, None)
    assert_matches(dw, finite_differences(aliased, [a], (0,))[0])


@pytest.mark.parametrize("n,steps", [(6, 4), (10, 25)])
def test_euler_tapes_one_state_per_step(rng, n, steps):
    u = rng.uniform(0.2, 1.0, n)
    report = adpasses.cache_report(adpasses.jit(euler), u, steps, 0.01, argnums=0)
    # One state per step: u[1:] before each update (u[0] is never written).
    [entry] = taped(report)
    assert entry.location.startswith(f"{THIS_FILE}:{line_of(euler, 'du[i] = -u[i]')}:")
    assert (entry.count, report.taped_bytes) == ((n - 1) * steps, 8 * (n - 1) * steps)
    check_gradient(euler, [u, steps, 0.01], (0,))


def test_euler_with_respect_to_the_step_also_tapes_the_rates(rng):
    # d/ddt needs du[i] of every step (u[i] += dt * du[i]); du is overwritten
    # the next step and recomputing it would need u[i-1] from another
    # iteration of the loop, so it is taped: two vectors per step.
    n, steps = 8, 5
    u = rng.uniform(0.2, 1.0, n)
    report = adpasses.cache_report(adpasses.jit(euler), u, steps, 0.01, argnums=(0, 2))
    assert sorted(e.value for e in taped(report)) == ["du[i]", "u[i]"]
    assert report.taped_bytes == 2 * 8 * (n - 1) * steps
    check_gradient(euler, [u, steps, 0.01], (0, 2))


# -- counts of triangular nests (issue 18, item 6): an int, summed exactly ----


def strided_triangle(x):
    s = 0.0
    for i in range(len(x)):
        for j in range(i + 1, len(x), 2):
            x[j] = x[j] * 0.5 + x[i] * 0.25
            s += x[j] * x[j]
    return s


def steps_of_triangles(x, steps):
    s = 0.0
    for t in range(steps):
        for i in range(len(x)):
            for j in range(i):
                x[j] = x[j] * 0.9 + 0.1 * x[i]
                s += x[j] * x[j]
    return s


def tetrahedron(x):
    s = 0.0
    for i in range(len(x)):
        for j in range(i):
            for k in range(j, i):
                x[k] = x[k] * 0.9 + 0.05 * x[j]
                s += x[k] * x[k]
    return s


def brute_force_stores(py, args) -> int:
    """How many times the store `x[...] = ...` runs: the program traced in
    Python on a counting array."""
    class Counting(np.ndarray):
        stores = 0

        def __setitem__(self, key, value):
            Counting.stores += 1
            super().__setitem__(key, value)

    x = np.array(args[0], dtype=float).view(Counting)
    Counting.stores = 0
    py(x, *args[1:])
    return Counting.stores


@pytest.mark.parametrize("py,extra", [(strided_triangle, ()), (steps_of_triangles, (3,)),
                                      (tetrahedron, ())])
@pytest.mark.parametrize("n", [1, 6, 17])
def test_triangular_nest_counts_are_summed_exactly(rng, py, extra, n):
    x = rng.uniform(0.5, 1.5, n)
    args = [x, *extra]
    report = adpasses.cache_report(adpasses.jit(py), *args)
    assert isinstance(report.taped_bytes, int)
    # The old value of x[k] is taped once per store (the only overwrite).
    stores = brute_force_stores(py, args)
    old_values = [e for e in taped(report) if e.op == "memref.load"]
    assert old_values, str(report)
    for e in old_values:
        assert e.count == stores, str(report)
    assert report.taped_bytes == sum(e.bytes for e in taped(report))
    assert "sum(" in report.taped_bytes_formula
    if n > 1:
        check_gradient(py, args, (0,))


def test_triangular_count_beyond_the_enumeration_budget_is_unknown_not_guessed(monkeypatch):
    from adpasses.cache import report as report_module

    x = np.linspace(0.5, 1.5, 12)
    monkeypatch.setattr(report_module, "ENUMERATED_ITERATIONS", 5)
    report = adpasses.cache_report(adpasses.jit(tetrahedron), x)
    assert report.taped_bytes is None
    assert "sum(" in report.taped_bytes_formula and "taped bytes: 8" in str(report)
