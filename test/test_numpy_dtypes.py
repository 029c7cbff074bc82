"""numpy's dtypes of scalars, as Python + numpy computes them (issue 16):
numpy scalar arguments are strong under NEP 50 (`x32 * np.float64(2.0)` is
float64, `x32 * 2.0` float32), numpy scalar results come back as numpy
scalars of their dtype, matrix products of int arrays have numpy's dtype
and wrap as numpy's do. Every case is compared with the plain Python
function on the same arguments: value AND type (and dtype)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import adpasses
from finite_diff import FLOAT32_ATOL, FLOAT32_RTOL, assert_matches, finite_differences


def same(want: object, got: object) -> bool:
    """Python's and compiled results agree: the same type (a Python float,
    an np.float32, an ndarray of the same dtype and shape) and value (ints
    and bools exactly, floats to rounding)."""
    if type(want) is not type(got):
        return False
    w, g = np.asarray(want), np.asarray(got)
    if w.dtype != g.dtype or w.shape != g.shape:
        return False
    if w.dtype.kind in "iub":
        return bool(np.array_equal(w, g))
    rtol = 1e-6 if w.dtype == np.float32 else 1e-12
    return bool(np.allclose(w, g, rtol=rtol, atol=0.0, equal_nan=True))


def scale(x, s):
    return x * s


def twice(a):
    return a * 2.0


def identity(a):
    return a


def halve_plus(a, b):
    return a / 2 + b


def total(x):
    return x.sum()


def element(a, i):
    return a[i]


def as_float32(s):
    return np.float32(s)


def printed(a):
    print(a, repr(a), f"{a!r}")


X32 = np.array([0.1, 2.5, -3.75], np.float32)
CASES = [
    (scale, (X32, 2.5)),                       # a Python float is weak: float32
    (scale, (X32, np.float64(2.5))),           # an np.float64 is strong: float64
    (scale, (X32, np.float32(0.1))),
    (scale, (X32, 3)), (scale, (X32, np.int64(3))), (scale, (X32, np.int32(3))),
    (scale, (np.arange(3, dtype=np.int32), 2**20)), (scale, (np.arange(3, dtype=np.int32), np.int64(5))),
    (twice, (np.float32(1.5),)), (twice, (np.float64(0.1),)), (twice, (np.int32(3),)), (twice, (1.5,)),
    (identity, (np.float32(0.1),)), (identity, (np.float64(0.1),)), (identity, (np.int32(-7),)),
    (identity, (np.int64(2**40),)), (identity, (np.bool_(True),)), (identity, (True,)), (identity, (3,)),
    (halve_plus, (np.float32(1.25), 2)), (halve_plus, (np.int32(7), np.float32(0.5))),
    (halve_plus, (np.float32(1.25), np.float64(0.1))), (halve_plus, (1.25, np.float32(0.1))),
    (total, (X32,)), (total, (np.array([1.5, 2.0]),)), (total, (np.arange(4, dtype=np.int32),)),
    (element, (np.arange(3, dtype=np.int32), 1)), (element, (X32, 2)), (element, (np.array([True]), 0)),
    (as_float32, (1.1,)), (as_float32, (np.float64(0.1),)),
]


@pytest.mark.parametrize("f, args", CASES, ids=lambda v: getattr(v, "__name__", None) or
                         ",".join(f"{type(a).__name__}" for a in v))
def test_numpy_scalar_arguments_and_results_follow_python(f, args):
    want = f(*args)
    jf = adpasses.jit(f)
    assert same(want, jf(*args)), (want, jf(*args))
    assert same(want, jf(*args))  # again, through the dispatch's fast path


def test_numpy_scalars_print_as_numpy_does(capfd):
    for a in (np.float32(0.1), np.float64(0.1), np.int32(7), np.bool_(False), 0.1, 7):
        printed(a)
        want = capfd.readouterr().out
        adpasses.jit(printed)(a)
        assert capfd.readouterr().out == want


def test_a_callee_keeps_the_kind_of_its_arguments():
    """A compiled callee's parameters are what Python passes: an np.float32
    stays float32 (strong), a Python float is weak."""
    def caller(x, s):
        return scale(x, s), twice(s)

    for s in (np.float32(0.1), 0.1, np.float64(0.1), np.int32(3)):
        want, got = caller(X32, s), adpasses.jit(caller)(X32, s)
        assert all(same(w, g) for w, g in zip(want, got)), (s, want, got)


def test_grad_of_numpy_scalar_arguments_returns_python_floats():
    """grad takes numpy scalars as the Python numbers of their kind and
    returns float derivatives (as before); its value is a Python float."""
    def f(a, x):
        return a * np.sum(x * x)

    x = np.array([0.5, -1.5, 2.0])
    for a in (np.float32(1.5), np.float64(1.5), 1.5):
        value, (da, dx) = adpasses.value_and_grad(f, argnums=(0, 1))(a, x)
        assert type(value) is float and type(da) is float
        assert da == pytest.approx(float(np.sum(x * x)), rel=1e-12)
        np.testing.assert_allclose(dx, 2.0 * float(a) * x, rtol=1e-12)


# -- matrix products of int arrays (numpy's dtypes, int32 wraps) ------------------

def matmul_op(a, b):
    return a @ b


def matmul_fn(a, b):
    return np.matmul(a, b)


def dot_fn(a, b):
    return np.dot(a, b)


RNG = np.random.default_rng(16)
DTYPES = (np.int32, np.int64, np.float32, np.float64, np.bool_)
SHAPES = (((3, 4), (4, 2)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)))


def _array(dtype, shape):
    if dtype is np.bool_:
        return RNG.random(shape) < 0.5
    if dtype is np.int32:  # large: int32 products and sums wrap, as numpy's
        return RNG.integers(-2**31, 2**31 - 1, shape).astype(np.int32)
    if dtype is np.int64:
        return RNG.integers(-1000, 1000, shape).astype(np.int64)
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("f", [matmul_op, matmul_fn, dot_fn])
@pytest.mark.parametrize("da, db", [p for p in itertools.product(DTYPES, DTYPES) if p != (np.bool_, np.bool_)],
                         ids=lambda d: np.dtype(d).name)
def test_matrix_products_of_any_dtypes_follow_numpy(f, da, db):
    for sa, sb in SHAPES:
        a, b = _array(da, sa), _array(db, sb)
        with np.errstate(over="ignore"):
            want = f(a, b)
        got = adpasses.jit(f)(a, b)
        assert same(want, got) or (np.asarray(want).dtype.kind == "f" and type(got) is type(want)
                                   and np.asarray(got).dtype == np.asarray(want).dtype
                                   and np.allclose(got, want, rtol=1e-5, atol=1e-5)), (sa, sb, want, got)


@pytest.mark.parametrize("f", [matmul_op, dot_fn])
def test_matrix_products_of_two_bool_arrays_are_located_errors(f):
    a = np.array([[True, False], [True, True]])
    for x, y in ((a, a), (a[0], a), (a[0], a[1])):
        with pytest.raises(adpasses.CompileError, match=r"test_numpy_dtypes.py:\d+:\d+: error: .*bool"):
            adpasses.jit(f)(x, y)


def mixed_loss(a, w, v):
    return np.sum(np.tanh(a @ w) * v)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_gradient_through_a_product_with_an_int_matrix(dtype):
    a = RNG.integers(-3, 4, (5, 3)).astype(dtype)
    w, v = RNG.standard_normal((3, 2)) * 0.3, RNG.standard_normal((5, 2))
    dw, dv = adpasses.grad(mixed_loss, argnums=(1, 2))(a, w, v)
    for got, want in zip((dw, dv), finite_differences(mixed_loss, [a, w, v], (1, 2))):
        assert_matches(got, want)


# -- the sweep: argument kinds x operators, compiled vs plain Python -------------------

KINDS = {
    "int": 3, "float": 2.5, "bool": True, "np.int32": np.int32(7), "np.int64": np.int64(-4),
    "np.float32": np.float32(1.75), "np.float64": np.float64(0.3), "np.bool_": np.bool_(True),
    "0-d": np.array(1.25), "int32[]": np.array([1, -2, 5], np.int32),
    "float32[]": np.array([0.5, 1.5, -2.25], np.float32), "float64[]": np.array([0.25, -1.0, 3.0]),
}
ARRAYS = ("0-d", "int32[]", "float32[]", "float64[]")
INTS = ("int", "bool", "np.int32", "np.int64", "np.bool_", "int32[]")
BINARY = {"add": "a + b", "sub": "a - b", "mul": "a * b", "div": "a / b", "floordiv": "a // b", "mod": "a % b",
          "pow": "a ** b", "lt": "a < b", "eq": "a == b", "maximum": "np.maximum(a, b)", "max": "max(a, b)",
          "min": "min(a, b)", "where": "np.where(a > 0, a, b)", "matmul": "a @ b"}
UNARY = {"exp": "np.exp(a)", "sqrt": "np.sqrt(a)", "abs": "abs(a)", "np.abs": "np.abs(a)", "neg": "-a",
         "sum": "np.sum(a)", "mean": "np.mean(a)", "math.sin": "math.sin(a)"}


def _refused(op: str, kinds: tuple[str, ...]) -> str | None:
    """What compiled code refuses (a located CompileError) where Python
    gives a value, and why; None where it must compute Python's result."""
    a, b = kinds if len(kinds) == 2 else (kinds[0], None)
    if op in ("sub", "floordiv", "mod", "pow") and {a, b} <= {"bool", "np.bool_"} and "np.bool_" in (a, b):
        return "of an np.bool_ and a bool is not supported"  # numpy: TypeError or int8
    if op == "pow" and a in INTS and b in INTS:
        return "int ** int needs a literal exponent"
    if op == "where" and a not in ARRAYS and b not in ARRAYS:
        return "np.where is not supported"  # of numbers (numpy: a 0-d array)
    if op in ("max", "min") and "0-d" in (a, b):
        return "is an array where a number is needed"  # builtin max of a 0-d array: index it
    if op in ("sum", "mean") and a not in ARRAYS:
        return f"np.{op} is not supported"  # of a number
    if op in ("exp", "sqrt") and a in ("bool", "np.bool_"):
        return "of a bool is not supported"  # numpy: float16
    if op == "neg" and a == "np.bool_":
        return "numpy boolean negative"
    if op == "math.sin" and a == "0-d":
        return "math.sin takes a number, not an array"
    return None


SWEEP_SOURCE = "import math\nimport numpy as np\n\n" + "".join(
    f"def b_{k}(a, b):\n    return {e}\n\n" for k, e in BINARY.items()) + "".join(
    f"def u_{k.replace('.', '_')}(a):\n    return {e}\n\n" for k, e in UNARY.items())


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    import importlib.util

    path = tmp_path_factory.mktemp("dtype_sweep") / "dtype_sweep.py"
    path.write_text(SWEEP_SOURCE)
    spec = importlib.util.spec_from_file_location("dtype_sweep", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check(f, kinds: tuple[str, ...], op: str) -> None:
    args = [KINDS[k] for k in kinds]
    try:
        with np.errstate(all="ignore"):
            want = f(*args)
    except Exception as err:  # noqa: BLE001 - Python's own error is the expected one
        want = err
    refused = _refused(op, kinds)
    try:
        with np.errstate(all="ignore"):
            got = adpasses.jit(f)(*args)
    except adpasses.CompileError as err:
        text = str(err)
        assert "dtype_sweep.py:" in text and ": error: " in text, text  # located
        if refused is not None:
            assert refused in text, (op, kinds, text)
            return
        # Python raises too (an array where a number is needed, ...): a located error is enough
        assert isinstance(want, Exception), (op, kinds, want, text)
        return
    except Exception as err:  # noqa: BLE001
        assert isinstance(want, Exception) and type(err) is type(want), (op, kinds, want, err)
        return
    assert refused is None, (op, kinds, "compiled where refusal expected", got)
    assert not isinstance(want, Exception), (op, kinds, want, got)
    if op in ("max", "min") and kinds[0] != kinds[1]:
        # Python returns one of the two objects, of its own type: compiled
        # code has one result type, their common one (docs/frontend.md)
        assert float(got) == float(want), (op, kinds, want, got)
        return
    assert same(want, got), (op, kinds, want, got)


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_operators_over_argument_kinds(sweep, op):
    f = getattr(sweep, f"b_{op}")
    for kinds in itertools.product(KINDS, KINDS):
        _check(f, kinds, op)


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_functions_over_argument_kinds(sweep, op):
    f = getattr(sweep, f"u_{op.replace('.', '_')}")
    for kind in KINDS:
        _check(f, (kind,), op)


def float32_loss(x, s, w):
    y = np.exp(x * s) * w + np.sqrt(x * x + 1.0)
    return np.sum(y) + np.mean(np.abs(x)) * s


def test_gradients_of_float32_paths_against_central_differences():
    """A float32 array with a Python float and an np.float32 weight: the
    forward computes in float32 (NEP 50), the gradient matches central
    differences of the float64 function to float32 accuracy."""
    x = RNG.standard_normal(6).astype(np.float32)
    for s, w in ((0.7, np.float32(1.5)), (0.7, 1.5)):
        want_value = float32_loss(x, s, w)
        value = adpasses.jit(float32_loss)(x, s, w)
        assert same(want_value, value), (want_value, value)
        dx, ds = adpasses.grad(float32_loss, argnums=(0, 1))(x, s, w)
        fd_x, fd_s = finite_differences(float32_loss, [x.astype(np.float64), float(s), float(w)], (0, 1))
        assert dx.dtype == np.float32
        assert_matches(dx, fd_x, float32=True)
        assert_matches(ds, fd_s, float32=True)


# -- np.argmax / np.argmin ------------------------------------------------------------

def argmax_fn(x):
    return np.argmax(x)


def argmin_fn(x):
    return np.argmin(x)


def arg_methods(x):
    return x.argmax() * 10 + x.argmin()


NAN = np.nan
ARG_CASES = [np.array([1.0, 3.0, 3.0, -1.0]), np.array([2.0, NAN, 5.0, NAN]), np.array([NAN, 1.0]),
             np.array([4.0]), np.array([3, 7, 7, -2], np.int32), np.array([5, 1, 1], np.int64),
             np.array([False, True, True]), np.array([1.5, -2.5, 0.5], np.float32),
             np.arange(12.0).reshape(3, 4)[:, 1], RNG.standard_normal(37)]


@pytest.mark.parametrize("f", [argmax_fn, argmin_fn, arg_methods])
def test_argmax_argmin_follow_numpy(f):
    """The first extreme element, the first NaN if any, np.int64, any dtype and layout."""
    jf = adpasses.jit(f)
    for x in ARG_CASES:
        assert same(f(x), jf(x)), (x, f(x), jf(x))


@pytest.mark.parametrize("f, name", [(argmax_fn, "argmax"), (argmin_fn, "argmin")])
def test_argmax_of_an_empty_array_is_numpys_value_error(f, name):
    with pytest.raises(ValueError, match=rf"^attempt to get {name} of an empty sequence \(at .*test_numpy_dtypes"
                                         r"\.py:\d+:\d+\)"):
        adpasses.jit(f)(np.zeros(0))


def test_argmax_of_a_matrix_is_a_located_error():
    with pytest.raises(adpasses.CompileError, match=r"test_numpy_dtypes.py:\d+:\d+: error: np.argmax is "
                                                    r"supported for 1-D arrays"):
        adpasses.jit(argmax_fn)(np.zeros((2, 2)))


def peak_loss(x):
    return x[np.argmax(x)] * 2.0 + np.sum(x * x)


def test_gradient_through_an_argmax_index():
    x = RNG.standard_normal(7)
    assert_matches(adpasses.grad(peak_loss)(x), finite_differences(peak_loss, [x], (0,))[0])
