"""Cache decisions for local arrays (docs/benchmarks.md, "Compiler problems
found", item 2): the gradient frees a local array of the function body only
after the reverse sweep (`gradient.GradientBuilder` defers the top block's
deallocations), so that dealloc does not stop the reverse sweep from
reloading the array; a buffer allocated and freed in each iteration is gone
before the reverse sweep, and what is read from it is taped. Each case checks
the taped bytes `adpasses.cache_report` gives and the gradient against
central finite differences. The MLIR versions are FileChecked in
test/lit/cache/local_array_dealloc.mlir."""

from __future__ import annotations

import numpy as np
import pytest
from finite_diff import assert_matches, copy_args, finite_differences

import adpasses


@pytest.fixture
def rng():
    return np.random.default_rng(20261123)


def taped(report) -> list:
    return [e for e in report.entries if e.decision == "tape"]


def check_gradient(py, args, argnums) -> None:
    got = adpasses.grad(adpasses.jit(py), argnums)(*copy_args(args))
    got = got if isinstance(got, tuple) else (got,)
    expected = finite_differences(py, args, argnums)
    for g, e in zip(got, expected):
        assert_matches(g, e, what=py.__name__)


def local_table(x):
    tab = np.zeros(4)
    for j in range(4):
        tab[j] = 1.0 + j
    s = 0.0
    for i in range(len(x)):
        s += tab[i % 4] * x[i] * x[i]
    return s


def local_active_table(x):
    # The table depends on x (its shadow is active), is read after it is
    # filled, and never written again: reloaded.
    tab = np.zeros(3)
    for j in range(3):
        tab[j] = x[j] * x[j]
    s = 0.0
    for i in range(len(x)):
        s += tab[i % 3] * x[i]
    return s


def local_table_written_after(x):
    # tab[0] is written after the reading loop: tab[i % 4] may be that element.
    tab = np.zeros(4)
    for j in range(4):
        tab[j] = 1.0 + j
    s = 0.0
    for i in range(len(x)):
        s += tab[i % 4] * x[i] * x[i]
    tab[0] = 0.0
    return s + tab[1]


def per_iteration_buffer(x):
    s = 0.0
    for i in range(len(x)):
        tmp = np.zeros(2)
        tmp[0] = x[i] * x[i]
        s += tmp[0] * x[i]
    return s


@pytest.mark.parametrize("n", [5, 1000])
def test_local_table_freed_at_the_end_tapes_nothing(rng, n):
    """The reading loop's iterations are independent: reversed loop-locally,
    the table's value is still in a register. (Reversed after the forward
    loop it is reloaded, the deferred dealloc notwithstanding:
    test/lit/cache/local_array_dealloc.mlir, --no-loop-local.)"""
    x = rng.standard_normal(n)
    report = adpasses.cache_report(adpasses.jit(local_table), x)
    assert report.taped_bytes == 0 and not taped(report)
    [entry] = [e for e in report.entries if e.value == "tab[i % 4]"]
    assert entry.decision == "reuse" and "loop-locally" in entry.reason
    if n <= 5:
        check_gradient(local_table, [x], (0,))


def test_local_table_with_an_active_shadow_is_reloaded(rng):
    x = rng.standard_normal(8)
    report = adpasses.cache_report(adpasses.jit(local_active_table), x)
    assert report.taped_bytes == 0 and not taped(report)
    check_gradient(local_active_table, [x], (0,))


def test_local_table_written_after_the_loop_is_still_taped(rng):
    n = 9
    x = rng.standard_normal(n)
    report = adpasses.cache_report(adpasses.jit(local_table_written_after), x)
    [entry] = taped(report)
    assert entry.value == "tab[i % 4]" and "store" in entry.reason
    assert report.taped_bytes == 8 * n
    check_gradient(local_table_written_after, [x], (0,))


def test_buffer_freed_in_each_iteration_tapes_nothing_when_reversed_loop_locally(rng):
    """Reversed after the forward loop, what is read from a buffer freed in
    each iteration is taped (test/lit/cache/local_array_dealloc.mlir,
    --no-loop-local); reversed in the iteration, it is still in a register."""
    n = 7
    x = rng.standard_normal(n)
    report = adpasses.cache_report(adpasses.jit(per_iteration_buffer), x)
    assert not taped(report) and report.taped_bytes == 0
    assert [local for _, local, _ in report.loops] == [True]
    check_gradient(per_iteration_buffer, [x], (0,))
