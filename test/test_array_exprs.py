"""Whole-array numpy expressions (frontend/array_exprs.py), generically
over a table of expressions in x (2-D or 1-D), y and the weights w:

- forward semantics against numpy: the expression's value written into an
  output array (`out += EXPR`, out of numpy's result shape and dtype) or
  returned (reductions), for float64 and float32, broadcast shapes, empty
  arrays and negative axes;
- reverse mode (`adpasses.grad`) and forward mode (`adpasses.jvp`) of
  `sum(w * EXPR)` against central finite differences of the same function
  run by numpy, on random inputs.

Each expression is compiled from generated source (a module written to a
temporary folder), so the table is the expressions themselves.
"""

from __future__ import annotations

import importlib.util
import itertools
import re

import numpy as np
import pytest

import adpasses
from finite_diff import assert_matches, finite_differences

RNG = np.random.default_rng(7)

# (expression, shape of x, shape of y); y may be unused. Values in (0.2, 1.2).
ELEMENTWISE = [
    ("x * y", (3, 4), (3, 4)),
    ("x * y", (3, 4), (4,)),            # broadcast a row
    ("x - y[:, None]", (3, 4), (3,)),    # a column through None
    ("x - y[np.newaxis, :]", (3, 4), (4,)),
    ("x * y", (3, 4), (1, 4)),          # a size-1 dimension at run time
    ("x * y", (3, 1), (1, 4)),          # both broadcast
    ("2.0 * x + 1", (5,), (5,)),
    ("-x + y / x", (5,), (5,)),
    ("x ** 2 + x ** y", (5,), (5,)),
    ("(x - y) % 0.3 + x // 0.25", (6,), (6,)),
    ("np.exp(x) * np.tanh(y)", (2, 3), (2, 3)),
    ("np.sin(x) + np.cos(x) + np.log(x) + np.sqrt(y)", (4,), (4,)),
    ("np.arctan2(x, y) + np.power(x, y)", (4,), (4,)),
    ("np.maximum(x, y) + np.minimum(x, 0.7)", (4,), (4,)),
    ("np.abs(x - y) + abs(x - 0.5)", (4,), (4,)),
    ("np.where(x > y, x * x, y)", (3, 4), (4,)),
    ("np.clip(x, 0.4, 0.9) * y", (6,), (6,)),
    ("np.sign(x - 0.7) * y", (6,), (6,)),
    ("(x > 0.7) * y + (x <= y)", (6,), (6,)),
    ("np.outer(x, y)", (3,), (4,)),
    ("np.matmul(x, y) + np.exp(x) @ y", (3, 4), (4, 2)),  # matrix products: test_matmul_frontend.py
    ("x @ y - np.dot(y.T, x)", (4,), (4, 3)),
    ("np.cumsum(x * y)", (5,), (5,)),
    ("np.asarray(x) + x.copy() * y + np.copy(y)", (5,), (5,)),
    ("np.exp(x)", (0,), (0,)),          # empty
    ("np.sum(x * y, axis=-1)", (3, 4), (4,)),
    ("x.sum(axis=0) * y", (3, 4), (4,)),
    ("np.mean(x, axis=1) + x.max(axis=-1) + np.min(x, axis=1)", (3, 4), (4,)),
    # masks: & | ^ ~ and np.logical_*, the float tests, bool reductions along an axis
    ("np.where(np.logical_and(x > 0.5, np.logical_not(y > 0.9)) | np.logical_or(x > 1.0, "
     "np.logical_xor(x > y, y > 0.6)) ^ (x > 0.8), x * y, y)", (3, 4), (4,)),
    ("np.where(~np.isnan(x) & np.isfinite(y) & ~np.isinf(x), x * y, 0.0) + np.isnan(y)", (5,), (5,)),
    ("np.any(x > 0.7, axis=0) * y + np.all(x > 0.3, axis=-1).sum() + np.count_nonzero(x > y, axis=0)",
     (3, 4), (4,)),
]

# Scalar results: (expression, shape of x, shape of y).
REDUCTIONS = [
    ("np.sum(np.exp(x))", (7,), (7,)),
    ("x.sum() + np.sum(x * y)", (3, 4), (4,)),
    ("np.mean(x) + x.mean()", (3, 4), (4,)),
    ("np.max(x) + x.min() + np.amax(y) - np.amin(y) + np.min(x)", (3, 4), (3, 4)),
    ("np.prod(x) + np.abs(x).sum()", (5,), (5,)),
    ("np.dot(x, y) + x.dot(y)", (6,), (6,)),
    ("x[np.argmax(y)] * np.sum(x) + x[y.argmin()] - x[np.argmin(x)] + y[x.argmax()]", (6,), (6,)),
    ("np.linalg.norm(x - y)", (6,), (6,)),
    ("np.sum(np.exp(x) - 0.5 * x * x)", (0,), (0,)),  # empty sum
    ("x.prod()", (5,), (5,)),
    ("np.any(x > 0.7) * 2.0 + np.all(y > 0.1) * 3.0 + np.count_nonzero(x > y) + (x > 0.5).any() * np.sum(y)"
     " + (y > 0.3).all() * np.sum(x) + np.sum((x > 0.7) + (x > 0.5)) + np.sum((x > 0.4) * (y < 0.9))",
     (3, 4), (4,)),
]

IN_PLACE = [
    # (statements updating x, shape of x, shape of y)
    ("x += y", (3, 4), (4,)),
    ("x *= 2\n    x -= y[:, None]", (3, 4), (3,)),
    ("x /= y", (5,), (5,)),
    ("x += x[::-1] * y", (5,), (5,)),      # reads what it overwrites: computed first, as numpy does
    ("x -= 0.5 * x[:, 0:1] + x.T", (3, 3), (3,)),
]


def _module(tmp_path_factory, name: str, source: str):
    folder = tmp_path_factory.mktemp("array_exprs")
    path = folder / f"{name}.py"
    path.write_text("import numpy as np\n\n" + source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inputs(xs, ys, dtype=np.float64):
    x = RNG.uniform(0.2, 1.2, xs).astype(dtype)
    y = RNG.uniform(0.2, 1.2, ys).astype(dtype)
    return x, y


def _numpy(expr: str, x, y):
    return eval(expr, {"np": np, "x": x, "y": y})  # noqa: S307 - the table's own expressions


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    lines = []
    for k, (expr, _, _) in enumerate(ELEMENTWISE):
        lines += [f"def fwd_{k}(x, y, out):\n    out += {expr}\n",
                  f"def loss_{k}(x, y, w):\n    return np.sum(w * ({expr}))\n"]
    for k, (expr, _, _) in enumerate(REDUCTIONS):
        lines += [f"def red_{k}(x, y):\n    return {expr}\n",
                  f"def redloss_{k}(x, y, w):\n    return w * ({expr})\n"]
    for k, (stmts, _, _) in enumerate(IN_PLACE):
        lines += [f"def upd_{k}(x, y):\n    {stmts}\n",
                  f"def updloss_{k}(x, y, w):\n    z = x.copy()\n    "
                  + re.sub(r"\bx\b", "z", stmts)
                  + "\n    return np.sum(w * z)\n"]
    return _module(tmp_path_factory, "array_expr_kernels", "\n".join(lines))


def _check_derivatives(f, x, y, w, what):
    """grad (reverse) and jvp (forward) of f(x, y, w) in x and y against
    central differences of f run by numpy."""
    fx, fy = finite_differences(f, [x, y, w], [0, 1])
    gx, gy = adpasses.grad(f, argnums=(0, 1))(x.copy(), y.copy(), w)
    assert_matches(gx, fx, what=f"{what}: reverse d/dx")
    assert_matches(gy, fy, what=f"{what}: reverse d/dy")
    tx, ty = RNG.normal(size=x.shape), RNG.normal(size=y.shape)
    value, tangent = adpasses.jvp(f, (x.copy(), y.copy(), w), (tx, ty, None))
    assert value == pytest.approx(f(x.copy(), y.copy(), w), rel=1e-12, abs=1e-12)
    assert tangent == pytest.approx(float(np.sum(fx * tx) + np.sum(fy * ty)), rel=1e-6, abs=1e-8), \
        f"{what}: forward tangent"


@pytest.mark.parametrize("k", range(len(ELEMENTWISE)), ids=[e for e, _, _ in ELEMENTWISE])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_elementwise_values_match_numpy(kernels, k, dtype):
    expr, xs, ys = ELEMENTWISE[k]
    x, y = _inputs(xs, ys, dtype)
    expected = np.asarray(_numpy(expr, x, y))
    out = np.zeros(expected.shape, dtype=expected.dtype if expected.dtype.kind == "f" else np.float64)
    adpasses.jit(getattr(kernels, f"fwd_{k}"))(x, y, out)
    float32 = dtype == np.float32 and expected.dtype == np.float32
    assert_matches(out, expected, float32=dtype == np.float32, what=expr)
    if float32 and expected.size:
        assert out.dtype == np.float32


@pytest.mark.parametrize("k", range(len(ELEMENTWISE)), ids=[e for e, _, _ in ELEMENTWISE])
def test_elementwise_derivatives_match_finite_differences(kernels, k):
    expr, xs, ys = ELEMENTWISE[k]
    if "%" in expr or "//" in expr or "sign" in expr or ">" in expr:
        # piecewise: keep the inputs away from the jumps of floor, sign and the comparisons
        x, y = _inputs(xs, ys)
        x = np.round(x * 8) / 8 + 0.03
        y = np.round(y * 8) / 8 + 0.06
    else:
        x, y = _inputs(xs, ys)
    shape = np.asarray(_numpy(expr, x, y)).shape
    w = RNG.normal(size=shape)
    _check_derivatives(getattr(kernels, f"loss_{k}"), x, y, w, expr)


@pytest.mark.parametrize("k", range(len(REDUCTIONS)), ids=[e for e, _, _ in REDUCTIONS])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reduction_values_match_numpy(kernels, k, dtype):
    expr, xs, ys = REDUCTIONS[k]
    x, y = _inputs(xs, ys, dtype)
    got = adpasses.jit(getattr(kernels, f"red_{k}"))(x, y)
    assert_matches(got, _numpy(expr, x, y), float32=dtype == np.float32, what=expr)


@pytest.mark.parametrize("k", range(len(REDUCTIONS)), ids=[e for e, _, _ in REDUCTIONS])
def test_reduction_derivatives_match_finite_differences(kernels, k):
    expr, xs, ys = REDUCTIONS[k]
    x, y = _inputs(xs, ys)
    _check_derivatives(getattr(kernels, f"redloss_{k}"), x, y, 0.7, expr)


@pytest.mark.parametrize("k", range(len(IN_PLACE)), ids=[s for s, _, _ in IN_PLACE])
def test_in_place_updates_write_the_array(kernels, k):
    stmts, xs, ys = IN_PLACE[k]
    x, y = _inputs(xs, ys)
    expected = x.copy()
    exec(stmts.replace("\n    ", "\n"), {"np": np, "x": expected, "y": y})  # noqa: S102
    got = x.copy()
    adpasses.jit(getattr(kernels, f"upd_{k}"))(got, y)
    assert_matches(got, expected, what=stmts)
    w = RNG.normal(size=xs)
    _check_derivatives(getattr(kernels, f"updloss_{k}"), x, y, w, stmts)


# -- errors at run time and compile time ---------------------------------------------


def _reduction(kernels, expr: str):
    return adpasses.jit(getattr(kernels, f"red_{[e for e, _, _ in REDUCTIONS].index(expr)}"))


def test_shapes_that_do_not_broadcast_raise_numpys_value_error(kernels):
    f = _reduction(kernels, "x.sum() + np.sum(x * y)")
    with pytest.raises(ValueError, match=r"operands could not be broadcast together: a dimension of size 4 "
                                         r"meets one of size 5 .*\(at .*array_expr_kernels.py:\d+:\d+\)"):
        f(np.ones((3, 4)), np.ones(5))


def test_dot_of_vectors_of_different_lengths_raises(kernels):
    f = _reduction(kernels, "np.dot(x, y) + x.dot(y)")
    with pytest.raises(ValueError, match=r"shapes \(6,\) and \(1,\) not aligned"):
        f(np.ones(6), np.ones(1))


def test_in_place_update_by_a_larger_operand_raises(kernels):
    f = adpasses.jit(kernels.upd_0)  # IN_PLACE[0]: x += y
    with pytest.raises(ValueError, match="cannot be broadcast into the array updated in place"):
        f(np.ones((3, 1)), np.ones(4))


def test_max_of_an_empty_array_is_an_error_not_a_number(kernels):
    f = _reduction(kernels, "np.max(x) + x.min() + np.amax(y) - np.amin(y) + np.min(x)")
    with pytest.raises(ValueError, match=r"^zero-size array to reduction operation maximum which has no "
                                         r"identity \(at .*array_expr_kernels.py:\d+:\d+\)"):
        f(np.ones((0, 4)), np.ones((0, 4)))


def _empty_reduction_source(expr: str) -> str:
    return f"def f(x):\n    return {expr}\n"


@pytest.mark.parametrize("expr, shape", [
    ("np.max(x)", (0,)), ("np.min(x)", (0,)), ("x.max()", (2, 0)), ("x.min()", (0, 3)),
    ("np.max(x, axis=1)", (3, 0)), ("np.min(x, axis=1)", (0, 0)), ("np.amax(x, axis=0)", (0, 3)),
    ("np.min(x, axis=-1)", (0, 3)), ("np.max(x, axis=1)", (0, 3)), ("np.min(x, axis=0)", (3, 0)),
])
def test_max_min_of_empty_axes_follow_numpy(tmp_path_factory, expr, shape):
    """numpy raises ValueError exactly when a reduced axis has size 0 (an
    empty result over a non-empty axis is fine): compiled code too, with
    the location, in jit and grad."""
    module = _module(tmp_path_factory, "empty_reductions", _empty_reduction_source(expr))
    x = np.ones(shape)
    try:
        want = module.f(x)
    except ValueError as err:
        want = err
    if isinstance(want, ValueError):
        pattern = re.escape(str(want)) + r" \(at .*empty_reductions\.py:4:\d+\)"
        with pytest.raises(ValueError, match=pattern):
            adpasses.jit(module.f)(x)
        if "axis" not in expr:
            with pytest.raises(ValueError, match=pattern):
                adpasses.grad(module.f)(x)
    else:
        got = adpasses.jit(module.f)(x)
        assert got.shape == want.shape and got.dtype == want.dtype


@pytest.mark.parametrize("source, message", [
    ("def f(x):\n    return x @ 2.0\n", "@: both operands must be arrays"),
    ("def f(x):\n    return np.median(x)\n", "np.median on arrays is not supported"),
    ("def f(x):\n    return math.exp(x)[0]\n", "math.exp takes a number, not an array; use np.exp"),
    ("def f(x):\n    return float(x + 1)\n", "is an array where a number is needed"),
    ("def f(x):\n    return np.sum(x, axis=2)\n", "axis 2 is out of bounds for array of dimension 1"),
    ("def f(x):\n    return x < 1.0 < x\n", "chained comparison of arrays"),
    ("def f(x):\n    return 0.0 < x < 1.0\n", "write the elementwise (0.0 < x) & (x < 1.0)"),
])
def test_unsupported_array_constructs_are_located_errors(tmp_path_factory, source, message):
    module = _module(tmp_path_factory, "array_expr_errors", "import math\n" + source)
    with pytest.raises(adpasses.CompileError, match=r"array_expr_errors.py:\d+:\d+: error: .*") as err:
        adpasses.jit(module.f)(np.ones(3))
    assert message in str(err.value)


def test_a_fused_expression_allocates_one_array_and_a_reduction_none():
    """`out += 2 * np.exp(x) - x` is one linalg.generic, no temporary, for
    arrays that share no memory (the `ad.noalias` version the API compiles
    for them: the frontend's run-time overlap test, for `f(x, x)`, is folded
    away); the sum of an expression allocates nothing (its accumulator is a
    stack slot); the chain is visible in the IR until ad-lower-linalg."""
    from adpasses.frontend import ArrayArg, build_module

    def chain(x, out):
        out += 2.0 * np.exp(x) - x * x

    def total(x):
        z = 2.0 * np.exp(x) - x
        return np.sum(np.exp(x) - x) + z[0]

    module, _ = adpasses.jit(chain).build([np.ones(3), np.ones(3)], noalias=True)
    text = str(module)
    assert text.count("linalg.generic") == 1 and "memref.alloc(" not in text and "ad.overlaps" not in text
    module, _ = build_module(chain, [ArrayArg("float64", 1, True), ArrayArg("float64", 1, True)])
    text = str(module)  # x may be out's memory: tested per call, copied only then
    assert text.count("ad.overlaps") == 1 and text.count("memref.alloc(") == 1
    module, _ = build_module(total, [ArrayArg("float64", 1, True)])
    text = str(module)
    assert text.count("linalg.generic") == 2 and text.count("memref.alloc(") == 1  # z only
    assert '"reduction"' in text


def test_all_kinds_of_entries_are_in_the_table():
    """Every function the frontend handles on arrays appears in the table."""
    from adpasses.frontend.array_exprs import ARRAY_FUNCTIONS, REDUCTIONS as FUNCS

    text = " ".join(e for e, _, _ in itertools.chain(ELEMENTWISE, REDUCTIONS))
    for fn in (*ARRAY_FUNCTIONS, *FUNCS):
        name = "linalg.norm" if fn is np.linalg.norm else fn.__name__
        if name in ("full", "arange", "array"):
            continue  # constructors: test_constructors
        assert f"np.{name}" in text, name


def test_constructors(tmp_path_factory):
    module = _module(tmp_path_factory, "array_ctors", (
        "def f(n, v):\n"
        "    a = np.full(n, v)\n"
        "    b = np.arange(n)\n"
        "    c = np.arange(1.0, 2.0, 0.25)\n"
        "    d = np.full((2, n), 3, dtype=np.float32)\n"
        "    e = np.arange(n, 0, -2)\n"
        "    return np.sum(a * b) + np.sum(c) + np.sum(d) + np.sum(e) + len(c) * 1000 + len(e) * 10000\n"))
    f = adpasses.jit(module.f)
    for n in (0, 1, 5):
        a, b, c = np.full(n, 0.5), np.arange(n), np.arange(1.0, 2.0, 0.25)
        e = np.arange(n, 0, -2)
        expected = (np.sum(a * b) + c.sum() + np.full((2, n), 3, dtype=np.float32).sum() + e.sum()
                    + len(c) * 1000 + len(e) * 10000)
        assert f(n, 0.5) == pytest.approx(expected)
    assert adpasses.grad(module.f, argnums=1)(5, 0.5) == pytest.approx(np.arange(5).sum())
