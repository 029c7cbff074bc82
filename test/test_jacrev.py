"""adpasses.jacrev: Jacobians by reverse sweeps, one compiled call per
Jacobian, against central finite differences on random inputs; shapes and
dtypes; arguments unchanged; errors; pickling by reference."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from finite_diff import assert_matches

import adpasses
from adpasses import Output


def ring(x, out):
    for i in range(len(out)):
        out[i] = math.sin(x[i]) * x[(i + 1) % len(x)]


def mixed(x, s, out):
    """out's final contents depend on its initial ones, on a float and on x."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = out[i, j] * s + math.exp(0.3 * x[i]) * x[j]


def with_scratch(x, tmp, out):
    """f writes a scratch array besides its output (restored each sweep)."""
    for i in range(len(tmp)):
        tmp[i] += x[i] * x[i]
    for i in range(len(out)):
        out[i] = tmp[i % len(tmp)] * x[len(x) - 1 - i % len(x)]


def energy(x):
    s = 0.0
    for i in range(len(x)):
        s += math.exp(-x[i]) * x[i]
    return s


def writes_nothing(x, out):
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


def jacobian_by_differences(f, args, out: int, k: int) -> np.ndarray:
    """d out_final / d args[k] by central differences (float64 copies)."""
    def final(a):  # type: ignore[no-untyped-def]
        copies = [v.copy() if isinstance(v, np.ndarray) else v for v in a]
        f(*copies)
        return copies[out].copy()

    base = list(args)
    x = base[k]
    cols = []
    if isinstance(x, np.ndarray):
        J = np.zeros(base[out].shape + x.shape)
        for idx in np.ndindex(x.shape):
            h = 1e-6 * max(1.0, abs(float(x[idx])))
            up, down = list(base), list(base)
            up[k], down[k] = x.copy(), x.copy()
            up[k][idx] += h
            down[k][idx] -= h
            J[(Ellipsis,) + idx] = (final(up) - final(down)) / (2 * h)
        return J
    h = 1e-6 * max(1.0, abs(x))
    up, down = list(base), list(base)
    up[k], down[k] = x + h, x - h
    del cols
    return (final(up) - final(down)) / (2 * h)


@pytest.mark.parametrize("seed", range(3))
def test_ring_matches_finite_differences(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, out = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 7)
    x0, out0 = x.copy(), out.copy()
    J = adpasses.jacrev(ring)(x, Output(out))
    assert J.shape == (7, 7) and J.dtype == np.float64
    assert_matches(J, jacobian_by_differences(ring, [x, out], 1, 0), what="jacrev(ring)")
    assert np.array_equal(x, x0) and np.array_equal(out, out0)  # arguments unchanged
    # the second call takes the generated fast path and gives the same
    assert np.array_equal(adpasses.jacrev(ring)(x, Output(out)), J)


@pytest.mark.parametrize("seed", range(3))
def test_several_arguments_a_float_and_the_output_itself(seed: int) -> None:
    rng = np.random.default_rng(10 + seed)
    x, s, out = rng.uniform(-1, 1, 4), float(rng.uniform(0.5, 2)), rng.uniform(-1, 1, (4, 4))
    Jx, Js, Jo = adpasses.jacrev(mixed, (0, 1, 2))(x, s, Output(out))
    assert (Jx.shape, Js.shape, Jo.shape) == ((4, 4, 4), (4, 4), (4, 4, 4, 4))
    args = [x, s, out]
    for got, k in ((Jx, 0), (Js, 1), (Jo, 2)):
        assert_matches(got, jacobian_by_differences(mixed, args, 2, k), what=f"jacrev(mixed) argument {k}")
    # argnums=-3 names x; the tuple's order is kept
    Js2, Jx2 = adpasses.jacrev(mixed, (1, -3))(x, s, Output(out))
    assert np.array_equal(Js2, Js) and np.array_equal(Jx2, Jx)


def test_scratch_arrays_restored_before_each_sweep() -> None:
    rng = np.random.default_rng(5)
    x, tmp, out = rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 3), np.zeros(6)
    tmp0 = tmp.copy()
    J = adpasses.jacrev(with_scratch)(x, tmp, Output(out))
    assert np.array_equal(tmp, tmp0)
    assert_matches(J, jacobian_by_differences(with_scratch, [x, tmp, out], 2, 0), what="with_scratch")


def test_float32_stays_float32() -> None:
    rng = np.random.default_rng(6)
    x, out = rng.uniform(-1, 1, 5).astype(np.float32), np.zeros(5, np.float32)
    J = adpasses.jacrev(ring)(x, Output(out))
    assert J.dtype == np.float32 and J.shape == (5, 5)
    want = jacobian_by_differences(ring, [x.astype(np.float64), out.astype(np.float64)], 1, 0)
    assert_matches(J, want, float32=True, what="float32 jacrev")


def test_output_by_keyword_and_non_contiguous_input() -> None:
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, 12)[::2]
    J = adpasses.jacrev(ring)(x, out=Output(np.zeros(6)))
    assert_matches(J, jacobian_by_differences(ring, [x.copy(), np.zeros(6)], 1, 0), what="strided x")


def test_a_float_function_is_its_gradient() -> None:
    x = np.random.default_rng(8).uniform(-1, 1, 6)
    assert np.array_equal(adpasses.jacrev(energy)(x), adpasses.grad(energy)(x))


def test_one_compilation_per_signature() -> None:
    jf = adpasses.jit(ring)
    x = np.ones(3)
    before = len(jf.compilations)
    for n in (3, 4, 5):
        adpasses.jacrev(jf)(np.ones(n), Output(np.zeros(n)))
    assert len(jf.compilations) - before <= 1
    assert adpasses.jacrev(jf) is adpasses.jacrev(jf, 0)
    del x


def test_errors() -> None:
    x, out = np.ones(3), np.zeros(3)
    with pytest.raises(TypeError, match=r"does not return a float; mark the array"):
        adpasses.jacrev(ring)(x, out)
    with pytest.raises(TypeError, match="Output marks 2 arguments"):
        adpasses.jacrev(ring)(Output(x), Output(out))
    with pytest.raises(TypeError, match="must be a float array"):
        adpasses.jacrev(ring)(x, Output(np.zeros(3, np.int64)))
    with pytest.raises(ValueError, match="never writes argument 1"):
        adpasses.jacrev(writes_nothing)(x, Output(out))
    with pytest.raises(ValueError, match="share memory"):
        adpasses.jacrev(ring)(x, Output(x))
    with pytest.raises(TypeError, match="cannot be differentiated"):
        adpasses.jacrev(mixed, 1)(x, 2, Output(np.zeros((3, 3))))
    with pytest.raises(ValueError, match="there is no argument 5"):
        adpasses.jacrev(ring, 5)
    with pytest.raises(TypeError, match="argnums must be an int"):
        adpasses.jacrev(ring, 1.5)


def test_pickles_by_reference() -> None:
    import pickle_kernels as pk

    for obj in (adpasses.jacrev(pk.loss), adpasses.jacrev(pk.scaled, (0, 1))):
        assert pickle.loads(pickle.dumps(obj)) is obj
