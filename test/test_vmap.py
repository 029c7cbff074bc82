"""adpasses.vmap: results against a Python loop of the unbatched function
(run by plain Python, the oracle), derivatives against central finite
differences of plain Python on random inputs, shapes, dtypes, errors."""

from __future__ import annotations

import functools
import math
import types

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

import adpasses


def logistic(x, w, y):
    z = 0.0
    for i in range(len(x)):
        z += x[i] * w[i]
    return math.log(1.0 + math.exp(-y * z))


def strain_energy(f):
    J = (f[0] * (f[4] * f[8] - f[5] * f[7]) - f[1] * (f[3] * f[8] - f[5] * f[6])
         + f[2] * (f[3] * f[7] - f[4] * f[6]))
    i1 = 0.0
    for k in range(9):
        i1 += f[k] * f[k]
    lnj = math.log(J)
    return 0.5 * (i1 - 3.0) - lnj + 5.0 * lnj * lnj


def mixed(m, s, n):
    """A 2-D array, a float and an int per element: two float results."""
    t = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            t += math.sin(m[i, j] * s) * (i + n)
    return t, t * s


def with_scratch(x, tmp):
    """Writes tmp (scratch) and reads it back."""
    for i in range(len(x)):
        tmp[i] = x[i] * x[i]
    s = 0.0
    for i in range(len(x)):
        s += tmp[i] * x[i] + tmp[0]
    return s


def smooth_into(x, out):
    """Writes its result into out; returns nothing."""
    for i in range(len(x)):
        out[i] = math.tanh(x[i]) + x[0]


def shifted(x, k):
    return x[k] * 2.0


def rng_for(seed: int) -> np.random.Generator:
    return np.random.default_rng(1700 + seed)


# -- primal ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_primal_matches_a_python_loop(seed: int) -> None:
    rng = rng_for(seed)
    B, d = 7 + seed, 5
    X, w, Y = rng.normal(size=(B, d)), rng.normal(size=d), np.sign(rng.normal(size=B))
    got = adpasses.vmap(logistic, in_axes=(0, None, 0))(X, w, Y)
    expected = [logistic(X[k], w, Y[k]) for k in range(B)]
    assert got.shape == (B,) and got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    # the batch on another axis (negative too), and a tuple of float results
    M = rng.normal(size=(3, B, 4))
    S = rng.normal(size=B)
    N = rng.integers(0, 5, size=B)
    t, ts = adpasses.vmap(mixed, in_axes=(-2, 0, 0))(M, S, N)
    ref = [mixed(M[:, k, :], S[k], int(N[k])) for k in range(B)]
    np.testing.assert_allclose(t, [r[0] for r in ref], rtol=1e-12)
    np.testing.assert_allclose(ts, [r[1] for r in ref], rtol=1e-12)
    # an int argument shared by all elements
    np.testing.assert_allclose(adpasses.vmap(shifted, in_axes=(0, None))(X, 3), 2.0 * X[:, 3])


def test_a_function_writing_its_output_writes_each_row() -> None:
    rng = rng_for(10)
    X = rng.normal(size=(6, 5))
    out = np.zeros((6, 5))
    assert adpasses.vmap(smooth_into)(X, out) is None
    expected = np.zeros((6, 5))
    for k in range(6):
        smooth_into(X[k], expected[k])
    np.testing.assert_allclose(out, expected, rtol=1e-14)
    # batch on axis 1: vmap works on a contiguous copy, and the writes reach the caller's array
    XT, outT = X.T.copy(), np.zeros((5, 6))
    adpasses.vmap(smooth_into, in_axes=1)(XT, outT)
    np.testing.assert_allclose(outT, expected.T, rtol=1e-14)


def test_out_axes() -> None:
    rng = rng_for(11)
    X, w, Y = rng.normal(size=(4, 3)), rng.normal(size=3), np.sign(rng.normal(size=4))
    G = adpasses.vmap(adpasses.grad(logistic, 1), in_axes=(0, None, 0), out_axes=1)(X, w, Y)
    assert G.shape == (3, 4)
    ref = np.stack([adpasses.grad(logistic, 1)(X[k], w, Y[k]) for k in range(4)], axis=1)
    np.testing.assert_allclose(G, ref, rtol=1e-13)
    v, g = adpasses.vmap(adpasses.value_and_grad(logistic, 1), in_axes=(0, None, 0),
                         out_axes=(0, -1))(X, w, Y)
    assert v.shape == (4,) and g.shape == (3, 4)
    np.testing.assert_allclose(g, ref, rtol=1e-13)


def test_empty_batch() -> None:
    G = adpasses.vmap(adpasses.grad(logistic, 1), in_axes=(0, None, 0))(np.zeros((0, 3)), np.ones(3),
                                                                     np.zeros(0))
    assert G.shape == (0, 3) and G.dtype == np.float64
    H = adpasses.vmap(adpasses.hessian(strain_energy))(np.zeros((0, 9)))
    assert H.shape == (0, 9, 9)


# -- grad --------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_per_example_gradients_match_finite_differences(seed: int) -> None:
    rng = rng_for(20 + seed)
    B, d = 5, 4
    X, w, Y = rng.normal(size=(B, d)), rng.normal(size=d), np.sign(rng.normal(size=B))
    gx, gw = adpasses.vmap(adpasses.grad(logistic, (0, 1)), in_axes=(0, None, 0))(X, w, Y)
    assert gx.shape == (B, d) and gw.shape == (B, d)
    for k in range(B):
        fx, fw = finite_differences(logistic, [X[k].copy(), w, float(Y[k])], (0, 1))
        assert_matches(gx[k], fx, what=f"d/dx, element {k}")
        assert_matches(gw[k], fw, what=f"d/dw, element {k}")
    # a batched float argument differentiated: a float per element
    gy = adpasses.vmap(adpasses.grad(logistic, 2), in_axes=(0, None, 0))(X, w, Y * 0.7)
    assert gy.shape == (B,)
    for k in range(B):
        (fy,) = finite_differences(logistic, [X[k].copy(), w, float(Y[k] * 0.7)], (2,))
        assert_matches(gy[k], fy, what=f"d/dy, element {k}")
    # value_and_grad: the values are f's
    v, g = adpasses.vmap(adpasses.value_and_grad(logistic, 1), in_axes=(0, None, 0))(X, w, Y)
    np.testing.assert_allclose(v, [logistic(X[k], w, Y[k]) for k in range(B)], rtol=1e-13)
    np.testing.assert_allclose(g, gw, rtol=1e-13)


@pytest.mark.parametrize("batched_scratch", [True, False])
def test_gradient_of_a_function_writing_scratch(batched_scratch: bool) -> None:
    """f writes tmp: each element starts from the caller's tmp (a copy of
    the batch, or, shared, restored before each element), and the caller's
    tmp is left unchanged, like grad."""
    rng = rng_for(30)
    X = rng.normal(size=(4, 3))
    tmp = rng.normal(size=(4, 3)) if batched_scratch else rng.normal(size=3)
    before = tmp.copy()
    axes = (0, 0 if batched_scratch else None)
    G = adpasses.vmap(adpasses.grad(with_scratch), in_axes=axes)(X, tmp)
    np.testing.assert_array_equal(tmp, before)
    for k in range(4):
        t = tmp[k] if batched_scratch else tmp
        (fd,) = finite_differences(with_scratch, [X[k].copy(), t.copy()], (0,))
        assert_matches(G[k], fd, what=f"element {k}")


def test_float32_stays_float32() -> None:
    rng = rng_for(40)
    X = rng.normal(size=(6, 4)).astype(np.float32)
    w = rng.normal(size=4).astype(np.float32)
    Y = np.sign(rng.normal(size=6))
    G = adpasses.vmap(adpasses.grad(logistic, (0, 1)), in_axes=(0, None, 0))(X, w, Y)
    assert G[0].dtype == np.float32 and G[1].dtype == np.float32
    for k in range(6):
        fx, fw = finite_differences(logistic, [X[k].copy(), w.copy(), float(Y[k])], (0, 1))
        assert_matches(G[0][k], fx, float32=True)
        assert_matches(G[1][k], fw, float32=True)
    H = adpasses.vmap(adpasses.hessian(strain_energy))(
        (np.eye(3).ravel() + 0.1 * rng.normal(size=(3, 9))).astype(np.float32))
    assert H.dtype == np.float32 and H.shape == (3, 9, 9)


# -- hessian -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(2))
def test_batched_hessians_match_differences_of_the_gradient(seed: int) -> None:
    rng = rng_for(50 + seed)
    F = np.eye(3).ravel() + 0.2 * rng.uniform(-1.0, 1.0, (5, 9))
    H = adpasses.vmap(adpasses.hessian(strain_energy))(F)
    assert H.shape == (5, 9, 9)
    for k in range(5):
        cols = []
        for j in range(9):
            h = 1e-6
            up, down = F[k].copy(), F[k].copy()
            up[j] += h
            down[j] -= h
            (gu,) = finite_differences(strain_energy, [up], (0,))
            (gd,) = finite_differences(strain_energy, [down], (0,))
            cols.append((gu - gd) / (2 * h))
        # second differences of f: a looser tolerance than first ones
        np.testing.assert_allclose(H[k], np.stack(cols, axis=1), rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(H[k], adpasses.hessian(strain_energy)(F[k]), rtol=1e-13)


def test_hessian_of_several_arguments_per_element() -> None:
    rng = rng_for(60)
    X, w, Y = rng.normal(size=(3, 4)), rng.normal(size=4), np.sign(rng.normal(size=3))
    got = adpasses.vmap(adpasses.hessian(logistic, (0, 1)), in_axes=(0, None, 0))(X, w, Y)
    for a in range(2):
        for b in range(2):
            assert got[a][b].shape == (3, 4, 4)
    for k in range(3):
        ref = adpasses.hessian(logistic, (0, 1))(X[k], w, float(Y[k]))
        for a in range(2):
            for b in range(2):
                np.testing.assert_allclose(got[a][b][k], ref[a][b], rtol=1e-12, atol=1e-14)


# -- one compiled loop ---------------------------------------------------------------------


def test_one_compilation_per_signature_and_no_python_loop() -> None:
    jf = adpasses.jit(types.FunctionType(logistic.__code__, logistic.__globals__, "logistic_once"))
    vg = adpasses.vmap(adpasses.grad(jf, 1), in_axes=(0, None, 0))
    rng = rng_for(70)
    for B in (3, 50):
        vg(rng.normal(size=(B, 4)), rng.normal(size=4), np.ones(B))
    batched = [r for r in jf.compilations if r.kind == "vmap gradient"]
    assert len(batched) == 1  # the batch size is not part of the signature
    # the per-element gradient is never compiled on its own: one call of the batched driver
    assert not jf._gradients


# -- errors --------------------------------------------------------------------------------


def test_errors() -> None:
    X, w, Y = np.ones((4, 3)), np.ones(3), np.ones(4)
    vg = adpasses.vmap(adpasses.grad(logistic, 1), in_axes=(0, None, 0))
    with pytest.raises(ValueError, match="different sizes along their in_axes .*argument 0: 4, argument 2: 5"):
        vg(X, w, np.ones(5))
    with pytest.raises(ValueError, match="in_axes has 2 entries but the call has 3 arguments"):
        adpasses.vmap(logistic, in_axes=(0, None))(X, w, Y)
    with pytest.raises(ValueError, match="in_axes 2 for argument 0 is out of range: the array has 2 dim"):
        adpasses.vmap(logistic, in_axes=(2, None, 0))(X, w, Y)
    with pytest.raises(ValueError, match="in_axes 0 for argument 2, a float: only arrays"):
        adpasses.vmap(logistic, in_axes=(0, None, 0))(X, w, 1.0)
    with pytest.raises(ValueError, match="no argument is batched"):
        adpasses.vmap(logistic, in_axes=None)(X[0], w, 1.0)
    with pytest.raises(TypeError, match="in_axes must be an int or None"):
        adpasses.vmap(logistic, in_axes=(0, "x", 0))
    with pytest.raises(TypeError, match="in_axes must be an int or None"):
        adpasses.vmap(logistic, in_axes=True)
    with pytest.raises(TypeError, match="out_axes must be an int"):
        adpasses.vmap(logistic, out_axes=None)
    with pytest.raises(ValueError, match="out_axes 2 is out of range for result 0"):
        adpasses.vmap(logistic, in_axes=(0, None, 0), out_axes=2)(X, w, Y)
    with pytest.raises(ValueError, match="out_axes has 1 entries but there are 2 results"):
        adpasses.vmap(adpasses.value_and_grad(logistic, 1), in_axes=(0, None, 0), out_axes=(0,))(X, w, Y)
    with pytest.raises(ValueError, match="share memory"):
        adpasses.vmap(smooth_into)(X, X)
    with pytest.raises(TypeError, match="vmap of a vmap"):
        adpasses.vmap(adpasses.vmap(logistic))
    with pytest.raises(TypeError, match="returns an array; vmap maps functions returning floats"):
        adpasses.vmap(array_result)(X)
    with pytest.raises(TypeError, match="vmap: f must be a Python function"):
        adpasses.vmap(3)
    with pytest.raises(TypeError, match="grad needs a function returning a float"):
        adpasses.vmap(adpasses.grad(smooth_into))(X, np.zeros((4, 3)))


def array_result(x):
    return x * 2.0


def out_of_bounds(x, k):
    return x[k]


def test_a_bounds_error_of_an_element_reaches_the_caller_with_its_line() -> None:
    X = np.ones((4, 3))
    with pytest.raises(IndexError, match=r"test_vmap.py:\d+"):
        adpasses.vmap(out_of_bounds, in_axes=(0, None))(X, 3)
    with pytest.raises(IndexError, match=r"test_vmap.py:\d+"):
        adpasses.vmap(adpasses.grad(out_of_bounds), in_axes=(0, 0))(X, np.array([0, 1, 5, 2]))


# -- jvp and hvp ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(2))
def test_batched_jvp_is_the_directional_derivative(seed: int) -> None:
    rng = rng_for(80 + seed)
    B, d = 4, 3
    X, T = rng.normal(size=(B, d)), rng.normal(size=(B, d))
    w, Y = rng.normal(size=d), np.sign(rng.normal(size=B))
    vj = adpasses.vmap(functools.partial(adpasses.jvp, logistic), in_axes=((0, None, 0), (0, None, None)))
    value, tangent = vj((X, w, Y), (T, None, None))
    assert value.shape == (B,) and tangent.shape == (B,)
    for k in range(B):
        (g,) = finite_differences(logistic, [X[k].copy(), w, float(Y[k])], (0,))
        assert_matches(tangent[k], float(g @ T[k]), what=f"element {k}")
        np.testing.assert_allclose(value[k], logistic(X[k], w, Y[k]), rtol=1e-13)
    # a tangent shared by every element, and one int in_axes for everything batched
    _, t2 = adpasses.vmap(functools.partial(adpasses.jvp, logistic),
                          in_axes=((0, None, 0), (None, None, None)))((X, w, Y), (T[0], None, None))
    for k in range(B):
        (g,) = finite_differences(logistic, [X[k].copy(), w, float(Y[k])], (0,))
        assert_matches(t2[k], float(g @ T[0]))


def test_batched_hvp_is_the_hessian_times_v() -> None:
    rng = rng_for(90)
    F = np.eye(3).ravel() + 0.2 * rng.uniform(-1.0, 1.0, (4, 9))
    V = rng.normal(size=(4, 9))
    HV = adpasses.vmap(adpasses.hvp(strain_energy))(F, V)
    assert HV.shape == (4, 9)
    for k in range(4):
        np.testing.assert_allclose(HV[k], adpasses.hessian(strain_energy)(F[k]) @ V[k], rtol=1e-12)
    # the same direction for every element
    HV0 = adpasses.vmap(adpasses.hvp(strain_energy), in_axes=(0, None))(F, V[0])
    for k in range(4):
        np.testing.assert_allclose(HV0[k], adpasses.hessian(strain_energy)(F[k]) @ V[0], rtol=1e-12)


def test_jvp_and_hvp_errors() -> None:
    X = np.ones((4, 3))
    vj = adpasses.vmap(functools.partial(adpasses.jvp, logistic))
    with pytest.raises(TypeError, match="call it with \\(primals, tangents\\)"):
        vj(X, X)
    with pytest.raises(ValueError, match="3 primals but 2 tangents"):
        vj((X, np.ones(3), np.ones(4)), (X, None))
    with pytest.raises(ValueError, match="the tangent of argument 0 .* must be an array of the primal's shape"):
        adpasses.vmap(functools.partial(adpasses.jvp, logistic), in_axes=((0, None, 0), (0, None, None)))(
            (X, np.ones(3), np.ones(4)), (np.ones((4, 2)), None, None))
    with pytest.raises(ValueError, match="each element's v has shape \\(2,\\)"):
        adpasses.vmap(adpasses.hvp(strain_energy))(np.ones((4, 9)), np.ones((4, 2)))


def test_cast_of_an_offset_row_to_the_identity_layout_addresses_the_row() -> None:
    """The lowering of memref.cast from a view with an offset to an
    identity-layout type (what vmap's driver passes) rebases the pointer:
    the row's elements, not the batch's first ones."""
    from adpasses.native.llvm_jit import compile_module

    text = """func.func @f(%m: memref<?x?xf64>, %b: index, %j: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c1 : memref<?x?xf64>
  %row = memref.subview %m[%b, 0] [1, %n] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[?], offset: ?>>
  %r = memref.cast %row : memref<?xf64, strided<[?], offset: ?>> to memref<?xf64>
  %v = memref.load %r[%j] : memref<?xf64>
  func.return %v : f64
}"""
    f = compile_module(text)["f"]
    m = np.arange(12.0).reshape(3, 4)
    for b in range(3):
        for j in range(4):
            assert f(m, b, j) == m[b, j]
    with pytest.raises(IndexError):
        f(m, 1, 4)  # the row keeps its size: bounds checked against it


def accumulate_into(x, out):
    for i in range(len(x)):
        out[i] = out[i] + 2.0 * x[i]


@pytest.mark.parametrize("parallel", [False, True])
def test_a_written_batch_whose_rows_share_memory_is_an_error(parallel: bool) -> None:
    """A batched output whose rows share memory (stride 0 along the batch,
    or overlapping rows): vmap copied it to distinct rows and wrote them
    back, the last row winning, where a Python loop over the elements
    accumulates into the shared memory: silently different numbers. Now a
    ValueError; distinct rows still work."""
    from numpy.lib.stride_tricks import as_strided

    X = rng_for(5).standard_normal((4, 5))
    vm = adpasses.vmap(accumulate_into, parallel=parallel)
    base = np.zeros(5)
    with pytest.raises(ValueError, match="argument 1 is written by the function, and its elements share memory"):
        vm(X, as_strided(base, (4, 5), (0, 8)))
    buf = np.zeros(8)
    with pytest.raises(ValueError, match="elements share memory"):
        vm(X, as_strided(buf, (4, 5), (8, 8)))
    with pytest.raises(ValueError, match="elements share memory"):  # unbatched: copied per element
        adpasses.vmap(accumulate_into, in_axes=(0, None), parallel=parallel)(X, as_strided(base, (5,), (0,)))
    assert not base.any() and not buf.any()  # nothing written before the error
    out = np.ones((4, 5))
    vm(X, out)
    np.testing.assert_allclose(out, 1.0 + 2.0 * X, rtol=1e-15)


@pytest.mark.parametrize("parallel", [False, True])
def test_fast_path_gives_the_general_paths_results_and_errors(parallel):
    """After a call, calls with the same argument types go through a
    generated fast path (vmap._fast_path, no loop over parameters): the
    same numbers as the general path, which every call it cannot take
    (other sizes, shared memory, a copied batch, other types) still gets."""
    rng = np.random.default_rng(190)
    B, d = 9, 4
    X, w, Y = rng.normal(size=(B, d)), rng.normal(size=d), np.sign(rng.normal(size=B))
    for f in (adpasses.grad(logistic, 1), logistic, adpasses.value_and_grad(logistic, (0, 1))):
        mapped = adpasses.vmap(f, in_axes=(0, None, 0), parallel=parallel)
        first = mapped(X, w, Y)  # the general path
        assert mapped._dispatch is not None  # a fast path for these types
        again = mapped(X, w, Y)
        flat = lambda r: [np.asarray(r)] if not isinstance(r, tuple) else [b for a in r for b in flat(a)]  # noqa: E731
        assert all(np.array_equal(a, b) for a, b in zip(flat(first), flat(again)))
        for k in (0, 4, B - 1):
            want = f(X[k].copy(), w.copy(), float(Y[k]))
            assert all(np.allclose(a[k], b, rtol=1e-12, atol=1e-14)
                       for a, b in zip(flat(first), flat(want)))
        with pytest.raises(ValueError, match="different sizes"):
            mapped(X, w, Y[:3])
        with pytest.raises(ValueError, match="share memory"):
            mapped(X, X[0], Y)  # a row of X: the same types, overlapping memory
        columns = np.asfortranarray(X)  # not C-contiguous: another signature, the general path
        assert all(np.array_equal(a, b) for a, b in zip(flat(mapped(columns, w, Y)), flat(first)))
        assert flat(mapped(X[:0], w, Y[:0]))[0].shape[0] == 0
    mapped = adpasses.vmap(adpasses.grad(logistic, 1), in_axes=(0, None, 0), parallel=parallel)
    mapped(X, w, Y)
    G = mapped(X, w, Y.astype(np.float32))  # a float32 batch of scalars: converted by the general path
    np.testing.assert_allclose(G, mapped(X, w, Y), rtol=1e-14)
