"""adpasses.jvp called inside an @adpasses.jit function (frontend/derivatives.py:
an ad.fwddiff, resolved by ad-forward when the function is built): values
against central finite differences of plain Python, on random inputs;
arguments left unchanged; the caller differentiated by grad (reverse over
forward: H v, also against adpasses.hvp) and by jvp (forward over forward);
loops, 2-D and float32 arrays, defaults, constant arguments; errors at the
user's line."""

from __future__ import annotations

import math

import numpy as np
import pytest
from finite_diff import assert_matches

import adpasses
from adpasses import jvp
from adpasses.core.diagnostics import CompileError


def wave(x, s):
    t = 0.0
    for i in range(len(x)):
        t += math.sin(x[i] * s) * x[(i + 1) % len(x)] + 0.5 * x[i] * x[i] * s
    return t * t * 0.1 + math.exp(0.2 * t)


def smooth_in_place(x, k):
    """Writes its argument: jvp must run it on copies."""
    for i in range(len(x)):
        x[i] = math.tanh(x[i]) + 0.1 * k
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[(i + 1) % len(x)]
    return s


def grid(m, scale=2.0):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s += scale * math.cos(m[i, j]) * m[i, (j + 1) % m.shape[1]]
    return s


def directional(f, args, tangents, h=1e-6):
    """d/dt f(args + t tangents) at 0 by central differences, in plain Python."""
    def at(t):
        return f(*[a + t * d if d is not None else (a.copy() if isinstance(a, np.ndarray) else a)
                   for a, d in zip(args, tangents)])
    return (at(h) - at(-h)) / (2 * h)


@adpasses.jit
def jvp_of_wave(x, dx, s, ds):
    return jvp(wave, (x, s), (dx, ds))


@adpasses.jit
def weighted(x, dx, s):
    v, d = jvp(wave, (x, s), (dx, None))
    return v + 3.0 * d


@pytest.mark.parametrize("seed", range(3))
def test_value_and_tangent_match_differences(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 3 + seed * 4
    x, dx, s, ds = rng.uniform(-1, 1, n), rng.normal(size=n), rng.uniform(0.5, 1.5), rng.normal()
    v, d = jvp_of_wave(x, dx, s, ds)
    assert v == pytest.approx(wave(x, s), rel=1e-12)
    assert d == pytest.approx(directional(wave, [x, s], [dx, ds]), rel=1e-6, abs=1e-8)
    got = weighted(x, dx, s)
    assert got == pytest.approx(wave(x, s) + 3.0 * directional(wave, [x, s], [dx, 0.0]), rel=1e-6)


@adpasses.jit
def jvp_in_place(x, dx):
    return jvp(smooth_in_place, (x, 2), (dx, None))


def test_arrays_the_function_writes_are_left_unchanged() -> None:
    rng = np.random.default_rng(10)
    x, dx = rng.uniform(-1, 1, 6), rng.normal(size=6)
    x0, dx0 = x.copy(), dx.copy()
    for _ in range(2):
        v, d = jvp_in_place(x, dx)
        assert np.array_equal(x, x0) and np.array_equal(dx, dx0)
        assert v == pytest.approx(smooth_in_place(x.copy(), 2), rel=1e-12)
        assert d == pytest.approx(directional(smooth_in_place, [x, 2], [dx, None]), rel=1e-6, abs=1e-8)


def euler_into(u, out, dt):
    """Writes out, an argument whose tangent the caller leaves None: derivatives
    still flow through it (the API's jvp gives it a zero tangent too)."""
    for i in range(len(u)):
        out[i] = u[i] + dt * math.sin(u[i]) * u[(i + 1) % len(u)]
    s = 0.0
    for i in range(len(u)):
        s += out[i] * out[i]
    return s


@adpasses.jit
def jvp_into(u, du, out):
    v, d = jvp(euler_into, (u, out, 0.3), (du, None, None))
    return v + 3.0 * d


def test_an_output_array_without_a_tangent_gets_a_zero_one() -> None:
    """A float array g writes, given None: dup with a zero tangent, not a
    CompileError asking for adpasses.Duplicated (a marker jvp does not take)."""
    rng = np.random.default_rng(40)
    u, du = rng.uniform(-1, 1, 5), rng.normal(size=5)
    out = np.full(5, 7.0)
    got = jvp_into(u, du, out)
    assert np.array_equal(out, np.full(5, 7.0))
    d = directional(euler_into, [u, np.zeros(5), 0.3], [du, None, None])
    assert got == pytest.approx(euler_into(u, np.zeros(5), 0.3) + 3.0 * d, rel=1e-6)
    assert got == pytest.approx(sum(adpasses.jvp(euler_into, (u, np.zeros(5), 0.3), (du, None, None))
                                    * np.array([1.0, 3.0])), rel=1e-12)
    g = adpasses.grad(jvp_into)(u, du, out)  # reverse over forward through the zero tangent
    fd = np.array([directional(lambda y: jvp_into(y, du, np.zeros(5)), [u], [e]) for e in np.eye(5)])
    assert_matches(g, fd, what="grad of the compiled jvp with a written argument")


@adpasses.jit
def slope(x, v):
    return jvp(wave, (x, 1.3), (v, 0.0))[1]


def test_grad_of_a_jvp_is_the_hessian_times_v() -> None:
    """grad_x <grad f(x), v> = H v: reverse over forward."""
    rng = np.random.default_rng(20)
    x, v = rng.uniform(-1, 1, 5), rng.normal(size=5)
    hv = adpasses.grad(slope)(x, v)
    fd = np.array([directional(lambda y: slope(y, v), [x], [e]) for e in np.eye(5)])
    assert_matches(hv, fd, what="grad of the compiled jvp")
    w = adpasses.hvp(lambda_free_wave)(x, v)
    assert_matches(hv, w, what="against hvp (forward over reverse)")


def lambda_free_wave(x):
    return wave(x, 1.3)


def test_jvp_of_a_jvp_is_a_second_directional_derivative() -> None:
    """jvp of the caller along u (forward over forward): u^T H v."""
    rng = np.random.default_rng(30)
    x, v, u = rng.uniform(-1, 1, 4), rng.normal(size=4), rng.normal(size=4)
    value, second = adpasses.jvp(slope, (x, v), (u, None))
    assert value == pytest.approx(slope(x, v), rel=1e-12)
    assert second == pytest.approx(directional(lambda y: slope(y, v), [x], [u]), rel=1e-6, abs=1e-8)
    assert second == pytest.approx(u @ adpasses.hessian(lambda_free_wave)(x) @ v, rel=1e-9)


@adpasses.jit
def column_slopes(m, out):
    """The directional derivative of grid along each unit matrix, in a loop."""
    e = np.zeros(m.shape)
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            e[i, j] = 1.0
            out[i, j] = jvp(grid, (m,), (e,))[1]
            e[i, j] = 0.0


def test_in_a_loop_with_two_d_arrays_and_a_default() -> None:
    rng = np.random.default_rng(40)
    m = rng.uniform(-1, 1, (3, 4))
    out = np.empty((3, 4))
    column_slopes(m, out)
    assert_matches(out, adpasses.grad(grid)(m), what="jvp along each unit matrix")


@adpasses.jit
def jvp32(x, dx):
    return jvp(lambda_free_wave, (x,), (dx,))[1]


def test_float32() -> None:
    rng = np.random.default_rng(50)
    x, dx = rng.uniform(-1, 1, 5), rng.normal(size=5)
    got = jvp32(x.astype(np.float32), dx.astype(np.float32))
    assert got == pytest.approx(directional(lambda_free_wave, [x], [dx]), rel=1e-4, abs=1e-4)


def test_a_tangent_of_another_shape_stops_the_call() -> None:
    x = np.ones(4)
    with pytest.raises(ValueError):
        jvp_of_wave(x, np.ones(3), 1.0, 0.0)


def test_the_mark_is_the_frontends() -> None:
    from adpasses.frontend.derivatives import JVP_INTRINSIC

    assert adpasses.jvp.__adpasses_intrinsic__ == JVP_INTRINSIC


def test_the_built_function_calls_a_tangent_function() -> None:
    """The frontend emits ad.fwddiff (dup x, const s: the None tangent);
    build() leaves a call of the generated tangent function."""
    from xdsl.dialects import func

    from adpasses.dialects.ad import FwddiffOp
    from adpasses.frontend import build_module
    from adpasses.frontend.signature import arg_type

    x = np.zeros(3)
    types_ = [arg_type(a, k, p) for k, (a, p) in enumerate(zip((x, x, 1.0), ("x", "dx", "s")))]
    module, name = build_module(weighted.py_func, types_)
    (fwd,) = [op for op in module.walk() if isinstance(op, FwddiffOp)]
    assert [a.data for a in fwd.activity.data] == ["dup", "const"]
    assert [a.data for a in fwd.ret_activity.data] == ["dup"]
    built, _ = adpasses.jit(weighted.py_func).build((x, x, 1.0))
    assert not [op for op in built.walk() if isinstance(op, FwddiffOp)]
    callees = [op.callee.root_reference.data for op in built.walk() if isinstance(op, func.CallOp)]
    assert any("_fwd_dc_d" in c for c in callees)


def errors_of(tmp_path, source: str, *args: object) -> str:
    """Compile `h` of `source` (a file: compiled functions need their source)."""
    import importlib.util

    path = tmp_path / "user_code.py"
    path.write_text("import math\nimport numpy as np\nfrom adpasses import jvp\n"
                    "from test_jvp_in_jit import wave\n" + source)
    spec = importlib.util.spec_from_file_location("user_code", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    with pytest.raises(CompileError) as info:
        adpasses.jit(module.h)(*args)
    return str(info.value)


@pytest.mark.parametrize("source, message", [
    ("def h(x, s):\n    p = (x, s)\n    return jvp(wave, p, (x, 1.0))[1]\n", "must be a tuple written out"),
    ("def h(x, s):\n    return jvp(wave, (x, s), (x,))[1]\n", "2 primals and 1 tangents"),
    ("def h(x, s):\n    return jvp(wave, (x, s), tangents=(x, 1.0))[1]\n", "in compiled code, call jvp"),
    ("def h(x, s):\n    return jvp(wave, (x, s), (s, 1.0))[1]\n", "must be an array of f64 with 1 dimension"),
    ("def h(x, s):\n    return jvp(wave, (x, s), (x, x))[1]\n", "must be a number"),
    ("def g(x, n):\n    return x[0] * n\n"
     "def h(x, s):\n    return jvp(g, (x, 3), (x, 1))[1]\n", "is an int: it has no tangent"),
    ("def g(x):\n    x[0] = 1.0\n"
     "def h(x, s):\n    return jvp(g, (x,), (x,))\n", "returning one float"),
    ("def h(x, s):\n    return jvp(len, (x,), (x,))\n", "must be an adpasses.jit function"),
    ("def h(x, s):\n    return jvp(wave, (x, s, s), (x, 1.0, 1.0))[1]\n", "but 3 were given"),
])
def test_errors_name_the_construct_and_the_remedy(tmp_path, source: str, message: str) -> None:
    text = errors_of(tmp_path, source, np.ones(3), 0.5)
    assert message in text
    assert "user_code.py:" in text  # the user's line
