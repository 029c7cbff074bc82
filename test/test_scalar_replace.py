"""Small local arrays become SSA values before the reverse sweep is planned
(`ad-scalar-replace`, adpasses/transforms/scalar_replace.py; docs/reverse_mode.md,
"Small arrays as values").

Kernels written the way small-vector code is written (a pair potential with
`d = np.zeros(3)` per pair, 3-vector cross products, a 3x3 matrix times a
vector in a loop, a force accumulated over a loop, an element overwritten
under an `if`): their gradients equal central finite differences on random
inputs and the gradients built with the array kept in memory; the primal
value the gradient returns is bit for bit the primal's (and, for the pair
potential, the scalar rewrite's); the cache report tapes nothing of the
small arrays (it does with the pass off, so these tests can fail), and the
gradient's IR has no array left. Bounds checks of indices out of range
stay. The IR the pass prints: test/lit/pipeline/scalar_replace.mlir.
"""

from __future__ import annotations

import dataclasses
import math
import types

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

import adpasses
from benchmarks.kernels.smallvec import pair_energy, pair_energy_scalar  # the smallvec benchmark's kernels
from adpasses.cache.report import TAPED


def cross_energy(a, b):
    # |(a_i x b_i) x a_i| per row: two cross products through scratch 3-vectors
    n = a.shape[0]
    e = 0.0
    for i in range(n):
        c = np.zeros(3)
        c[0] = a[i, 1] * b[i, 2] - a[i, 2] * b[i, 1]
        c[1] = a[i, 2] * b[i, 0] - a[i, 0] * b[i, 2]
        c[2] = a[i, 0] * b[i, 1] - a[i, 1] * b[i, 0]
        t = np.zeros(3)
        t[0] = c[1] * a[i, 2] - c[2] * a[i, 1]
        t[1] = c[2] * a[i, 0] - c[0] * a[i, 2]
        t[2] = c[0] * a[i, 1] - c[1] * a[i, 0]
        e += math.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2] + 1.0)
    return e


def matvec_energy(x, m):
    # a 3x3 matrix built once, applied to every row in a loop
    n = x.shape[0]
    a = np.zeros((3, 3))
    for p in range(3):
        for q in range(3):
            a[p, q] = m[3 * p + q]
    e = 0.0
    for i in range(n):
        w = np.zeros(3)
        for p in range(3):
            s = 0.0
            for q in range(3):
                s += a[p, q] * x[i, q]
            w[p] = s
        e += math.sin(w[0]) * w[1] + w[2] * w[2]
    return e


def accumulated_force(x):
    # f accumulated over a loop with dynamic bounds: its elements are carried
    n = x.shape[0]
    f = np.zeros(3)
    for i in range(n - 1):
        for k in range(3):
            f[k] += (x[i + 1, k] - x[i, k]) * x[i, k]
    return f[0] * f[1] + math.exp(0.1 * f[2])


def overwritten_under_if(x):
    n = x.shape[0]
    e = 0.0
    for i in range(n):
        d = np.zeros(2)
        d[0] = x[i]
        d[1] = x[i] * x[i]
        if x[i] > 0.0:
            d[0] = math.sin(x[i])
        e += d[0] * d[1]
    return e


def _positions(rng, n):
    grid = np.array([(i, j, k) for i in range(3) for j in range(3) for k in range(3)], dtype=float)
    return grid[:n] + 0.2 * rng.random((n, 3))


def _cases(rng):
    return {
        "pair": (pair_energy, [_positions(rng, 7)], 0),
        "cross": (cross_energy, [rng.standard_normal((5, 3)), rng.standard_normal((5, 3))], (0, 1)),
        "matvec": (matvec_energy, [rng.standard_normal((4, 3)), rng.standard_normal(9)], (0, 1)),
        "accumulate": (accumulated_force, [rng.standard_normal((6, 3))], 0),
        "if": (overwritten_under_if, [rng.standard_normal(8)], 0),
    }


KERNELS = ["pair", "cross", "matvec", "accumulate", "if"]


def _without_scalar_replace(f):  # type: ignore[no-untyped-def]
    """A jit function of a copy of `f` (jit(f) is one object per function)
    whose gradients keep small arrays in memory."""
    copy = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    jf = adpasses.jit(copy)
    assert jf is not adpasses.jit(f)
    options = jf.reverse_options()
    jf.reverse_options = lambda: dataclasses.replace(options, scalar_replace=False)
    return jf


def _as_tuple(g):  # type: ignore[no-untyped-def]
    return g if isinstance(g, tuple) else (g,)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("name", KERNELS)
def test_gradient_matches_finite_differences_and_the_array_in_memory(name, seed):
    f, args, argnums = _cases(np.random.default_rng(seed))[name]
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    got = _as_tuple(adpasses.grad(adpasses.jit(f), argnums)(*args))
    kept = _as_tuple(adpasses.grad(_without_scalar_replace(f), argnums)(*args))
    for g, k, fd, n in zip(got, kept, finite_differences(f, args, nums), nums):
        assert_matches(g, fd, what=f"{name}, d/d arg {n}")
        np.testing.assert_allclose(g, k, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("name", KERNELS)
def test_the_primal_is_bit_identical(name):
    f, args, argnums = _cases(np.random.default_rng(3))[name]
    jf = adpasses.jit(f)
    value, _ = adpasses.value_and_grad(jf, argnums)(*args)
    kept, _ = adpasses.value_and_grad(_without_scalar_replace(f), argnums)(*args)
    assert value == jf(*args) == kept


def test_the_pair_primal_equals_the_scalar_rewrite_bit_for_bit():
    x = _positions(np.random.default_rng(4), 9)
    value, g = adpasses.value_and_grad(adpasses.jit(pair_energy))(x)
    scalar_value, scalar_g = adpasses.value_and_grad(adpasses.jit(pair_energy_scalar))(x)
    assert value == scalar_value
    np.testing.assert_array_equal(g, scalar_g)


def _small_array_loads(report):  # type: ignore[no-untyped-def]
    return [e for e in report.entries if e.decision in TAPED and e.op.startswith("memref.load")]


@pytest.mark.parametrize("name", KERNELS)
def test_nothing_is_taped_and_no_array_is_left(name):
    f, args, argnums = _cases(np.random.default_rng(5))[name]
    report = adpasses.cache_report(adpasses.jit(f), *args, argnums=argnums)
    assert report.taped_bytes == 0 and _small_array_loads(report) == [], str(report)
    ins = adpasses.inspect(adpasses.jit(f), *args, argnums=argnums)
    # the frontend's arrays (np.zeros: memref.alloc(sizes)) and their
    # shadows are gone; the reverse sweep's own scalar slots are allocas
    assert "memref.alloc(" in ins.primal_mlir
    assert "memref.alloc(" not in ins.gradient_mlir, ins.gradient_mlir
    if name in ("pair", "matvec"):
        # With the arrays in memory their loads are taped: the pair's three
        # d[k] per pair, the matvec's w[0..2] per row.
        kept = adpasses.cache_report(_without_scalar_replace(f), *args, argnums=argnums)
        assert kept.taped_bytes > 0 and len(_small_array_loads(kept)) == 3, str(kept)


def test_a_dynamic_index_keeps_the_array_and_its_derivative():
    def picked(x, k):
        d = np.zeros(3)
        for j in range(3):
            d[j] = x[j] * x[j]
        return d[k] * x[0]

    x = np.random.default_rng(7).standard_normal(3)
    for k in range(3):
        g = adpasses.grad(adpasses.jit(picked))(x, k)
        (fd,) = finite_differences(picked, [x, k], (0,))
        assert_matches(g, fd, what=f"d[{k}]")
    assert "memref.alloc(" in adpasses.inspect(adpasses.jit(picked), x, 1).gradient_mlir


def test_an_index_out_of_range_still_raises():
    # the second loop is unrolled; d[3] keeps d in memory, and its check raises
    def beyond(x):
        d = np.zeros(3)
        for k in range(3):
            d[k] = x[k]
        s = 0.0
        for k in range(4):
            s += d[k]
        return s

    x = np.ones(3)
    with pytest.raises(IndexError):
        adpasses.jit(beyond)(x)
    with pytest.raises(IndexError):
        adpasses.grad(adpasses.jit(beyond))(x)
