"""The matrix product of the array language: `x @ y`, `np.matmul`, `np.dot`
and `.dot` of matrices and vectors (frontend/array_exprs.py, `matmul`).

- values against numpy for every combination of matrix and vector
  operands, float64, float32 and mixed, transposed and strided views,
  empty and BLAS-sized shapes;
- reverse mode (`grad`, `vjp`) and forward mode (`jvp`) against central
  finite differences of the same function run by numpy, for every shape
  combination, on random inputs;
- sizes that do not match: numpy's ValueError, with the Python location,
  also with boundscheck=False; constructs that stay outside: located
  compile errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import adpasses
from finite_diff import assert_matches, finite_differences

RNG = np.random.default_rng(16)

# (shape of x, shape of y): every combination of matrix and vector operands,
# sizes below and above the BLAS threshold (m * n * k >= 512), empty.
SHAPES = [
    ((3, 4), (4, 5)),      # matrix @ matrix
    ((3, 4), (4,)),        # matrix @ vector
    ((4,), (4, 5)),        # vector @ matrix
    ((4,), (4,)),          # vector @ vector (a number)
    ((1, 1), (1, 1)),
    ((12, 9), (9, 10)),    # BLAS
    ((16, 40), (40,)),     # BLAS, n = 1
    ((40,), (40, 16)),     # BLAS, m = 1
    ((0, 3), (3, 2)),      # empty rows
    ((3, 0), (0, 2)),      # empty shared dimension: zeros
]
IDS = [f"{a}@{b}" for a, b in SHAPES]


def product(x, y):
    return x @ y


def product_np(x, y):
    return np.matmul(x, y)


def product_dot(x, y):
    return np.dot(x, y) + x.dot(y)


def transposed(x, y):
    return x.T @ y


def strided(x, y):
    return x[::2] @ y


def of_expressions(x, y):
    return (2.0 * x) @ np.tanh(y)


def loss(x, y, w):
    return np.sum(w * np.tanh(x @ y))


def loss_of_vectors(x, y, w):
    return w * np.tanh(x @ y)


def chained(x, y, w):
    """x @ y @ y.T: the second product reads the first's result."""
    return np.sum(w * ((x @ y) @ y.T))


def gram(x, y, w):
    """x.T @ x: one array on both sides (its shadow receives both terms)."""
    return np.sum(w * np.tanh(x.T @ x)) + np.sum(y)


def in_a_loop(x, y, w):
    """x @ y[t] per step: a view of an argument, the result allocated in
    the loop (the reverse rule of the product, inside the reverse loop)."""
    s = 0.0
    for t in range(y.shape[0]):
        s += np.sum(w * np.tanh(x @ y[t]))
    return s


def operand_from_the_loop(x, y, w):
    """x @ h with h allocated inside the loop: the reverse sweep cannot
    name h, so this product is differentiated through its loop nest."""
    s = 0.0
    for t in range(y.shape[0]):
        h = np.tanh(2.0 * y[t])
        s += np.sum(w * (x @ h))
    return s


def overwritten(x, y, w):
    """d is overwritten after the product: its contents at the product are
    snapshot for the reverse (dx needs them)."""
    d = y.copy()
    c = x @ d
    d *= 3.0
    return np.sum(w * np.tanh(c)) + np.sum(d * d)


def _inputs(xs, ys, dtype=np.float64):
    return RNG.uniform(-1, 1, xs).astype(dtype), RNG.uniform(-1, 1, ys).astype(dtype)


@pytest.mark.parametrize("xs, ys", SHAPES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_match_numpy(xs, ys, dtype):
    x, y = _inputs(xs, ys, dtype)
    for f in (product, product_np):
        got = adpasses.jit(f)(x, y)
        expected = x @ y
        assert np.shape(got) == expected.shape
        assert_matches(got, expected, float32=dtype == np.float32, what=f"{f.__name__} {xs}@{ys}")
        if expected.ndim:
            assert got.dtype == expected.dtype
    assert_matches(adpasses.jit(product_dot)(x, y), 2 * np.dot(x, y), float32=dtype == np.float32)


def test_mixed_precision_promotes_to_float64():
    x, y = _inputs((3, 4), (4, 5), np.float32)
    y = y.astype(np.float64)
    got = adpasses.jit(product)(x, y)
    assert got.dtype == np.float64
    assert_matches(got, x @ y)


@pytest.mark.parametrize("f, xs, ys", [
    (transposed, (4, 3), (4, 5)), (transposed, (20, 30), (20, 10)), (strided, (6, 4), (4, 5)),
    (strided, (40, 20), (20, 30)), (of_expressions, (3, 4), (4, 5)), (of_expressions, (4,), (4, 3)),
])
def test_views_and_expressions_as_operands(f, xs, ys):
    x, y = _inputs(xs, ys)
    assert_matches(adpasses.jit(f)(x, y), f(x, y), what=f.__name__)


def _check_derivatives(f, x, y, w, what):
    fx, fy = finite_differences(f, [x, y, w], [0, 1])
    gx, gy = adpasses.grad(f, argnums=(0, 1))(x.copy(), y.copy(), w)
    assert_matches(gx, fx, what=f"{what}: grad d/dx")
    assert_matches(gy, fy, what=f"{what}: grad d/dy")
    tx, ty = RNG.normal(size=x.shape), RNG.normal(size=y.shape)
    value, tangent = adpasses.jvp(f, (x.copy(), y.copy(), w), (tx, ty, None))
    assert value == pytest.approx(f(x, y, w), rel=1e-12, abs=1e-12)
    assert tangent == pytest.approx(float(np.sum(fx * tx) + np.sum(fy * ty)), rel=1e-6, abs=1e-8), \
        f"{what}: jvp"


@pytest.mark.parametrize("xs, ys", SHAPES, ids=IDS)
def test_grad_and_jvp_match_finite_differences(xs, ys):
    x, y = _inputs(xs, ys)
    if len(xs) == 1 and len(ys) == 1:
        _check_derivatives(loss_of_vectors, x, y, 0.7, f"{xs}@{ys}")
    else:
        _check_derivatives(loss, x, y, RNG.normal(size=(x @ y).shape), f"{xs}@{ys}")


@pytest.mark.parametrize("xs, ys", [((3, 4), (4, 5)), ((12, 9), (9, 10))])
def test_chained_products_match_finite_differences(xs, ys):
    x, y = _inputs(xs, ys)
    _check_derivatives(chained, x, y, RNG.normal(size=(xs[0], ys[0])), "x @ y @ y.T")


@pytest.mark.parametrize("f, xs, ys, ws", [
    (gram, (5, 3), (2,), (3, 3)),
    (gram, (30, 12), (2,), (12, 12)),        # BLAS
    (in_a_loop, (3, 4), (3, 4, 5), (3, 5)),
    (in_a_loop, (12, 9), (2, 9, 10), (12, 10)),
    (operand_from_the_loop, (3, 4), (3, 4), (3,)),
    (overwritten, (3, 4), (4, 5), (3, 5)),
    (overwritten, (12, 9), (9, 10), (12, 10)),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_products_in_loops_shared_and_overwritten_operands(f, xs, ys, ws):
    x, y = _inputs(xs, ys)
    _check_derivatives(f, x, y, RNG.normal(size=ws), f.__name__)


def test_the_reverse_of_a_product_is_two_products():
    """The gradient keeps the product structured (two linalg.matmul on the
    shadows) rather than reversing its scalar loop nest; a product whose
    operand is allocated inside a loop keeps the loop nest."""
    from adpasses.frontend import ArrayArg, build_module
    from adpasses.transforms.reverse_pass import differentiate

    def build(f, ranks):
        from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, UnitAttr
        from xdsl.dialects import func as func_d

        module, name = build_module(f, [ArrayArg("float64", r, True) for r in ranks])
        fn = next(o for o in module.ops if isinstance(o, func_d.FuncOp) and o.sym_name.data == name)
        fn.arg_attrs = ArrayAttr([DictionaryAttr({"ad.noalias": UnitAttr()}) for _ in ranks])
        g = differentiate(module, name, ["dup", "dup", "const"], ["active"])
        return next(o for o in module.ops if isinstance(o, func_d.FuncOp) and o.sym_name.data == g.name)

    text = str(build(loss, (2, 2, 2)))
    assert text.count("linalg.matmul") == 3  # the primal's and dA, dB
    assert "outs(%dx" in text and "outs(%dy" in text
    text = str(build(operand_from_the_loop, (2, 2, 1)))
    assert "linalg.matmul ins" not in text and "ad.size_match" in text  # lowered to its checked loops


@pytest.mark.parametrize("xs, ys", [s for s in SHAPES if len(s[0]) + len(s[1]) > 2],
                         ids=[i for s, i in zip(SHAPES, IDS) if len(s[0]) + len(s[1]) > 2])
def test_vjp_of_the_product_matches_finite_differences(xs, ys):
    x, y = _inputs(xs, ys)
    out, vjp_fn = adpasses.vjp(product)(x, y)
    assert_matches(out, x @ y)
    cotangent = RNG.normal(size=out.shape)
    gx, gy = vjp_fn(cotangent)
    fx, fy = finite_differences(lambda a, b: float(np.sum(cotangent * (a @ b))), [x, y], [0, 1])
    assert_matches(gx, fx, what="vjp d/dx")
    assert_matches(gy, fy, what="vjp d/dy")


@pytest.mark.parametrize("xs, ys", [((3, 4), (5, 2)), ((3, 4), (5,)), ((3,), (4, 2)), ((30, 20), (21, 30))])
@pytest.mark.parametrize("boundscheck", [True, False])
def test_sizes_that_do_not_match_raise_numpys_value_error(xs, ys, boundscheck):
    x, y = np.ones(xs), np.ones(ys)
    with pytest.raises(ValueError) as expected:
        np.matmul(x, y)
    with pytest.raises(ValueError, match=r"\(at .*test_matmul_frontend.py:\d+:\d+\)") as err:
        adpasses.jit(product, boundscheck=boundscheck)(x, y)
    assert str(expected.value) in str(err.value)


def test_np_dot_of_matrices_that_do_not_align_raises():
    with pytest.raises(ValueError, match=r"shapes not aligned: 4 \(dim 1\) != 5 \(dim 0\)"):
        adpasses.jit(product_dot)(np.ones((3, 4)), np.ones((5, 2)))


def _scalar_operand(x):
    return x @ 2.0


def _three_d(x):
    return x @ x


def _bools(x, n):
    return x @ n


@pytest.mark.parametrize("f, args, message", [
    (_scalar_operand, (np.ones((2, 2)),), "@: both operands must be arrays"),
    (_three_d, (np.ones((2, 2, 2)),), "not 3-D ones; for a stack of matrices write a loop"),
    # int arrays multiply as numpy's (test_numpy_dtypes.py); two bool arrays (numpy: any of ands) do not
    (_bools, (np.ones((2, 2), dtype=bool), np.ones((2, 2), dtype=bool)), "of two bool arrays is not supported"),
])
def test_products_outside_the_language_are_located_errors(f, args, message):
    with pytest.raises(adpasses.CompileError, match=r"test_matmul_frontend.py:\d+:\d+: error: ") as err:
        adpasses.jit(f)(*args)
    assert message in str(err.value)

