"""hessian(f)(x) of small arguments is compiled once per argument shapes
(adpasses/api/forward.py `_static_shapes`, adpasses/transforms/static_entry.py):
Hessians at several shapes of one signature, alternating, against central
differences of the gradient on random inputs; one compilation per shape;
float32, several blocks, 2-D arguments of the same size and other shape,
written arrays, non-contiguous views, threads; the entry's IR and its
shape check."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from finite_diff import assert_matches

import adpasses
from adpasses.api import forward as forward_api


def energy(x):
    rho = 0.0
    for i in range(len(x)):
        rho += math.exp(-3.0 * (x[i] + 1.0)) + x[i] * x[(i + 1) % len(x)] ** 2
    return rho**2 + rho**3 / 3


def coupled(x, y, s):
    t = 0.0
    for i in range(len(x)):
        t += math.sin(x[i] * y[i]) + s * x[i] * x[i] * y[(i + 1) % len(y)]
    return t * t * 0.5 + s * math.exp(0.1 * t)


def grid(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s += math.cos(m[i, j]) * m[i, (j + 1) % m.shape[1]] + m[i, j] ** 2 * m[(i + 1) % m.shape[0], j]
    return s


def scratch_user(x, tmp):
    """Writes tmp (not differentiated): each sweep must start from its contents."""
    for i in range(len(x)):
        tmp[i] = tmp[i] + math.tanh(x[i])
    s = 0.0
    for i in range(len(x)):
        s += tmp[i] * tmp[i] * x[i]
    return s


def hessian_by_differences(f, args, a: int, b: int) -> np.ndarray:
    """Block (a, b): central differences along args[b] of adpasses.grad(f, a)
    (itself checked against differences of f elsewhere)."""
    g = adpasses.grad(f, a)
    x = args[b]
    cols = []
    for idx in np.ndindex(x.shape):
        h = 1e-6 * max(1.0, abs(float(x[idx])))
        up = [v.astype(np.float64) if isinstance(v, np.ndarray) else v for v in args]
        down = [v.copy() if isinstance(v, np.ndarray) else v for v in up]
        up[b][idx] += h
        down[b][idx] -= h
        cols.append((np.asarray(g(*up)) - np.asarray(g(*down))) / (2 * h))
    return np.stack(cols, axis=-1).reshape(args[a].shape + x.shape)


def test_each_shape_compiles_once_and_alternating_shapes_stay_right() -> None:
    rng = np.random.default_rng(1)
    jf = adpasses.jit(energy)
    hess = adpasses.hessian(jf)
    xs = {n: rng.uniform(-0.5, 0.5, n) for n in (3, 9, 40)}
    want = {n: hessian_by_differences(energy, [x], 0, 0) for n, x in xs.items()}
    counts = []
    for n, x in xs.items():
        assert_matches(hess(x), want[n], what=f"n = {n}, first call")
        counts.append(len(jf.compilations))
    assert counts[1] == counts[0] + 1 and counts[2] == counts[1] + 1  # one compilation per shape
    for _ in range(3):  # every order of shapes: each call reaches its own shape's code
        for n in (40, 3, 9, 3):
            H = hess(xs[n])
            assert H.shape == (n, n) and H.dtype == np.float64
            assert_matches(H, want[n], what=f"n = {n}, again")
    assert len(jf.compilations) == counts[-1]
    assert len(hess._shaped) == 3 and len(hess._dispatch.targets) == 2  # fallback + one signature


def test_new_values_of_a_known_shape_use_its_code() -> None:
    rng = np.random.default_rng(2)
    jf = adpasses.jit(energy)
    hess = adpasses.hessian(jf)
    hess(rng.uniform(-0.5, 0.5, 9))
    before = len(jf.compilations)
    for _ in range(4):
        x = rng.uniform(-0.5, 0.5, 9)
        assert_matches(hess(x), hessian_by_differences(energy, [x], 0, 0), what="new point")
    assert len(jf.compilations) == before


def test_float32_stays_float32() -> None:
    x = np.random.default_rng(3).uniform(-0.5, 0.5, 6)
    H32 = adpasses.hessian(energy)(x.astype(np.float32))
    assert H32.dtype == np.float32 and H32.shape == (6, 6)
    np.testing.assert_allclose(H32, hessian_by_differences(energy, [x], 0, 0), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [2, 5])
def test_blocks_of_two_arrays_and_a_float(n: int) -> None:
    rng = np.random.default_rng(10 + n)
    x, y, s = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), 0.7
    H = adpasses.hessian(coupled, (0, 1))(x, y, s)
    for a in range(2):
        for b in range(2):
            assert H[a][b].shape == (n, n)
            assert_matches(H[a][b], hessian_by_differences(coupled, [x, y, s], a, b), what=f"H[{a}][{b}]")


def test_two_d_arguments_of_the_same_size_and_other_shapes() -> None:
    """(3, 4) and (4, 3) have the same signature code and size: each has its
    own code (its Hessian's shape and its loops' bounds differ)."""
    rng = np.random.default_rng(20)
    hess = adpasses.hessian(grid)
    ms = [rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (2, 2))]
    for _ in range(2):
        for m in ms:
            H = hess(m)
            assert H.shape == m.shape + m.shape
            assert_matches(H, hessian_by_differences(grid, [m], 0, 0), what=f"shape {m.shape}")


def test_written_array_is_restored_for_every_sweep_and_left_unchanged() -> None:
    rng = np.random.default_rng(30)
    x, tmp = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 7)
    tmp0 = tmp.copy()
    hess = adpasses.hessian(scratch_user, width=3)  # three sweeps: each restores tmp
    want = hessian_by_differences(scratch_user, [x, tmp], 0, 0)
    for _ in range(2):
        assert_matches(hess(x, tmp), want, what="written tmp")
        assert np.array_equal(tmp, tmp0)


def test_non_contiguous_view() -> None:
    base = np.random.default_rng(40).uniform(-0.5, 0.5, 12)
    x = base[::2]
    want = hessian_by_differences(energy, [x.copy()], 0, 0)
    hess = adpasses.hessian(energy)
    for _ in range(2):
        assert_matches(hess(x), want, what="strided view")
        assert_matches(hess(x.copy()), want, what="its copy")


def test_read_only_arrays_sharing_memory_after_the_fast_path_exists() -> None:
    """Each gets its own tangent: the Hessian of separate arrays (written
    ones that share memory: test_forward_aliasing)."""
    rng = np.random.default_rng(50)
    x, y = rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 4)
    hess = adpasses.hessian(coupled, (0, 1))
    hess(x, y, 0.5)
    hess(x, y, 0.5)
    got, want = hess(x, x, 0.5), hess(x, x.copy(), 0.5)
    for i in range(2):
        for j in range(2):
            np.testing.assert_array_equal(got[i][j], want[i][j])


def test_calls_from_threads_agree_with_a_single_thread() -> None:
    """The lanes and shadows are on the entry's stack: calls at once don't share them."""
    rng = np.random.default_rng(60)
    hess = adpasses.hessian(energy)
    xs = [rng.uniform(-0.5, 0.5, 9) for _ in range(8)]
    want = [hess(x) for x in xs]
    start = threading.Barrier(4)
    bad: list[int] = []

    def work(t: int) -> None:
        start.wait()
        for r in range(200):
            k = (t + r) % len(xs)
            if not np.array_equal(hess(xs[k]), want[k]):
                bad.append(k)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert bad == []


def test_the_shape_budget_decides() -> None:
    """Small arguments: a plan compiled for their shapes; over the budget
    (the lanes and shadows, or any array): one shape-generic plan."""
    rng = np.random.default_rng(70)
    budget = forward_api.STATIC_SHAPE_BYTES
    jf = adpasses.jit(energy)
    small, large = rng.uniform(-0.5, 0.5, 40), rng.uniform(-0.5, 0.5, 80)
    assert 33 * 40 * 8 <= budget < 33 * 80 * 8  # width 16: 2 * 16 + 1 buffers of n floats
    adpasses.hessian(jf)(small)
    adpasses.hessian(jf)(large)
    shapes = [plan.shapes for plan in jf._jacobian_plans.values()]  # jit(energy) is shared by the tests
    assert ((40,),) in shapes and None in shapes and ((80,),) not in shapes


def test_the_entry_checks_its_shapes() -> None:
    """The compiled entry itself refuses arrays of another shape (the Python
    entry shim compares them with its constant sizes): no call runs the
    code of another shape, whoever calls it."""
    x = np.random.default_rng(80).uniform(-0.5, 0.5, 5)
    jf = adpasses.jit(energy)
    adpasses.hessian(jf)(x)
    (plan,) = [p for p in jf._jacobian_plans.values() if p.shapes == ((5,),)]
    call = plan.body.env["call"]
    H = np.empty((5, 5))
    call(x, H)
    assert_matches(H, hessian_by_differences(energy, [x], 0, 0), what="direct call")
    with pytest.raises(ValueError, match=r"shape \(6,\), expected \(5,\)"):
        call(np.zeros(6), H)
    with pytest.raises(ValueError, match=r"shape \(5, 6\), expected \(5, 5\)"):
        call(x, np.empty((5, 6)))


def test_entry_ir_has_constant_sizes_stack_lanes_and_private_callees() -> None:
    from xdsl.dialects import func, memref

    from adpasses.api.forward import _GradientLayout, _hessian_sweeps, _ShapedDriver, tangent_module

    x = np.zeros(9)
    jf = adpasses.jit(energy)
    layout = _GradientLayout.of(jf, (x,), (0,))
    sweeps, arg_of = _hessian_sweeps((x,), (0,), layout, 9)
    made: dict = {}
    driver = _ShapedDriver(sweeps, made, arg_of, [(0, 0)], ((9,),))
    module, entry, _, _ = tangent_module(jf, (x,), layout.fwd_activity, (), 9, "hessian", driver,
                                         over_gradient=(layout.grad_activity, layout.ret))
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    shaped = funcs[entry]
    assert [str(t) for t in shaped.function_type.inputs.data] == ["memref<9xf64>", "memref<9x9xf64>"]
    allocas = [op for op in shaped.walk() if isinstance(op, memref.AllocaOp)]
    assert len(allocas) == len(sweeps.scratch) == 19  # 9 lanes of x, its shadow, 9 lanes of the shadow
    assert all(str(op.memref.type) == "memref<9xf64>" for op in allocas)
    assert not [op for op in shaped.walk() if isinstance(op, memref.AllocOp)]
    public = [name for name, op in funcs.items() if op.sym_visibility is None or op.sym_visibility.data != "private"]
    assert public == [entry]
