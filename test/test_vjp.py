"""adpasses.vjp: vector-Jacobian products of functions returning arrays and
tuples, each checked against central finite differences of <ct, f(args)>
(plain Python) at random inputs and random cotangents."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses
from finite_diff import assert_matches, finite_differences

import array_result_kernels as k

rng = np.random.default_rng(1616)


def _pairing(f, ct):
    """<ct, f(*args)> as a plain Python function of the arguments."""
    def phi(*args):
        out = f(*args)
        outs, cts = (out, ct) if isinstance(out, tuple) else ((out,), (ct,))
        total = 0.0
        for o, c in zip(outs, cts):
            if c is not None:
                total += float(np.sum(np.asarray(c, dtype=np.float64) * np.asarray(o, dtype=np.float64)))
        return total
    return phi


def _cotangent(out):
    if isinstance(out, tuple):
        return tuple(_cotangent(o) for o in out)
    if isinstance(out, np.ndarray):
        return rng.standard_normal(out.shape).astype(out.dtype)
    if isinstance(out, float):
        return float(rng.standard_normal())
    return None  # an int result: not differentiated


CASES = [
    ("doubled", lambda: (rng.standard_normal(5),)),
    ("energy_forces", lambda: (rng.standard_normal(6),)),
    ("tail", lambda: (rng.standard_normal(5),)),
    ("transposed", lambda: (rng.standard_normal((3, 4)),)),
    ("column", lambda: (rng.standard_normal((4, 3)), 1)),
    ("local_view", lambda: (rng.standard_normal(7),)),
    ("stats", lambda: (rng.standard_normal(6),)),
    ("outer", lambda: (rng.standard_normal(3), rng.standard_normal(4))),
    ("scaled", lambda: (rng.standard_normal(5), 0.7)),
    ("through_callee", lambda: (rng.standard_normal(4), rng.standard_normal(2))),
    ("energy_forces_caller", lambda: (rng.standard_normal(5),)),
]


@pytest.mark.parametrize("name,make", CASES, ids=[c[0] for c in CASES])
def test_vjp_matches_finite_differences(name, make):
    f = getattr(k, name)
    args = make()
    out, vjp_fn = adpasses.vjp(f)(*args)
    expected_out = f(*args)
    for o, e in zip(out if isinstance(out, tuple) else (out,),
                    expected_out if isinstance(expected_out, tuple) else (expected_out,)):
        np.testing.assert_allclose(o, e, rtol=1e-12)
    ct = _cotangent(out)
    got = vjp_fn(ct)
    assert isinstance(got, tuple) and len(got) == len(args)
    wrt = [n for n, a in enumerate(args) if isinstance(a, float) or
           (isinstance(a, np.ndarray) and a.dtype.kind == "f")]
    expected = finite_differences(_pairing(f, ct), list(args), wrt)
    for n, e in zip(wrt, expected):
        assert_matches(got[n], e, what=f"{name} argument {n}")
        if isinstance(args[n], np.ndarray):
            assert got[n].shape == args[n].shape and got[n].dtype == args[n].dtype
    for n, a in enumerate(args):
        if n not in wrt:
            assert got[n] is None


def test_vjp_is_linear_in_the_cotangent_and_reusable():
    x = rng.standard_normal(5)
    _, vjp_fn = adpasses.vjp(k.doubled)(x)
    a, b = rng.standard_normal(5), rng.standard_normal(5)
    np.testing.assert_allclose(vjp_fn(a + 2 * b)[0], vjp_fn(a)[0] + 2 * vjp_fn(b)[0])


def test_float32_results():
    x = rng.standard_normal(5).astype(np.float32)
    out, vjp_fn = adpasses.vjp(k.single_precision)(x)
    assert out.dtype == np.float32
    ct = rng.standard_normal(5).astype(np.float32)
    (dx,) = vjp_fn(ct)
    assert dx.dtype == np.float32
    assert_matches(dx, ct * x.astype(np.float64), float32=True)


def test_arguments_are_left_unchanged():
    x = rng.standard_normal(4)
    y = x.copy()
    out, vjp_fn = adpasses.vjp(k.writes_through_tail)(x)
    np.testing.assert_array_equal(x, y)
    (dx,) = vjp_fn(1.0)
    np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(dx, np.zeros(4))  # x[1] is overwritten before it is read


def test_cotangent_errors():
    x = rng.standard_normal(3)
    _, vjp_fn = adpasses.vjp(k.energy_forces)(x)
    with pytest.raises(TypeError, match="must be a tuple of 2"):
        vjp_fn(np.ones(3))
    with pytest.raises(ValueError, match=r"has shape \(4,\); it must have the output's shape \(3,\)"):
        vjp_fn((1.0, np.ones(4)))
    with pytest.raises(TypeError, match="must be a number"):
        vjp_fn((np.ones(3), np.ones(3)))


def test_grad_of_an_array_result_names_vjp():
    with pytest.raises(TypeError, match=r"returns an array: grad needs a function returning a float; .*adpasses\.vjp"):
        adpasses.grad(k.doubled)(np.ones(3))
    with pytest.raises(TypeError, match=r"returns a tuple of 2 values: .*adpasses\.vjp"):
        adpasses.grad(k.energy_forces)(np.ones(3))


JACOBIAN_CASES = [
    ("doubled", lambda: (rng.standard_normal(4),), 0),
    ("outer", lambda: (rng.standard_normal(3), rng.standard_normal(2)), (0, 1)),
    ("scaled", lambda: (rng.standard_normal(3), 0.4), (0, 1)),
    ("tail", lambda: (rng.standard_normal(4),), 0),
]


@pytest.mark.parametrize("name,make,argnums", JACOBIAN_CASES, ids=[c[0] for c in JACOBIAN_CASES])
def test_jacrev_of_array_and_tuple_results_matches_finite_differences(name, make, argnums):
    f = getattr(k, name)
    args = make()
    J = adpasses.jacrev(f, argnums)(*args)
    out = f(*args)
    outs, Js = (out, J) if isinstance(out, tuple) else ((out,), (J,))
    nums = (argnums,) if isinstance(argnums, int) else argnums
    for j, (o, Jo) in enumerate(zip(outs, Js)):
        Jo = (Jo,) if isinstance(argnums, int) else Jo
        for n, Jn in zip(nums, Jo):
            assert Jn.shape == np.shape(o) + np.shape(args[n])
            for idx in np.ndindex(*np.shape(o)):
                def element(*a, idx=idx, j=j):
                    r = f(*a)
                    r = r[j] if isinstance(r, tuple) else r
                    return float(np.asarray(r)[idx])
                (expected,) = finite_differences(element, list(args), [n])
                assert_matches(Jn[idx], expected, what=f"{name} d out{idx} / d arg {n}")


@pytest.mark.parametrize("rets,message", [
    ("[dup]", "result 0 is 'dup' but has scalar type f64; use 'active' for a float result"),
], ids=["dup_on_a_float"])
def test_result_activity_errors_scalar(rets, message):
    from adpasses.core.context import parse_module
    from adpasses.core.verify import verify_module

    text = f"""func.func @f(%x: f64) -> f64 {{
  func.return %x : f64
}}
func.func @main(%x: f64, %s: f64) -> f64 {{
  %d = ad.autodiff @f(%x, %s) {{activity = [active], ret_activity = {rets}}} : (f64, f64) -> f64
  func.return %d : f64
}}"""
    with pytest.raises(adpasses.CompileError, match=message):
        verify_module(parse_module(text, "t.mlir"))


def test_active_on_a_memref_result_suggests_dup():
    from adpasses.core.context import parse_module
    from adpasses.core.verify import verify_module

    text = """func.func @f(%x: memref<?xf64>) -> memref<?xf64> {
  func.return %x : memref<?xf64>
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %s: memref<?xf64>) {
  ad.autodiff @f(%x, %dx, %s) {activity = [dup], ret_activity = [active]}
    : (memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
  func.return
}"""
    with pytest.raises(adpasses.CompileError, match="only float results can be active; use 'dup' for a memref result"):
        verify_module(parse_module(text, "t.mlir"))


def test_autodiff_return_primal_gives_the_whole_tuple():
    x = rng.standard_normal(4)
    for _ in range(2):  # the general path, then the fast path
        dx = np.zeros(4)
        derivs, primal = adpasses.autodiff(k.energy_forces, adpasses.Duplicated(x, dx), return_primal=True)
        e, f = primal
        assert derivs == (None,) and e == pytest.approx(np.sum(x ** 4))
        np.testing.assert_allclose(f, -4.0 * x ** 3)
        np.testing.assert_allclose(dx, 4.0 * x ** 3)  # the energy's seed is 1; the array result is const


def test_autodiff_of_a_function_returning_only_arrays_is_a_type_error():
    """autodiff seeds float results; an array result is const. A function
    returning arrays and no float, writing no Duplicated array, got nothing
    seeded: dx stayed zero and autodiff returned (None,) (silently, with any
    seed=). Now a TypeError pointing to vjp / an output argument, on both
    widths; what it points to gives the derivative."""
    x = rng.standard_normal(5)
    for width in (1, 2):
        dx = np.zeros((5,) if width == 1 else (width, 5))
        with pytest.raises(TypeError, match=r"doubled\(\) returns an array, and autodiff seeds only float "
                                            r"results .*adpasses.vjp"):
            adpasses.autodiff(k.doubled, adpasses.Duplicated(x.copy(), dx), seed=2.0, width=width)
        with pytest.raises(TypeError, match=r"returns an array.*Duplicated\(out, seed_array\)"):
            adpasses.autodiff(k.local_view, adpasses.Duplicated(x.copy(), dx), width=width)
    ct = rng.standard_normal(5)
    _, vjp_fn = adpasses.vjp(k.doubled)(x)
    (got,) = vjp_fn(ct)
    J = adpasses.jacrev(k.doubled)(x)
    np.testing.assert_allclose(got, J.T @ ct, rtol=1e-12, atol=1e-14)
    assert np.max(np.abs(got)) > 0


def test_an_array_returned_inside_an_if_is_a_located_error_under_differentiation():
    x = rng.standard_normal(3)
    _, vjp_fn = adpasses.vjp(k.early)(x, 1.0)
    with pytest.raises(adpasses.CompileError, match=r"array_result_kernels\.py:\d+:\d+: error: .*an array "
                                                     r"returned inside an if"):
        vjp_fn((np.ones(3), 1.0))
