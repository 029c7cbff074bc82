"""jvp, jacfwd, hessian, hvp and fwddiff (adpasses/api/forward.py) against
central finite differences, hand derivations and each other, on random
inputs: shapes, dtypes, vector widths, arguments left unchanged, errors,
pickling."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

import adpasses
from adpasses import Const, Duplicated, DuplicatedNoNeed, Output
from benchmarks.kernels import neohookean as nh


def energy(x):
    rho = 0.0
    for i in range(len(x)):
        rho += math.exp(-3.0 * (x[i] + 1.0))
    return rho**2 + rho**3 + rho**4 / 4


def coupled(x, y, s):
    """Couples two arrays and a float; its Hessian has off-diagonal blocks."""
    t = 0.0
    for i in range(len(x)):
        t += math.sin(x[i] * y[i]) + s * x[i] * x[i] * y[(i + 1) % len(y)]
    return t * t * 0.5 + s * math.exp(0.1 * t)


def scratch_user(x, tmp):
    """Writes a scratch array: every API must leave it unchanged."""
    for i in range(len(x)):
        tmp[i] = tmp[i] + math.tanh(x[i])
    s = 0.0
    for i in range(len(x)):
        s += tmp[i] * tmp[i] * x[i]
    return s


def ring(x, out):
    for i in range(len(out)):
        out[i] = math.sin(x[i]) * x[(i + 1) % len(x)]


def grid(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s += math.cos(m[i, j]) * m[i, (j + 1) % m.shape[1]]
    return s


def rng_for(seed: int) -> np.random.Generator:
    return np.random.default_rng(1500 + seed)


def hessian_by_differences(f, args, k: int) -> np.ndarray:
    """Central differences of adpasses.grad (itself checked against
    differences of f elsewhere): H[..., j] = d grad / d x_j."""
    x = args[k]
    cols = []
    g = adpasses.grad(f, k)
    for idx in np.ndindex(x.shape):
        h = 1e-6 * max(1.0, abs(float(x[idx])))
        up, down = [a.copy() if isinstance(a, np.ndarray) else a for a in args], \
            [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        up[k][idx] += h
        down[k][idx] -= h
        cols.append((g(*up) - g(*down)) / (2 * h))
    return np.stack(cols, axis=-1).reshape(x.shape + x.shape)


# -- jvp ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_jvp_is_the_directional_derivative(seed: int) -> None:
    rng = rng_for(seed)
    x, y, s = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6), float(rng.uniform(0.5, 1.5))
    u, v, ds = rng.normal(size=6), rng.normal(size=6), float(rng.normal())
    value, tangent = adpasses.jvp(coupled, (x, y, s), (u, v, ds))
    assert value == pytest.approx(coupled(x, y, s), rel=1e-12)
    gx, gy, gs = finite_differences(coupled, [x, y, s], [0, 1, 2])
    want = gx @ u + gy @ v + gs * ds
    assert tangent == pytest.approx(want, rel=1e-6, abs=1e-8)
    assert isinstance(value, float) and isinstance(tangent, float)
    # None holds an argument constant; a second call takes the fast path
    for _ in range(2):
        _, t0 = adpasses.jvp(coupled, (x, y, s), (u, None, None))
        assert t0 == pytest.approx(gx @ u, rel=1e-6, abs=1e-8)


def test_jvp_leaves_arguments_unchanged_and_keeps_float32() -> None:
    rng = rng_for(4)
    x, tmp, u = rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 5), rng.normal(size=5)
    tmp0 = tmp.copy()
    _, t = adpasses.jvp(scratch_user, (x, tmp), (u, None))
    assert np.array_equal(tmp, tmp0)
    (gx,) = finite_differences(scratch_user, [x, tmp], [0])
    assert t == pytest.approx(gx @ u, rel=1e-6)
    x32 = x.astype(np.float32)
    v32, t32 = adpasses.jvp(energy, (x32,), (u.astype(np.float32),))
    assert t32 == pytest.approx(adpasses.grad(energy)(x) @ u, rel=1e-4)


# -- jacfwd ---------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [None, 1, 4])
def test_jacfwd_of_a_float_function_is_its_gradient(width) -> None:  # type: ignore[no-untyped-def]
    rng = rng_for(5)
    x, y, s = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 7), 0.8
    gx, gy = adpasses.jacfwd(coupled, (0, 1), width=width)(x, y, s)
    want = adpasses.grad(coupled, (0, 1))(x, y, s)
    assert_matches(gx, want[0], what="jacfwd x") and None
    assert_matches(gy, want[1], what="jacfwd y")
    m = rng.uniform(-1, 1, (3, 4))
    assert_matches(adpasses.jacfwd(grid, width=width)(m), finite_differences(grid, [m], [0])[0], what="grid")


@pytest.mark.parametrize("width", [None, 3])
def test_jacfwd_of_an_output_equals_jacrev(width) -> None:  # type: ignore[no-untyped-def]
    rng = rng_for(6)
    x, out = rng.uniform(-1, 1, 8), rng.uniform(-1, 1, 8)
    out0 = out.copy()
    J = adpasses.jacfwd(ring, width=width)(x, Output(out))
    assert J.shape == (8, 8) and np.array_equal(out, out0)
    assert_matches(J, adpasses.jacrev(ring)(x, Output(out)), what="jacfwd vs jacrev")
    J32 = adpasses.jacfwd(ring, width=width)(x.astype(np.float32), Output(out.astype(np.float32)))
    assert J32.dtype == np.float32
    assert_matches(J32, J, float32=True, what="float32 jacfwd")


# -- hessian and hvp ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_hessian_of_the_strain_energy_is_the_hand_hessian(seed: int) -> None:
    x = nh.deformation_gradients(rng_for(seed), 1)[0]
    H = adpasses.hessian(nh.strain_energy)(x)
    want = np.empty((9, 9))
    nh.hessian_by_hand(x, want)
    assert H.shape == (9, 9) and H.dtype == np.float64
    assert_matches(H, want, what="neo-Hookean Hessian")
    # chunks of 4 lanes: three sweeps, the last one partial
    assert_matches(adpasses.hessian(nh.strain_energy, width=4)(x), want, what="width 4")
    H32 = adpasses.hessian(nh.strain_energy)(x.astype(np.float32))
    assert H32.dtype == np.float32
    assert_matches(H32, want, float32=True, what="float32 Hessian")


@pytest.mark.parametrize("seed", range(2))
def test_hessian_blocks_and_shapes(seed: int) -> None:
    rng = rng_for(10 + seed)
    x, y, s = rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 5), 0.7
    (hxx, hxy), (hyx, hyy) = adpasses.hessian(coupled, (0, 1))(x, y, s)
    assert all(h.shape == (5, 5) for h in (hxx, hxy, hyx, hyy))
    assert_matches(hxx, hessian_by_differences(coupled, [x, y, s], 0), what="Hxx")
    assert_matches(hyy, hessian_by_differences(coupled, [x, y, s], 1), what="Hyy")
    gy = adpasses.grad(coupled, 1)
    fd = np.stack([(gy(x + 1e-6 * e, y, s) - gy(x - 1e-6 * e, y, s)) / 2e-6 for e in np.eye(5)], axis=-1)
    assert_matches(hyx, fd, what="Hyx")
    assert_matches(hxy, hyx.T, what="symmetry of the blocks")
    m = rng.uniform(-1, 1, (2, 3))
    Hm = adpasses.hessian(grid)(m)
    assert Hm.shape == (2, 3, 2, 3)
    assert_matches(Hm, hessian_by_differences(grid, [m], 0), what="2-D argument")


def test_hessian_and_hvp_leave_arguments_unchanged() -> None:
    rng = rng_for(12)
    x, tmp, v = rng.uniform(-1, 1, 20), rng.uniform(-1, 1, 20), rng.normal(size=20)
    tmp0, x0 = tmp.copy(), x.copy()
    H = adpasses.hessian(scratch_user)(x, tmp)  # n = 20 > 16: two sweeps of width 16
    assert np.array_equal(tmp, tmp0) and np.array_equal(x, x0)
    assert_matches(H, hessian_by_differences(scratch_user, [x, tmp], 0), what="scratch_user")
    hv = adpasses.hvp(scratch_user)(x, tmp, v)
    assert np.array_equal(tmp, tmp0)
    assert_matches(hv, H @ v, what="hvp")


@pytest.mark.parametrize("seed", range(3))
def test_hvp_is_the_hessian_times_v(seed: int) -> None:
    rng = rng_for(20 + seed)
    x, v = rng.uniform(-0.5, 0.5, 30), rng.normal(size=30)
    hv = adpasses.hvp(energy)(x, v)
    assert hv.shape == (30,) and hv.dtype == np.float64
    assert_matches(hv, hessian_by_differences(energy, [x], 0) @ v, what="hvp(energy)")
    assert np.array_equal(adpasses.hvp(energy)(x, v), hv)  # fast path


# -- fwddiff --------------------------------------------------------------------------------


def test_fwddiff_like_enzyme() -> None:
    rng = rng_for(30)
    x, dx = rng.uniform(-1, 1, 6), rng.normal(size=6)
    g = adpasses.grad(energy)(x)
    assert adpasses.fwddiff(energy, Duplicated(x, dx)) == pytest.approx(g @ dx, rel=1e-12)
    t, value = adpasses.fwddiff(energy, Duplicated(x, dx), return_primal=True)
    assert value == pytest.approx(energy(x), rel=1e-12) and t == pytest.approx(g @ dx, rel=1e-12)
    # width 2: two lanes at once, the tangents leading
    lanes = np.stack([dx, 2.0 * dx])
    assert np.allclose(adpasses.fwddiff(energy, Duplicated(x, lanes), width=2), [g @ dx, 2 * g @ dx], rtol=1e-12)
    # a float and its tangent; a constant array
    y, s = rng.uniform(-1, 1, 6), 0.9
    ts = adpasses.fwddiff(coupled, Const(x), y, Duplicated(s, 1.0))
    assert ts == pytest.approx(finite_differences(coupled, [x, y, s], [2])[0], rel=1e-6)
    # an output array receives the tangent of its final contents; f runs on the arrays
    out, dout = np.zeros(6), np.zeros(6)
    assert adpasses.fwddiff(ring, Duplicated(x, dx), DuplicatedNoNeed(out, dout)) is None
    assert_matches(dout, adpasses.jacrev(ring)(x, Output(np.zeros(6))) @ dx, what="output tangent")


# -- errors, caching, pickling ---------------------------------------------------------------


def test_errors() -> None:
    x = np.ones(3)
    with pytest.raises(TypeError, match="cannot be differentiated"):
        adpasses.jvp(coupled, (x, x.copy(), 2), (x, x, 1))
    with pytest.raises(ValueError, match="must be an array of the primal's shape"):
        adpasses.jvp(energy, (x,), (np.ones(4),))
    with pytest.raises(ValueError, match="1 primals but 2 tangents"):
        adpasses.jvp(energy, (x,), (x, x))
    with pytest.raises(TypeError, match="must be tuples"):
        adpasses.jvp(energy, x, x)
    with pytest.raises(TypeError, match="does not return a float"):
        adpasses.hessian(ring)(x, np.zeros(3))
    with pytest.raises(TypeError, match="mark the array it writes its result into"):
        adpasses.jacfwd(ring)(x, np.zeros(3))
    with pytest.raises(TypeError, match="differentiates float arrays"):
        adpasses.hessian(coupled, 2)(x, x.copy(), 1.0)
    with pytest.raises(TypeError, match="array of int64 and cannot be differentiated"):
        adpasses.jacfwd(coupled, 1)(x, np.arange(3), 1.0)
    with pytest.raises(TypeError, match="array of int64 and cannot be differentiated"):
        adpasses.hessian(coupled, 1)(x, np.arange(3), 1.0)
    with pytest.raises(ValueError, match="v has shape"):
        adpasses.hvp(energy)(x, np.ones(4))
    with pytest.raises(TypeError, match="Active, a reverse-mode marker"):
        adpasses.fwddiff(coupled, x, x.copy(), adpasses.Active(1.0))
    with pytest.raises(ValueError, match="width must be a positive int"):
        adpasses.hessian(energy, width=0)
    with pytest.raises(ValueError, match=r"share memory with argument 1 \('tmp'\), which scratch_user"):
        adpasses.hessian(scratch_user)(x, x)
    with pytest.raises(ValueError, match="there is no argument 3"):
        adpasses.hessian(energy, 3)
    with pytest.raises(TypeError, match="argnums must be an int"):
        adpasses.jacfwd(energy, "0")


def smoothed(x):
    y = np.zeros_like(x)
    y[1:-1] = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]
    return y


def energy_and_forces(x):
    return np.sum(np.sin(x) * x), np.cos(x) * x + np.sin(x)


def two_floats(x):
    return np.sum(x * x), np.sum(x)


@pytest.mark.parametrize("f, words", [(smoothed, "returns an array, not a float"),
                                      (energy_and_forces, "returns a tuple, not a float"),
                                      (two_floats, "returns a tuple, not a float")],
                         ids=lambda v: getattr(v, "__name__", "words"))
def test_forward_mode_of_array_and_tuple_results(f, words) -> None:  # type: ignore[no-untyped-def]
    """fwddiff of a function returning an array or a tuple used to return
    None (the tangent of the result silently dropped; of a tuple of floats,
    the first one's only); it is a TypeError naming jvp and jacfwd, which
    differentiate such results (agreeing with reverse mode)."""
    x = np.linspace(0.1, 0.9, 5)
    with pytest.raises(TypeError, match=words + ".*fwddiff returns the tangent of a float result.*jvp.*jacfwd"):
        adpasses.fwddiff(f, Duplicated(x.copy(), np.ones(5)))
    J = adpasses.jacrev(f)(x)
    assert (J.shape == (5, 5)) if f is smoothed else (len(J) == 2)
    Jf = adpasses.jacfwd(f)(x)
    v = np.cos(np.arange(5.0))
    out, tangent = adpasses.jvp(f, (x,), (v,))
    if f is smoothed:
        np.testing.assert_allclose(Jf, J, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(tangent, J @ v, rtol=1e-12, atol=1e-14)
    else:
        for a, b in zip(Jf, J):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        for t, j in zip(tangent, J):
            np.testing.assert_allclose(t, j @ v, rtol=1e-12, atol=1e-14)


def test_compiled_once_per_signature_and_width() -> None:
    jf = adpasses.jit(nh.strain_energy)
    xs = nh.deformation_gradients(rng_for(40), 4)
    adpasses.hessian(jf)(xs[0])
    before = len(jf.compilations)
    for x in xs:
        adpasses.hessian(jf)(x)
    assert len(jf.compilations) == before
    assert adpasses.hessian(jf) is adpasses.hessian(jf, 0)


def test_pickles_by_reference() -> None:
    import pickle_kernels as pk

    for obj in (adpasses.hessian(pk.loss), adpasses.hvp(pk.scaled, 1), adpasses.jacfwd(pk.loss, (0, 2))):
        assert pickle.loads(pickle.dumps(obj)) is obj


def test_hvp_with_several_vectors_is_one_vector_mode_sweep() -> None:
    rng = rng_for(50)
    x, V = rng.uniform(-0.5, 0.5, 12), rng.normal(size=(3, 12))
    HV = adpasses.hvp(energy)(x, V)
    assert HV.shape == (3, 12)
    for lane in range(3):
        assert_matches(HV[lane], adpasses.hvp(energy)(x, V[lane]), what=f"lane {lane}")
    assert np.array_equal(adpasses.hvp(energy)(x, V), HV)  # fast path
    with pytest.raises(ValueError, match=r"or W such vectors"):
        adpasses.hvp(energy)(x, rng.normal(size=(3, 11)))


def test_fwddiff_fast_path_agrees_with_the_general_path() -> None:
    rng = rng_for(60)
    x, y, s = rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 5), 0.4
    dx, dxs = rng.normal(size=5), rng.normal(size=(3, 5))
    for _ in range(3):  # the first call compiles and installs the fast path
        t1 = adpasses.fwddiff(coupled, Duplicated(x, dx), Const(y), Duplicated(s, 0.5))
        tw, v = adpasses.fwddiff(coupled, Duplicated(x, dxs), Const(y), Duplicated(s, [0.0, 1.0, 2.0]),
                                 width=3, return_primal=True)
        gx, _, gs = finite_differences(coupled, [x, y, s], [0, 1, 2])
        assert t1 == pytest.approx(gx @ dx + 0.5 * gs, rel=1e-6)
        assert np.allclose(tw, [gx @ dxs[k] + k * gs for k in range(3)], rtol=1e-6)
        assert v == pytest.approx(coupled(x, y, s), rel=1e-12)
    # a tangent of another shape takes the general path and its error
    with pytest.raises(ValueError, match="must have shape"):
        adpasses.fwddiff(coupled, Duplicated(x, np.ones(4)), Const(y), Duplicated(s, 0.5))


def squares_in_place(x):
    """Overwrites its argument: the direction's own lanes are written by
    the tangent sweep, so the driver must clear them whole every sweep."""
    for i in range(len(x)):
        x[i] = math.sin(x[i]) * x[i]
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[(i + 1) % len(x)]
    return s


@pytest.mark.parametrize("width", [None, 2])
def test_derivatives_of_a_function_writing_its_argument(width) -> None:  # type: ignore[no-untyped-def]
    x = rng_for(70).uniform(-1, 1, 5)
    x0 = x.copy()
    H = adpasses.hessian(squares_in_place, width=width)(x)
    assert np.array_equal(x, x0)
    assert_matches(H, hessian_by_differences(squares_in_place, [x], 0), what="in-place Hessian")
    g = adpasses.jacfwd(squares_in_place, width=width)(x)
    assert_matches(g, finite_differences(squares_in_place, [x], [0])[0], what="in-place jacfwd")
    # hvp: the sweep updates the written array's tangent; v stays the caller's
    v = rng_for(71).normal(size=5)
    V = rng_for(72).normal(size=(2, 5))
    v0, V0 = v.copy(), V.copy()
    for _ in range(2):  # general path, then the fast path
        assert_matches(adpasses.hvp(squares_in_place)(x, v), H @ v0, what="in-place hvp")
        HV = adpasses.hvp(squares_in_place)(x, V)
        assert_matches(HV, V0 @ H.T, what="in-place hvp, 2 vectors")
        assert np.array_equal(v, v0) and np.array_equal(V, V0) and np.array_equal(x, x0)


def test_a_later_size_reuses_the_first_width() -> None:
    """Over the shape budget (forward.STATIC_SHAPE_BYTES) a driver serves
    every size of its signature: width = min(n, 16) of the first call; a
    call with another n reuses that driver (chunks of the first width),
    right. (Small sizes are compiled per shape: test_hessian_shapes.py.)"""
    from adpasses.api.forward import STATIC_SHAPE_BYTES

    jf = adpasses.jit(energy)
    x70, x90 = rng_for(80).uniform(-0.5, 0.5, 70), rng_for(81).uniform(-0.5, 0.5, 90)
    assert 33 * 70 * 8 > STATIC_SHAPE_BYTES  # 33 lanes and shadows of width 16: shape-generic
    want = hessian_by_differences(energy, [x90], 0)
    adpasses.hessian(jf)(x70)
    before = len(jf.compilations)
    assert_matches(adpasses.hessian(jf)(x90), want, what="n = 90")
    assert len(jf.compilations) == before


def _scaled_squares(x, scale=2.0, shift=0.5):
    s = 0.0
    for v in x:
        s += scale * v * v + shift
    return s


@pytest.mark.parametrize("given", [1, 2, 3])
def test_jvp_fills_omitted_defaults_like_python(given):
    """jvp(f, primals, tangents) with parameters left to their defaults binds
    them like Python (constants: no tangent), as grad does; repeated calls
    take the cached path and agree."""
    rng = np.random.default_rng(41)
    x, t = rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 4)
    extra = (1.5, -0.25)[: given - 1]
    primals, tangents = (x, *extra), (t, *[None] * len(extra))
    for _ in range(2):
        value, derivative = adpasses.jvp(_scaled_squares, primals, tangents)
        assert value == pytest.approx(_scaled_squares(*primals), rel=1e-12)
        h = 1e-6
        fd = (_scaled_squares(x + h * t, *extra) - _scaled_squares(x - h * t, *extra)) / (2 * h)
        assert derivative == pytest.approx(fd, rel=1e-6, abs=1e-9)


def test_tangents_laid_out_unlike_their_array() -> None:
    """A non-contiguous tangent of a C-contiguous array (a column V[:, j], a
    reversed view, a Fortran-ordered batch of vectors) was a ValueError of
    the generated tangent function ('energy_grad_d_a_fwd_ddc_(): argument 1
    ('dx') is not C-contiguous ... declare a strided layout'): jvp and hvp
    copy it; fwddiff, whose tangent buffers f may update, names the remedy."""
    rng = np.random.default_rng(61)
    x = rng.uniform(-1, 1, 5)
    V = rng.normal(size=(5, 3))
    hvp = adpasses.hvp(energy)
    H = adpasses.hessian(energy)(x)
    for _ in range(2):  # the second call: no fast path may take the copy's place
        for j in range(3):
            assert_matches(hvp(x, V[:, j]), H @ V[:, j], what=f"hvp along column {j}")
            assert adpasses.jvp(energy, (x,), (V[:, j],))[1] == pytest.approx(
                adpasses.grad(energy)(x) @ V[:, j], rel=1e-12)
        assert_matches(hvp(x, np.asfortranarray(V.T)), (H @ V).T, what="a Fortran-ordered batch")
        assert_matches(hvp(x, x[::-1]), H @ x[::-1], what="a reversed view")
    with pytest.raises(ValueError, match=r"fwddiff\(energy\): the tangent of argument 0 is not C-contiguous"):
        adpasses.fwddiff(energy, adpasses.Duplicated(x, V[:, 0]))
