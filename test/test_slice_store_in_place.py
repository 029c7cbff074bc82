"""`target[...] = array expression` writes the target directly (one
linalg.generic, no temporary) when every array the expression reads is
provably other memory, or is the target array itself read at the element
written (`x[:] = np.where(x > 0, 0.0, x)`); otherwise (a shifted or
reversed read of the target, a row of it broadcast over it, an expression
that may stop halfway) the expression is computed into a temporary first,
as numpy's copy-first semantics need. Two arguments that may share memory
are tested per call (`ad.overlaps`): the copy is made, in an `scf.if`,
only when they overlap, and the version for distinct arrays has neither
(test_inplace_overlap_check.py).

Each case: the result equals numpy's on random inputs (including the
overlapping ones that must not be written in place), the IR allocates a
temporary exactly when it must, and gradients through the stores match
central finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from finite_diff import assert_matches, copy_args, finite_differences

import adpasses
from adpasses.frontend import ArrayArg, build_module


# -- stores (no result): the target is an argument or a local array ---------


def local_from_args(x, y, out):
    h = np.zeros(x.shape[0])
    h[:] = np.tanh(x * y) + 1.0
    out[:] = h  # an argument from a local array: a copy loop, as before


def self_where(x):
    x[:] = np.where(x > 0.0, 0.0, x * 2.0)


def self_2d(X):
    X[:, :] = np.exp(-X * X)


def row_into_local(X, out):
    M = np.zeros((X.shape[0], X.shape[1]))
    for i in range(X.shape[0]):
        M[i, :] = np.sin(X[i]) * 2.0
    out[:, :] = M


def broadcast_into_local(x, y, out):
    M = np.zeros((x.shape[0], y.shape[0]))
    M[:, :] = x[:, None] * y[None, :]
    out[:, :] = M


def shift_right(x):
    x[1:] = x[:-1] * 2.0


def reversed_self(x):
    x[:] = x[::-1] + 1.0


def row_over_self(X):
    X[:, :] = X[0, :] + X


def arg_from_arg(x, y):
    x[:] = y * 3.0  # y may be x's memory: copied first when it is


STORES = [  # the allocations the IR makes: local arrays, plus a temporary only where needed
    (local_from_args, lambda r: [r.standard_normal(7), r.standard_normal(7), np.zeros(7)], 1),
    (self_where, lambda r: [r.standard_normal(9)], 0),
    (self_2d, lambda r: [r.standard_normal((4, 5))], 0),
    (row_into_local, lambda r: [r.standard_normal((3, 6)), np.zeros((3, 6))], 1),
    (broadcast_into_local, lambda r: [r.standard_normal(4), r.standard_normal(5), np.zeros((4, 5))], 1),
    (shift_right, lambda r: [r.standard_normal(8)], 1),
    (reversed_self, lambda r: [r.standard_normal(8)], 1),
    (row_over_self, lambda r: [r.standard_normal((4, 3))], 1),
    (arg_from_arg, lambda r: [r.standard_normal(6), r.standard_normal(6)], 1),  # in the overlapping branch
]


def _allocations(f, args) -> int:
    types = [ArrayArg(str(a.dtype), a.ndim, True) for a in args]
    module, _ = build_module(f, types)
    return str(module).count("memref.alloc(")


@pytest.mark.parametrize("f, make, allocations", STORES, ids=[f.__name__ for f, _, _ in STORES])
def test_store_matches_numpy_and_copies_only_when_it_must(f, make, allocations) -> None:
    rng = np.random.default_rng(42)
    args = make(rng)
    expected = copy_args(args)
    f(*expected)
    got = copy_args(args)
    adpasses.jit(f)(*got)
    for g, e in zip(got, expected):  # tanh, exp, sin: a few ulp from numpy's
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=1e-15)
    assert _allocations(f, args) == allocations


def test_same_array_passed_twice_reads_before_writing() -> None:
    y = np.arange(6.0)
    got = y.copy()
    adpasses.jit(arg_from_arg)(got, got)
    np.testing.assert_array_equal(got, y * 3.0)
    got = y.copy()
    adpasses.jit(arg_from_arg)(got[1:], got[:-1])  # overlapping views: numpy reads y[:-1] first
    want = y.copy()
    arg_from_arg(want[1:], want[:-1])
    np.testing.assert_array_equal(got, want)
    text = str(adpasses.jit(arg_from_arg).build([y, y.copy()], noalias=True)[0])
    assert "memref.alloc(" not in text and "ad.overlaps" not in text  # distinct arrays: in place


def test_shapes_that_do_not_broadcast_stop_before_writing() -> None:
    def bad(x, y):
        h = np.zeros(4)
        h[:] = np.exp(x) * 2.0
        y[0] = h[0]

    with pytest.raises(ValueError, match=r"could not broadcast input array from shape \(3,\) into shape \(4,\)"):
        adpasses.jit(bad)(np.ones(3), np.zeros(1))


def test_float32_target_rounds_once() -> None:
    def into32(x, out):
        h = np.zeros(x.shape[0], dtype=np.float32)
        h[:] = np.exp(x) / 3.0
        out[:] = h

    x = np.random.default_rng(5).standard_normal(11)
    out = np.zeros(11, dtype=np.float32)
    adpasses.jit(into32)(x, out)
    np.testing.assert_array_equal(out, (np.exp(x) / 3.0).astype(np.float32))


# -- gradients through the stores --------------------------------------------


def loss_local(x, y):
    h = np.zeros(x.shape[0])
    h[:] = np.tanh(x * y)
    return np.sum(h * h * x)


def loss_self(x):
    z = x.copy()
    z[:] = np.where(z > 0.0, z * z, -3.0 * z)
    z[:] = np.sin(z) * z
    return np.sum(z * x)


def loss_reused_buffer(W, b, X):
    """The dense layer with a reused output buffer `y[:, :] = ...`."""
    y = np.zeros((W.shape[0], X.shape[2]))
    s = 0.0
    for t in range(X.shape[0]):
        y[:, :] = np.tanh(W @ X[t] + b[:, None])
        s += np.sum(y * y)
    return s


def loss_writes_argument(x, y):
    x[:] = np.tanh(y) * x
    return np.sum(x * y)


def loss_updates_argument(x):
    x[:] = np.where(x > 0.0, x * x, -2.0 * x)
    return np.sum(x * x)


def loss_shift(x):
    z = x.copy()
    z[1:] = z[:-1] * z[1:]
    return np.sum(z * z)


@pytest.mark.parametrize("f, make, argnums", [
    (loss_local, lambda r: [r.standard_normal(7), r.standard_normal(7)], (0, 1)),
    (loss_self, lambda r: [r.standard_normal(9)], (0,)),
    (loss_reused_buffer, lambda r: [r.standard_normal((3, 4)) * 0.5, r.standard_normal(3) * 0.5,
                                    r.standard_normal((4, 4, 5))], (0, 1)),
    (loss_shift, lambda r: [r.standard_normal(8)], (0,)),
    (loss_writes_argument, lambda r: [r.standard_normal(6), r.standard_normal(6)], (0, 1)),
    (loss_updates_argument, lambda r: [r.standard_normal(9)], (0,)),
], ids=["local", "self", "reused_buffer", "shift", "writes_argument", "updates_argument"])
def test_gradients_through_stores(f, make, argnums) -> None:
    args = make(np.random.default_rng(11))
    got = adpasses.grad(adpasses.jit(f), argnums)(*copy_args(args))
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, finite_differences(f, args, argnums)):
        assert_matches(g, e, what=f.__name__)
