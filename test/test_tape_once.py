"""Tape once (issue 18, item 4; docs/cache.md, "Tape once"): a value stored
to memory and loaded back later is taped at most once.

- `shared`: the store's value is read back by a later load that is taped
  (the memory changes afterwards): the reverse of the load writes what it
  pops into a mirror of the memory, which the reverse of the store's block
  reads (`analysis/store_forwarding.py`).
- `reload` of a stored value: nothing overwrites the element the store
  wrote, so the reverse sweep loads it back from there
  (`AliasAnalysis.overwritten_after`).

Each case checks the cache report (decisions, taped bytes) and the gradient
against central finite differences on random inputs; the cases where the
value is not proven to come back (a write in between, a conditional store,
another element) keep both tapes and are checked the same way. The MLIR
versions are FileChecked in test/lit/cache/tape_once.mlir."""

from __future__ import annotations

import dataclasses
import math
import types

import numpy as np
import pytest
from finite_diff import assert_matches, copy_args, finite_differences

import adpasses
import frontend_kernels


# The MLP kernel's shape: h[j] = tanh(t), read back in the next loop,
# overwritten in the next row (the shared test kernel, not a copy of it).
hidden_layer = frontend_kernels.mlp_loss


def layer(W, b, X, t, y):
    for r in range(W.shape[0]):
        for c in range(X.shape[2]):
            y[r, c] = b[r]
        for j in range(W.shape[1]):
            w = W[r, j]
            for c in range(X.shape[2]):
                y[r, c] += w * X[t, j, c]
        for c in range(X.shape[2]):
            y[r, c] = math.tanh(y[r, c])


def dense_steps(W, b, X):
    """The dense-layer kernel's shape (benchmarks/kernels/dense.py): rows of
    y written with earlier stores to the same rows before the tanh store."""
    y0 = np.zeros((W.shape[0], X.shape[2]))
    y = np.zeros((W.shape[0], X.shape[2]))
    layer(W, b, X, 0, y0)
    s = 0.0
    for t in range(X.shape[0]):
        layer(W, b, X, t, y)
        for r in range(W.shape[0]):
            for c in range(X.shape[2]):
                s += y[r, c] * y0[r, c]
    return s


def same_block(x, c):
    """Store and load in one loop body (no nest): h[0] read right back."""
    h = np.zeros(1)
    s = 0.0
    for i in range(x.shape[0]):
        h[0] = math.exp(x[i])
        s += h[0] * c[i] * x[i]
    return s


def stored_once(x, c):
    """Never overwritten: the stored value is reloaded, nothing taped."""
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y[i] = math.tanh(x[i])
    s = 0.0
    for i in range(x.shape[0]):
        s += y[i] * y[i] * c[i]
    return s


def into_argument(x, out):
    """The stored array is an argument (grad gives it a throwaway shadow)."""
    s = 0.0
    for k in range(3):
        for i in range(x.shape[0]):
            out[i] = math.tanh(x[i] * (k + 1))
        for i in range(x.shape[0]):
            s += out[i] * x[i]
    return s


def written_between(X, W1, W2):
    h = np.zeros(W1.shape[1])
    loss = 0.0
    for b in range(X.shape[0]):
        for j in range(W1.shape[1]):
            h[j] = math.tanh(X[b, j] * W1[0, j])
        h[0] = 0.5
        o = 0.0
        for j in range(W1.shape[1]):
            o += h[j] * W2[j]
        loss += o * o
    return loss


def stored_if(X, W1, W2):
    h = np.zeros(W1.shape[1])
    loss = 0.0
    for b in range(X.shape[0]):
        for j in range(W1.shape[1]):
            v = math.tanh(X[b, j] * W1[0, j])
            if v > -0.5:
                h[j] = v
        o = 0.0
        for j in range(W1.shape[1]):
            o += h[j] * W2[j]
        loss += o * o
    return loss


def other_element(X, W1, W2):
    h = np.zeros(W1.shape[1])
    loss = 0.0
    for b in range(X.shape[0]):
        for j in range(W1.shape[1]):
            h[j] = math.tanh(X[b, j] * W1[0, j])
        o = 0.0
        for j in range(W1.shape[1] - 1):
            o += h[j + 1] * W2[j]
        loss += o * o
    return loss


def by_decision(report, kind: str) -> list:
    return [e for e in report.entries if e.decision == kind]


def check(f, args, argnums, rtol_note="", scalar_replace=True) -> object:
    jf = adpasses.jit(f)
    if not scalar_replace:  # a jit of a copy of f whose small arrays stay in memory
        jf = adpasses.jit(types.FunctionType(f.__code__, f.__globals__, f.__name__))
        options = jf.reverse_options()
        jf.reverse_options = lambda: dataclasses.replace(options, scalar_replace=False)
    got = adpasses.grad(jf, argnums)(*copy_args(args))
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, finite_differences(f, args, argnums)):
        assert_matches(g, e, what=f.__name__)
    return adpasses.cache_report(jf, *args, argnums=argnums)


@pytest.fixture
def rng():
    return np.random.default_rng(2026_11_26_4)


def test_hidden_layer_tapes_the_hidden_values_once(rng) -> None:
    B, n, H = 4, 5, 6
    args = [rng.standard_normal((B, n)), rng.standard_normal((n, H)) / 2, rng.standard_normal(H)]
    report = check(hidden_layer, args, (1, 2))
    (shared,) = by_decision(report, "shared")
    assert shared.op == "math.tanh" and "read back by the load at" in shared.reason
    (load,) = [e for e in by_decision(report, "tape") if e.op == "memref.load"]
    assert "(tape once)" in load.reason
    assert not [e for e in by_decision(report, "tape") if e.op == "math.tanh"]
    # the hidden values once (was twice), and o per row for o * o
    assert report.taped_bytes == 8 * B * H + 8 * B


def test_dense_layer_tapes_each_output_once(rng) -> None:
    T, m, k, B = 3, 3, 4, 5
    args = [rng.standard_normal((m, k)) / 2, rng.standard_normal(m) / 2, rng.standard_normal((T, k, B))]
    report = check(dense_steps, args, (0, 1))
    assert [e.op for e in by_decision(report, "shared")] == ["math.tanh"]
    # y0's tanh is stored once and never overwritten: reloaded from y0
    assert any(e.op == "math.tanh" and "loaded back from there" in e.reason
               for e in by_decision(report, "reload"))
    assert report.taped_bytes == 8 * T * m * B  # y[r, c] per step, once (was 2x + m*B)


def test_store_and_load_in_one_block(rng) -> None:
    x, c = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 7)
    # By default ad-scalar-replace turns h (one element) into a value before
    # the plan: no store or load is left, so the iterations are independent
    # and each is reversed right after its forward, taping nothing.
    report = check(same_block, [x, c], (0, 1))
    assert not by_decision(report, "shared")
    assert report.taped_bytes == 0
    # With h kept in memory, the store's tape entry serves the load.
    report = check(same_block, [x, c], (0, 1), scalar_replace=False)
    assert [e.op for e in by_decision(report, "shared")] == ["math.exp"]
    assert report.taped_bytes == 8 * 7


def test_stored_value_never_overwritten_is_reloaded(rng) -> None:
    x, c = rng.uniform(-1, 1, 9), rng.uniform(-1, 1, 9)
    report = check(stored_once, [x, c], (0, 1))
    (th,) = [e for e in report.entries if e.op == "math.tanh"]
    assert th.decision == "reload" and "where no later write may overwrite it" in th.reason
    assert report.taped_bytes == 0


def test_array_argument_as_the_stored_memory(rng) -> None:
    x, out = rng.uniform(-1, 1, 6), np.zeros(6)
    report = check(into_argument, [x, out], (0,))
    assert [e.op for e in by_decision(report, "shared")] == ["math.tanh"]
    assert report.taped_bytes == 8 * 3 * 6


@pytest.mark.parametrize("f", [written_between, stored_if, other_element])
def test_not_proven_read_back_keeps_both_tapes(f, rng) -> None:
    B, H = 3, 5
    args = [rng.standard_normal((B, H)), rng.standard_normal((2, H)), rng.standard_normal(H)]
    report = check(f, args, (1, 2))
    assert not by_decision(report, "shared")
    assert any(e.op == "math.tanh" for e in by_decision(report, "tape"))
    assert any(e.op == "memref.load" for e in by_decision(report, "tape"))


def test_mirror_makes_no_allocation_after_the_first_call(rng) -> None:
    from adpasses.native import runtime

    B, n, H = 4, 5, 6
    args = [rng.standard_normal((B, n)), rng.standard_normal((n, H)), rng.standard_normal(H)]
    g = adpasses.grad(adpasses.jit(hidden_layer), (1, 2))
    g(*args)
    runtime.reset_stats()
    g(*args)
    # the tape and the mirror of h are workspaces kept across calls; so are
    # h = np.zeros(...) and its shadow (ad-promote-scratch)
    assert runtime.stats()["allocations"] == 0


# -- neighbours of the shape: more loops, other index orders and bounds ------


def transposed(A, v):
    """2-D nest whose store and load index (c, r): positions differ from
    the nest order."""
    y = np.zeros((A.shape[1], A.shape[0]))
    s = 0.0
    for k in range(2):
        for r in range(A.shape[0]):
            for c in range(A.shape[1]):
                y[c, r] = math.tanh(A[r, c] * (k + 1))
        for r in range(A.shape[0]):
            for c in range(A.shape[1]):
                s += y[c, r] * v[c]
    return s


def strided(x, v):
    """Loops from 1 in steps of 2, the same in both nests."""
    h = np.zeros(x.shape[0])
    s = 0.0
    for k in range(3):
        for j in range(1, x.shape[0], 2):
            h[j] = math.exp(x[j] * (k + 1) * 0.3)
        for j in range(1, x.shape[0], 2):
            s += h[j] * v[j]
    return s


def triangular(A, v):
    """Inner bounds that read the outer induction variable."""
    y = np.zeros(A.shape)
    s = 0.0
    for k in range(2):
        for r in range(A.shape[0]):
            for c in range(r + 1):
                y[r, c] = math.tanh(A[r, c] + k)
        for r in range(A.shape[0]):
            for c in range(r + 1):
                s += y[r, c] * v[c]
    return s


def next_row_written_later(A, v):
    """The store's nest writes the next row after the store: the stored
    element of row r + 1 is overwritten before the load reads it."""
    y = np.zeros((A.shape[0] + 1, A.shape[1]))
    s = 0.0
    for k in range(2):
        for r in range(A.shape[0]):
            for c in range(A.shape[1]):
                y[r, c] = math.tanh(A[r, c] + k)
            for c in range(A.shape[1]):
                y[r + 1, c] = 0.5 * A[r, c]
        for r in range(A.shape[0]):
            for c in range(A.shape[1]):
                s += y[r, c] * v[c]
    return s


@pytest.mark.parametrize("f, op", [(transposed, "math.tanh"), (strided, "math.exp"),
                                   (triangular, "math.tanh")])
def test_shared_in_neighbouring_shapes(f, op, rng) -> None:
    args = [rng.uniform(-1, 1, (4, 4)) if f is not strided else rng.uniform(-1, 1, 7),
            rng.uniform(-1, 1, 4 if f is not strided else 7)]
    report = check(f, args, (0, 1))
    assert [e.op for e in by_decision(report, "shared")] == [op]
    assert not [e for e in by_decision(report, "tape") if e.op == op]


def test_write_of_a_later_row_in_the_store_nest_is_not_shared(rng) -> None:
    args = [rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, 4)]
    report = check(next_row_written_later, args, (0, 1))
    assert not by_decision(report, "shared")


@pytest.mark.parametrize("f", [same_block, stored_once])
def test_hessian_through_the_mirror_and_the_stored_reload(f, rng) -> None:
    """Forward over reverse differentiates the gradient, mirror included:
    the Hessian equals central differences of the gradient."""
    x, c = rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 5)
    jf = adpasses.jit(f)
    g = adpasses.grad(jf)
    h = adpasses.hessian(jf)(x, c)
    eps = 1e-6
    expected = np.array([(g(x + eps * e, c) - g(x - eps * e, c)) / (2 * eps) for e in np.eye(5)])
    np.testing.assert_allclose(h, expected, rtol=1e-6, atol=1e-8)
