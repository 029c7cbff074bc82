"""adpasses.grad, value_and_grad, hessian, hvp and jacfwd called inside an
@adpasses.jit function (frontend/derivative_calls.py: ad.autodiff and
ad.fwddiff requests, resolved when the function is built): values against
central finite differences of plain Python on random inputs and against the
Python-level API; argnums (tuples, negative), defaults, float scalars,
float32; arguments left unchanged; a Newton iteration in a compiled loop;
derivatives of functions that call grad (reverse over reverse, third
derivatives); errors at the user's line."""

from __future__ import annotations

import math

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

import adpasses
from adpasses import grad, hessian, hvp, jacfwd, value_and_grad
from adpasses.core.diagnostics import CompileError


def wave(x, s=1.3):
    t = 0.0
    for i in range(len(x)):
        t += math.sin(x[i] * s) * x[(i + 1) % len(x)] + 0.5 * x[i] * x[i] * s
    return t * t * 0.1 + math.exp(0.2 * t)


def smooth_in_place(x, k):
    """Writes its argument: the requests must run it on copies."""
    for i in range(len(x)):
        x[i] = math.tanh(x[i]) + 0.1 * k
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[(i + 1) % len(x)] * x[i]
    return s


def pair(a, w, b):
    """Two arrays (one 2-D) and a float."""
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s += math.cos(a[i, j] * w[j]) * b + a[i, j] * a[i, j] * w[i % len(w)]
    return s * s * 0.5


def gradient_fd(f, args, k):
    return finite_differences(f, list(args), [k])[0]


def _jacobian_of_gradient(f, args, a, b, h=1e-6):
    """d/dx_b of the API's gradient wrt x_a, by central differences."""
    args = list(args)
    x = args[b]
    out = np.zeros(np.shape(args[a]) + x.shape)
    for idx in np.ndindex(x.shape):
        plus, minus = [v.copy() if isinstance(v, np.ndarray) else v for v in args], \
                      [v.copy() if isinstance(v, np.ndarray) else v for v in args]
        plus[b][idx] += h
        minus[b][idx] -= h
        col = (adpasses.grad(f, a)(*plus) - adpasses.grad(f, a)(*minus)) / (2 * h)
        out[(...,) + idx] = col
    return out


# -- grad and value_and_grad ---------------------------------------------------------------


@adpasses.jit
def grad_of_wave(x, s):
    return grad(wave)(x, s)


@adpasses.jit
def grads_of_wave(x, s):
    return grad(wave, argnums=(1, 0))(x, s)


@adpasses.jit
def value_and_grads(a, w, b):
    v, (da, db) = value_and_grad(pair, (0, -1))(a, w, b)
    return v + db + da[0, 1]


@adpasses.jit
def grad_with_default(x):
    return grad(wave)(x)


@pytest.mark.parametrize("seed", range(3))
def test_grad_matches_differences_and_the_api(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 3 + 3 * seed
    x, s = rng.uniform(-1, 1, n), rng.uniform(0.5, 1.5)
    got = grad_of_wave(x, s)
    assert_matches(got, gradient_fd(wave, (x, s), 0), what="grad in jit")
    np.testing.assert_allclose(got, adpasses.grad(wave)(x, s), rtol=1e-13, atol=1e-15)
    ds, dx = grads_of_wave(x, s)
    assert ds == pytest.approx(gradient_fd(wave, (x, s), 1), rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(dx, got, rtol=1e-13, atol=1e-15)
    assert_matches(grad_with_default(x), gradient_fd(wave, (x, 1.3), 0), what="grad with g's default")


def test_value_and_grad_of_two_arrays_and_a_float() -> None:
    rng = np.random.default_rng(5)
    a, w, b = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, 4), 0.8
    v, (da, db) = adpasses.value_and_grad(pair, (0, 2))(a, w, b)
    assert value_and_grads(a, w, b) == pytest.approx(v + db + da[0, 1], rel=1e-13)
    fd_a, fd_b = finite_differences(pair, [a, w, b], [0, 2])
    assert v + db + da[0, 1] == pytest.approx(pair(a, w, b) + fd_b + fd_a[0, 1], rel=1e-6)


@adpasses.jit
def grad_in_place(x):
    return grad(smooth_in_place)(x, 2)


def test_arrays_the_function_writes_are_left_unchanged() -> None:
    rng = np.random.default_rng(10)
    x = rng.uniform(-1, 1, 6)
    x0 = x.copy()
    for _ in range(2):
        got = grad_in_place(x)
        assert np.array_equal(x, x0)
        assert_matches(got, gradient_fd(smooth_in_place, (x, 2), 0), what="grad of a writing function")


@adpasses.jit
def grad32(x):
    return grad(wave)(x, 1.1)


def test_float32_stays_float32() -> None:
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, 5).astype(np.float32)
    got = grad32(x)
    assert got.dtype == np.float32
    assert_matches(got, gradient_fd(wave, (x.astype(np.float64), 1.1), 0), float32=True, what="float32")


# -- hessian, hvp and jacfwd: forward sweeps ----------------------------------------------


@adpasses.jit
def hessian_of_wave(x, s):
    return hessian(wave)(x, s)


@adpasses.jit
def hessian_blocks(a, w, b):
    H = hessian(pair, (0, 1))(a, w, b)  # H[i][j]: the block of arguments i, j
    return H[0][0], H[0][1], H[1][0], H[1][1]


@adpasses.jit
def hvp_of_wave(x, s, v):
    return hvp(wave)(x, s, v)


@adpasses.jit
def jacfwd_of_pair(a, w, b):
    return jacfwd(pair, (0, 1))(a, w, b)


@pytest.mark.parametrize("seed", range(2))
def test_hessian_matches_differences_of_the_gradient(seed: int) -> None:
    rng = np.random.default_rng(20 + seed)
    x, s = rng.uniform(-1, 1, 4 + seed), rng.uniform(0.5, 1.5)
    got = hessian_of_wave(x, s)
    assert got.shape == (len(x), len(x))
    assert_matches(got, _jacobian_of_gradient(wave, (x, s), 0, 0), what="hessian in jit")
    np.testing.assert_allclose(got, adpasses.hessian(wave)(x, s), rtol=1e-12, atol=1e-14)
    v = rng.normal(size=len(x))
    np.testing.assert_allclose(hvp_of_wave(x, s, v), got @ v, rtol=1e-12, atol=1e-14)


def test_hessian_blocks_of_a_matrix_and_a_vector() -> None:
    rng = np.random.default_rng(30)
    a, w, b = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, 3), 0.6
    flat = hessian_blocks(a, w, b)
    got = (flat[:2], flat[2:])
    want = adpasses.hessian(pair, (0, 1))(a, w, b)
    for i in range(2):
        for j in range(2):
            assert got[i][j].shape == want[i][j].shape
            np.testing.assert_allclose(got[i][j], want[i][j], rtol=1e-12, atol=1e-14)
            assert_matches(got[i][j], _jacobian_of_gradient(pair, (a, w, b), (0, 1)[i], (0, 1)[j]),
                           what=f"block {i}{j}")


def test_jacfwd_of_two_arrays() -> None:
    rng = np.random.default_rng(40)
    a, w, b = rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, 2), 1.2
    da, dw = jacfwd_of_pair(a, w, b)
    fd_a, fd_w = finite_differences(pair, [a, w, b], [0, 1])
    assert_matches(da, fd_a, what="jacfwd, 2-D")
    assert_matches(dw, fd_w, what="jacfwd, 1-D")
    api_a, api_w = adpasses.jacfwd(pair, (0, 1))(a, w, b)
    np.testing.assert_allclose(da, api_a, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(dw, api_w, rtol=1e-13, atol=1e-15)


@adpasses.jit
def hessian_in_lanes(x, s):
    return hessian(wave, width=3)(x, s)


@adpasses.jit
def hessian_blocks_in_lanes(a, w, b):
    H = hessian(pair, (1, 0), width=4)(a, w, b)
    return H[0][0], H[0][1], H[1][0], H[1][1]


def test_hessian_in_vector_mode_lanes_past_the_end() -> None:
    """width=3 over 5 and 7 inputs: the last sweep has lanes past the end,
    which seed nothing and are not stored; blocks of a 2-D array (6
    elements) in lanes of 4."""
    rng = np.random.default_rng(43)
    for n in (5, 7):
        x, s = rng.uniform(-1, 1, n), 0.8
        np.testing.assert_allclose(hessian_in_lanes(x, s), adpasses.hessian(wave)(x, s), rtol=1e-12, atol=1e-14)
    a, w, b = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, 3), 0.6
    got = hessian_blocks_in_lanes(a, w, b)
    want = adpasses.hessian(pair, (1, 0))(a, w, b)
    for i, block in enumerate((want[0][0], want[0][1], want[1][0], want[1][1])):
        np.testing.assert_allclose(got[i], block, rtol=1e-12, atol=1e-14)


@adpasses.jit
def hessian_in_place(x):
    return hessian(smooth_in_place)(x, 1)


def test_hessian_of_a_writing_function_leaves_its_argument() -> None:
    rng = np.random.default_rng(41)
    x = rng.uniform(-1, 1, 5)
    x0 = x.copy()
    got = hessian_in_place(x)
    assert np.array_equal(x, x0)
    np.testing.assert_allclose(got, adpasses.hessian(smooth_in_place)(x, 1), rtol=1e-12, atol=1e-14)
    assert_matches(got, _jacobian_of_gradient(smooth_in_place, (x, 1), 0, 0), what="hessian, writing f")


@adpasses.jit
def hessian32(x):
    return hessian(wave)(x, 0.9)


def test_hessian_float32() -> None:
    x = np.random.default_rng(42).uniform(-1, 1, 4)
    got = hessian32(x.astype(np.float32))
    assert got.dtype == np.float32
    assert_matches(got, adpasses.hessian(wave)(x, 0.9), float32=True, what="float32 hessian")


def test_a_vector_of_another_shape_stops_the_call() -> None:
    with pytest.raises(ValueError):
        hvp_of_wave(np.ones(4), 1.0, np.ones(3))


# -- a Newton iteration in a compiled loop ------------------------------------------------


def rosenbrock(x):
    return (1.0 - x[0]) ** 2 + 10.0 * (x[1] - x[0] * x[0]) ** 2 + 0.1 * math.cos(x[0] + x[1])


@adpasses.jit
def newton(x0, steps):
    x = x0.copy()
    for it in range(steps):
        g = grad(rosenbrock)(x)
        H = hessian(rosenbrock)(x)
        det = H[0, 0] * H[1, 1] - H[0, 1] * H[1, 0]
        x[0] -= (H[1, 1] * g[0] - H[0, 1] * g[1]) / det
        x[1] -= (H[0, 0] * g[1] - H[1, 0] * g[0]) / det
    return x


def test_newton_iteration_matches_the_python_loop() -> None:
    x0 = np.array([-0.3, 0.4])
    x = x0.copy()
    for _ in range(20):
        g, H = adpasses.grad(rosenbrock)(x), adpasses.hessian(rosenbrock)(x)
        x = x - np.linalg.solve(H, g)
    got = newton(x0, 20)
    np.testing.assert_allclose(got, x, rtol=1e-12, atol=1e-14)
    assert np.linalg.norm(adpasses.grad(rosenbrock)(got)) < 1e-10  # converged: the minimum


# -- derivatives of functions that call grad ------------------------------------------------


@adpasses.jit
def mixed(x, s):
    g = grad(wave)(x, s)
    return g[0] * g[1] + g[2] * s


def test_grad_of_a_function_calling_grad() -> None:
    """Reverse over reverse: against differences of the compiled function and
    against the same expression from the API's Hessian."""
    rng = np.random.default_rng(50)
    x, s = rng.uniform(-1, 1, 5), 0.7
    got = adpasses.grad(mixed)(x, s)
    assert_matches(got, gradient_fd(mixed, (x, s), 0), what="grad of grad")
    H, g = adpasses.hessian(wave)(x, s), adpasses.grad(wave)(x, s)
    np.testing.assert_allclose(got, H[0] * g[1] + g[0] * H[1] + H[2] * s, rtol=1e-10, atol=1e-12)
    ds = adpasses.grad(mixed, 1)(x, s)
    assert ds == pytest.approx(gradient_fd(mixed, (x, s), 1), rel=1e-6, abs=1e-8)


def test_hessian_and_jvp_of_a_function_calling_grad() -> None:
    rng = np.random.default_rng(51)
    x, s, u = rng.uniform(-1, 1, 4), 0.9, rng.normal(size=4)
    H = adpasses.hessian(mixed)(x, s)  # third derivatives of wave
    assert_matches(H, _jacobian_of_gradient(mixed, (x, s), 0, 0), what="hessian of a grad caller")
    value, tangent = adpasses.jvp(mixed, (x, s), (u, None))
    assert value == pytest.approx(mixed(x, s), rel=1e-13)
    assert tangent == pytest.approx(adpasses.grad(mixed)(x, s) @ u, rel=1e-10)


@adpasses.jit
def trace_of_hessian(x, s):
    H = hessian(wave)(x, s)
    t = 0.0
    for i in range(len(x)):
        t += H[i, i]
    return t


@adpasses.jit
def squared_hvp(x, v):
    w = hvp(wave)(x, 1.1, v)
    return np.sum(w * w)


@adpasses.jit
def sum_of_jacfwd(x):
    return np.sum(jacfwd(wave)(x, 0.7))


@pytest.mark.parametrize("f, extra", [(trace_of_hessian, (0.9,)), (squared_hvp, None), (sum_of_jacfwd, ())])
def test_grad_of_functions_calling_hessian_hvp_jacfwd(f, extra) -> None:
    """Reverse over forward over reverse (third derivatives), against
    differences of the compiled function."""
    rng = np.random.default_rng(52)
    x = rng.uniform(-1, 1, 4)
    args = (x, rng.normal(size=4)) if extra is None else (x, *extra)
    assert_matches(adpasses.grad(f)(*args), gradient_fd(f, args, 0), what=f"grad of {f.__name__}")


# -- callables made in Python, called in compiled code ------------------------------------

grad_of_wave_made = adpasses.grad(wave)
value_and_grad_made = adpasses.value_and_grad(pair, (0, 2))
hessian_made = adpasses.hessian(wave)
hvp_made = adpasses.hvp(wave)
jacfwd_made = adpasses.jacfwd(pair, 1)


@adpasses.jit
def uses_made_callables(x, s, v, a, w):
    value, (da, db) = value_and_grad_made(a, w, s)
    return (grad_of_wave_made(x, s), hessian_made(x, s), hvp_made(x, s, v), jacfwd_made(a, w, s),
            value + db + da[0, 0])


def test_callables_made_in_python_are_the_same_requests() -> None:
    rng = np.random.default_rng(60)
    x, v, a, w, s = rng.uniform(-1, 1, 4), rng.normal(size=4), rng.uniform(-1, 1, (2, 3)), \
        rng.uniform(-1, 1, 3), 0.8
    got = uses_made_callables(x, s, v, a, w)
    value, (da, db) = value_and_grad_made(a, w, s)
    want = (grad_of_wave_made(x, s), hessian_made(x, s), hvp_made(x, s, v), jacfwd_made(a, w, s),
            value + db + da[0, 0])
    for g, t in zip(got, want):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)


# -- the frontend's IR and errors -------------------------------------------------------------


def test_the_built_function_calls_a_gradient() -> None:
    from xdsl.dialects import func

    from adpasses.dialects.ad import AutodiffOp, FwddiffOp
    from adpasses.frontend import build_module
    from adpasses.frontend.signature import arg_type

    x = np.zeros(3)
    types_ = [arg_type(a, k, p) for k, (a, p) in enumerate(zip((x, 1.0), ("x", "s")))]
    module, _ = build_module(grads_of_wave.py_func, types_)
    (rev,) = [op for op in module.walk() if isinstance(op, AutodiffOp)]
    assert [a.data for a in rev.activity.data] == ["dup", "active"]
    built, _ = adpasses.jit(hessian_of_wave.py_func).build((x, 1.0))
    assert not [op for op in built.walk() if isinstance(op, (AutodiffOp, FwddiffOp))]
    assert [op for op in built.walk() if isinstance(op, func.CallOp)]


def test_the_marks_are_the_frontends() -> None:
    from adpasses.frontend.derivative_calls import GRAD_INTRINSICS

    marks = tuple(f.__adpasses_intrinsic__ for f in (adpasses.grad, adpasses.value_and_grad, adpasses.hessian,
                                                     adpasses.hvp, adpasses.jacfwd))
    assert marks == GRAD_INTRINSICS


def errors_of(tmp_path, source: str, *args: object) -> str:
    """Compile `h` of `source` (a file: compiled functions need their source)."""
    import importlib.util

    path = tmp_path / "user_code.py"
    path.write_text("import math\nimport numpy as np\nfrom adpasses import grad, hessian, hvp, jacfwd\n"
                    "from test_grad_in_jit import wave\n" + source)
    spec = importlib.util.spec_from_file_location("user_code", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    with pytest.raises(CompileError) as info:
        adpasses.jit(module.h)(*args)
    return str(info.value)


@pytest.mark.parametrize("source, message", [
    ("def h(x, s):\n    k = 1\n    return grad(wave, k)(x, s)\n", "argnums must be an int or a tuple of ints"),
    ("def h(x, s):\n    return grad(wave, 2)(x, s)[0]\n", "there is no argument 2"),
    ("def h(x, s):\n    return grad(wave, (0, 0))(x, s)[0]\n", "names argument 0 (x) twice"),
    ("def h(x, s):\n    return grad(wave, memory_limit=10)(x, s)[0]\n", "memory_limit= is not supported"),
    ("def g(x, n):\n    return x[0] * n\n"
     "def h(x, s):\n    return grad(g, 1)(x, 3)\n", "an int) cannot be differentiated"),
    ("def g(x, n):\n    return x[n]\n"
     "def h(x, s):\n    return grad(g)(np.zeros(3, dtype=np.int64), 1)\n", "is an array of i64"),
    ("def g(x, f):\n    return x[0]\n"
     "def h(x, s):\n    return grad(g, 1)(x, None)\n", "known at compile time"),
    ("def h(x, s):\n    return hessian(wave, 1)(x, s)\n", "pass a float as a 1-element array"),
    ("def h(x, s):\n    return jacfwd(wave, 1)(x, s)\n", "jacfwd differentiates float arrays"),
    ("def h(x, s):\n    return hessian(wave, width=0)(x, s)\n", "width must be a positive int"),
    ("def h(x, s):\n    return jacfwd(wave, width=2)(x, s)\n", "width= is not supported in compiled code"),
    ("def h(x, s):\n    return hvp(wave)(x, s, s)\n", "v must be an array of"),
    ("def h(x, s):\n    return hvp(wave, (0, 1))(x, s, x)\n", "argnums must be one int"),
    ("def g(x):\n    x[0] = 1.0\n"
     "def h(x, s):\n    return grad(g)(x)\n", "returning one float; g() returns nothing"),
    ("def h(x, s):\n    return jacfwd(len)(x)\n", "must be an adpasses.jit function"),
    ("import adpasses\ndg = adpasses.grad(wave, memory_limit='1MB')\n"
     "def h(x, s):\n    return dg(x, s)\n", "was made with memory_limit= or strong_zero="),
    ("import adpasses\ndg = adpasses.grad(wave)\n"
     "def h(x, s):\n    return dg(x, s, s, s)\n", "but 4 were given"),
])
def test_errors_name_the_construct_and_the_remedy(tmp_path, source: str, message: str) -> None:
    text = errors_of(tmp_path, source, np.ones(3), 0.5)
    assert message in text
    assert "user_code.py:" in text  # the user's line
