"""Parallel loops (issue 17 item 2, docs/parallel.md): prange and
jit(parallel=True) run loops proven independent on several threads; their
gradients are checked against central finite differences; loops whose
iterations may depend on each other (through memory, a view, a call, a
shared accumulator, a product) are rejected (prange) or run serially."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from xdsl.dialects import func

import adpasses
from adpasses.native import runtime
from adpasses.transforms.parallelize import parallel_report

import parallel_kernels as pk


@pytest.fixture(autouse=True)
def threads():
    """3 threads, and one chunk per thread however small the loop (the
    tests' arrays are small; the minimum work per chunk has tests of its own)."""
    before = adpasses.get_num_threads()
    adpasses.set_num_threads(3)
    work = runtime.set_parallel_min_work(1)
    yield
    adpasses.set_num_threads(before)
    runtime.set_parallel_min_work(work)


def central_fd(f, args, k, eps=1e-6):
    x = args[k]
    g = np.zeros_like(x)
    for j in range(x.size):
        plus = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        minus = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        plus[k].flat[j] += eps
        minus[k].flat[j] -= eps
        g.flat[j] = (f(*plus) - f(*minus)) / (2 * eps)
    return g


def gradient_report(jf, args, activity):
    """(location, problem) of each loop marked parallel in the gradient."""
    g = jf.gradient(list(args), activity, False, True)
    f = next(op for op in g.module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == g.gradient_name)
    return parallel_report(f)


def primal_report(jf, args):
    module, name = jf.build(list(args), noalias=True)
    f = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    return parallel_report(f)


# -- primal ------------------------------------------------------------------------------


def test_prange_loop_writes_every_element_and_sums():
    rng = np.random.default_rng(0)
    x = rng.random(10_007)
    y = np.zeros_like(x)
    s = pk.scale_sum(x, y)
    assert np.array_equal(y, 2.0 * x)
    assert s == pytest.approx(x.sum(), rel=1e-12)
    assert primal_report(pk.scale_sum, (x, y)) == [(primal_report(pk.scale_sum, (x, y))[0][0], None)]


def test_sums_are_deterministic_for_a_thread_count_and_serial_with_one_thread():
    x = np.random.default_rng(1).random(100_003) * 1e3
    y = np.zeros_like(x)
    adpasses.set_num_threads(1)
    assert pk.scale_sum(x, y) == pk.serial_sum(x)  # one chunk: the serial order, bit for bit
    for threads in (2, 3, 4):
        adpasses.set_num_threads(threads)
        first = pk.scale_sum(x, y)
        assert all(pk.scale_sum(x, y) == first for _ in range(20))
        # chunk sums added in chunk order
        bounds = [t * len(x) // threads + min(t, len(x) % threads) for t in range(threads)]
        bounds = [(t * (len(x) // threads) + min(t, len(x) % threads)) for t in range(threads + 1)]
        expected = 0.0
        for t in range(threads):
            part = 0.0 if t else 0.0
            for v in x[bounds[t]:bounds[t + 1]]:
                part += v
            expected += part
        assert first == expected


def test_fewer_iterations_than_threads_and_empty_loops():
    adpasses.set_num_threads(8)
    for n in (0, 1, 2, 5):
        x = np.arange(n, dtype=float)
        y = np.zeros(n)
        assert pk.scale_sum(x, y) == x.sum()
        assert np.array_equal(y, 2 * x)


def test_integer_sum_reduction_and_rows_with_inner_dependence():
    x = np.random.default_rng(2).standard_normal(5001)
    assert pk.count_positive(x) == int((x > 0).sum())
    X = np.random.default_rng(3).random((37, 11))
    out = np.zeros_like(X)
    pk.rows(X, out)
    ref = np.zeros_like(X)
    for i in range(37):
        acc = 0.0
        for j in range(11):
            acc = acc * 0.5 + X[i, j]
            ref[i, j] = acc
    assert np.allclose(out, ref, rtol=0, atol=1e-14)


def test_num_threads_is_checked():
    for bad in (0, -1, 2.0, True, 10**6, np.float64(2.0), "2"):
        with pytest.raises(ValueError, match="num_threads"):
            adpasses.set_num_threads(bad)
    before = adpasses.get_num_threads()
    try:
        for n in np.arange(1, 3):  # numpy integers are counts too
            adpasses.set_num_threads(n)
            assert adpasses.get_num_threads() == n
    finally:
        adpasses.set_num_threads(before)


def test_bad_thread_variable_warns_and_compiles(tmp_path):
    """ADPASSES_NUM_THREADS=abc must not stop every compiled function (the
    runtime loads for all of them): a warning, the cores, correct results."""
    script = (
        "import warnings, numpy as np, adpasses, os\n"
        "warnings.simplefilter('always')\n"
        "@adpasses.jit\n"
        "def f(x):\n"
        "    s = 0.0\n"
        "    for i in adpasses.prange(len(x)):\n"
        "        s += x[i] * x[i]\n"
        "    return s\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    print(f(np.arange(5.0)), adpasses.grad(f)(np.arange(3.0)).tolist())\n"
        "print([str(w.message) for w in seen if issubclass(w.category, RuntimeWarning)])\n"
        "print(adpasses.get_num_threads() == (os.cpu_count() or 1))\n")
    env = dict(os.environ, ADPASSES_NUM_THREADS="abc")
    path = tmp_path / "bad_threads.py"
    path.write_text(script)
    run = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "30.0 [0.0, 2.0, 4.0]"
    assert "ADPASSES_NUM_THREADS='abc': give a positive integer" in lines[1]
    assert lines[2] == "True"


# -- loops that must not run in parallel ----------------------------------------------------


@pytest.mark.parametrize("kernel, args, words", [
    (pk.dependent_memory, lambda: (np.ones(10),), "x[i - 1]"),
    (pk.dependent_view, lambda: (np.ones(10),), "may touch"),
    (pk.dependent_call, lambda: (np.ones(10),), "may touch"),
    (pk.shared_accumulator, lambda: (np.ones(10), np.zeros(1)), "acc[0]"),
    (pk.product_reduction, lambda: (np.ones(10),), "not a sum reduction"),
    (pk.prints, lambda: (np.ones(3),), "prints"),
    (pk.next_row_read, lambda: (np.ones((4, 3)),), "X[i + 1"),
    (pk.conditional_reset, lambda: (np.ones(10),), "not a sum reduction"),
    (pk.partial_sum_read, lambda: (np.ones(10), np.zeros(10)), "not a sum reduction"),
    (pk.inner_partial_sum_read, lambda: (np.ones((4, 3)), np.zeros((4, 3))), "not a sum reduction"),
    (pk.conditional_on_sum, lambda: (np.ones(10),), "not a sum reduction"),
], ids=["memory", "view", "call", "accumulator", "product", "print", "next-row", "conditional-reset",
        "partial-sum-read", "inner-partial-sum-read", "condition-on-sum"])
def test_prange_loop_that_may_depend_on_itself_is_an_error_at_its_line(kernel, args, words):
    jf = adpasses.jit(kernel)
    with pytest.raises(adpasses.CompileError) as err:
        jf(*args())
    text = str(err.value)
    assert "this prange loop cannot run in parallel" in text
    assert "parallel_kernels.py:" in text and "use range" in text
    assert words in text


@pytest.mark.parametrize("kernel, words", [
    (pk.prange_as_value, "prange is only allowed as the iterable of a for loop"),
    (pk.prange_in_enumerate, "prange is only allowed as the iterable of a for loop"),
    (pk.prange_continue, "a prange loop cannot continue"),
    (pk.prange_return, "a prange loop cannot return from the function"),
], ids=["value", "enumerate", "continue", "return"])
def test_prange_misuse_is_an_error_at_its_line_that_names_it(kernel, words):
    with pytest.raises(adpasses.CompileError) as err:
        adpasses.jit(kernel)(np.linspace(0, 1, 10))
    text = str(err.value)
    assert "parallel_kernels.py:" in text
    assert words in text


def test_parallel_true_runs_dependent_loops_serially_and_independent_ones_in_parallel():
    x = np.random.default_rng(4).random(1000)
    dep = adpasses.jit(pk.auto_dependent, parallel=True)
    assert dep(x.copy()) == pytest.approx(np.cumsum(x)[-1], rel=1e-12)
    [(where, problem)] = primal_report(dep, (x.copy(),))
    assert problem is not None and "x[i - 1]" in problem
    ind = adpasses.jit(pk.auto_independent, parallel=True)
    y = np.zeros_like(x)
    assert ind(x, y) == pytest.approx((x * x).sum(), rel=1e-12)
    assert np.array_equal(y, x * x)
    assert [p for _, p in primal_report(ind, (x, y))] == [None]
    g = adpasses.grad(ind)(x, y)
    assert np.allclose(g, 2 * x, rtol=1e-14)  # hand derivation
    assert np.allclose(g, central_fd(ind, [x, y.copy()], 0), rtol=1e-5, atol=1e-6)


# -- rows, inner-loop sums, conditional sums ------------------------------------------------


def test_row_reductions_products_and_row_stores_run_in_parallel():
    rng = np.random.default_rng(11)
    X, A = rng.standard_normal((301, 7)), rng.standard_normal((3, 7))
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        out = np.zeros(301)
        pk.row_sums(X, out)
        assert np.allclose(out, X.sum(axis=1), rtol=1e-14, atol=1e-14)
        out = np.zeros(301)
        s = pk.row_matvec(A, X, out)
        V = X @ A.T
        assert np.allclose(out, V[:, 0], rtol=1e-13, atol=1e-13)
        assert s == pytest.approx(float((V[:, 0] * V[:, 1]).sum()), rel=1e-12)
        Y = np.zeros_like(X)
        pk.row_store(X, Y)
        assert np.allclose(Y, np.sin(X) * X[:, :1], rtol=1e-14, atol=1e-15)
    for kernel, args in ((pk.row_sums, (X, np.zeros(301))), (pk.row_matvec, (A, X, np.zeros(301))),
                         (pk.row_store, (X, np.zeros_like(X)))):
        assert [p for _, p in primal_report(kernel, args)] == [None], kernel


def test_inner_loop_and_conditional_sums_match_serial_and_numpy():
    rng = np.random.default_rng(12)
    X, x = rng.standard_normal((203, 9)), rng.standard_normal(10_001) * 2
    positive, below = x > 0, x < -1
    expected_conditional = float((x[positive] ** 2).sum() - np.sin(x[below]).sum()) ** 2
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        assert pk.inner_loop_sum(X) == pytest.approx(pk.serial_inner_loop_sum(X), rel=1e-12)
        assert pk.conditional_sum(x) == pytest.approx(expected_conditional, rel=1e-11)
        assert pk.private_inner_sum(X) == pytest.approx(float(np.sqrt((X * X).sum(axis=1)).sum()), rel=1e-12)
        first = pk.conditional_sum(x)
        assert all(pk.conditional_sum(x) == first for _ in range(5))  # deterministic per thread count
    for kernel, args in ((pk.inner_loop_sum, (X,)), (pk.conditional_sum, (x,)), (pk.private_inner_sum, (X,))):
        assert [p for _, p in primal_report(kernel, args)] == [None], kernel


def test_gradients_of_row_kernels_match_finite_differences():
    """Row reductions and A @ X[i, :] differentiated on 1, 2, 3 threads; the
    row energy's gradient loop (loop-local) is proven parallel, also for a
    strided X (a contiguous dX: the broadcast's shadow uses dX's layout)."""
    rng = np.random.default_rng(17)
    X, A = rng.standard_normal((9, 5)) * 0.5, rng.standard_normal((3, 5))
    strided = (rng.standard_normal((9, 10)) * 0.5)[:, ::2]
    energy = lambda X: pk.row_energy(X, np.zeros(X.shape[0]))  # noqa: E731
    matvec = lambda A, X: pk.row_matvec(A, X, np.zeros(X.shape[0]))  # noqa: E731
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        for data in (X, strided):
            g = adpasses.grad(pk.row_energy)(data, np.zeros(9))
            assert np.allclose(g, central_fd(energy, [np.ascontiguousarray(data)], 0), rtol=1e-6, atol=1e-7)
        gA, gX = adpasses.grad(pk.row_matvec, (0, 1))(A, X, np.zeros(9))
        assert np.allclose(gA, central_fd(matvec, [A, X], 0), rtol=1e-6, atol=1e-7)
        assert np.allclose(gX, central_fd(matvec, [A, X], 1), rtol=1e-6, atol=1e-7)
    problems = [p for _, p in gradient_report(pk.row_energy, (X, np.zeros(9)), ("dup", "const"))]
    assert problems == [None], problems


@pytest.mark.parametrize("kernel", [pk.inner_loop_sum, pk.inner_loop_sum_squared, pk.private_inner_sum],
                         ids=["inner-sum-local", "inner-sum-separate-reverse", "private-inner-sum"])
def test_gradient_of_inner_loop_sums_matches_finite_differences_and_is_parallel(kernel):
    X = np.random.default_rng(13).standard_normal((11, 4))
    ref = central_fd(kernel, [X], 0)
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        g = adpasses.grad(kernel)(X)
        assert np.allclose(g, ref, rtol=1e-6, atol=1e-7 * max(1.0, np.abs(ref).max()))
    problems = [p for _, p in gradient_report(kernel, (X,), ("dup",))]
    assert problems and all(p is None for p in problems), problems


def test_gradient_of_conditional_sum_matches_finite_differences_and_is_parallel():
    x = np.random.default_rng(14).standard_normal(40) * 2
    x[np.abs(np.abs(x) - 1.0) < 1e-3] += 0.01  # away from the branches' edges
    x[np.abs(x) < 1e-3] += 0.01
    ref = central_fd(pk.conditional_sum, [x], 0)
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        g = adpasses.grad(pk.conditional_sum)(x)
        assert np.allclose(g, ref, rtol=1e-6, atol=1e-6)
    problems = [p for _, p in gradient_report(pk.conditional_sum, (x,), ("dup",))]
    assert len(problems) == 2 and all(p is None for p in problems), problems  # forward and reverse


# -- gradients ----------------------------------------------------------------------------


def _hand_loss(x, w):
    return w * (np.cos(x) * x + np.sin(x)), np.sin(x) * x


def _hand_loss_squared(x, w):
    s = (w * x * x).sum()
    return 2 * s * 2 * w * x, 2 * s * x * x


@pytest.mark.parametrize("kernel, hand", [(pk.loss, _hand_loss), (pk.loss_squared, _hand_loss_squared)],
                         ids=["local", "separate-reverse"])
def test_gradient_of_prange_loop_matches_finite_differences_and_is_parallel(kernel, hand):
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal(257), rng.standard_normal(257)
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        gx, gw = adpasses.grad(kernel, (0, 1))(x, w)
        hx, hw = hand(x, w)
        assert np.allclose(gx, hx, rtol=1e-12, atol=1e-12) and np.allclose(gw, hw, rtol=1e-12, atol=1e-12)
        scale = max(np.abs(hx).max(), np.abs(hw).max())
        assert np.allclose(gx, central_fd(kernel, [x, w], 0), rtol=1e-5, atol=1e-7 * scale)
        assert np.allclose(gw, central_fd(kernel, [x, w], 1), rtol=1e-5, atol=1e-7 * scale)
    problems = [p for _, p in gradient_report(kernel, (x, w), ("dup", "dup"))]
    assert problems and all(p is None for p in problems)  # forward and reverse loops parallel


def test_gradient_of_rows_energy_matches_finite_differences():
    X = np.random.default_rng(6).standard_normal((13, 5)) * 0.3
    g = adpasses.grad(pk.rows_energy)(X)
    assert np.allclose(g, central_fd(pk.rows_energy, [X], 0), rtol=1e-6, atol=1e-7)


def test_gather_reverse_is_parallel_with_private_copies_and_sums_every_collision():
    """Many iterations hit the same dx[idx[i]]. Adding into dx directly from
    several threads lost updates (forcing it: with 3 threads and 2e6
    iterations on 4 elements, a relative error of 1.6e-3 in one of five
    calls on a loaded 2-core machine); the reverse adds into private copies
    per chunk, reduced in chunk order (transforms/privatize.py)."""
    rng = np.random.default_rng(7)
    n = 2_000_000
    x = rng.standard_normal(4)
    idx = rng.integers(0, 4, n)
    w = rng.standard_normal(n)
    s = float((w * x[idx] ** 2).sum())
    expected = np.zeros(4)
    np.add.at(expected, idx, 2 * s * 2 * w * x[idx])
    first = None
    for _ in range(5):
        gx, gw = adpasses.grad(pk.gather, (0, 2))(x, idx, w)
        assert np.allclose(gx, expected, rtol=1e-9)
        assert np.allclose(gw, 2 * s * x[idx] ** 2, rtol=1e-9)
        if first is None:
            first = gx
        assert np.array_equal(gx, first)  # bit-identical across runs
    report = gradient_report(pk.gather, (x, idx, w), ("dup", "const", "dup"))
    assert [p for _, p in report] == [None, None]  # forward parallel, reverse parallel (private copies)


def test_gather_reverse_bits_do_not_depend_on_threads_and_match_finite_differences():
    """The copies' chunks are fixed (PRIVATE_CHUNKS), not the threads': the
    same bits on 1, 2, 3 threads (the loop-local reverse of a sum returned
    as it is, so no threaded forward sum feeds the adjoints)."""
    rng = np.random.default_rng(15)
    n = 200_003
    x, idx, w = rng.standard_normal(50), rng.integers(-50, 50, n), rng.standard_normal(n)
    expected = np.zeros(50)
    np.add.at(expected, idx, w * np.cos(x[idx]))
    results = []
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        gx = adpasses.grad(pk.gather_sum)(x, idx, w)
        assert np.allclose(gx, expected, rtol=1e-11, atol=1e-12)
        results.append(gx)
    assert all(np.array_equal(r, results[0]) for r in results)
    assert [p for _, p in gradient_report(pk.gather_sum, (x, idx, w), ("dup", "const", "const"))] == [None]
    small_idx, small_w = rng.integers(0, 5, 40), rng.standard_normal(40)  # 40 < 16 * 5: serial
    xs = rng.standard_normal(5)
    for k_idx, k_w in ((small_idx, small_w), (rng.integers(0, 5, 1000), rng.standard_normal(1000))):
        gx = adpasses.grad(pk.gather_sum)(xs, k_idx, k_w)
        assert np.allclose(gx, central_fd(lambda v: pk.gather_sum(v, k_idx, k_w), [xs], 0), rtol=1e-6, atol=1e-7)


def test_gather_into_a_large_shadow_runs_serially_and_checks_bounds():
    """A shadow over PRIVATE_BYTES / PRIVATE_CHUNKS (here 40000 float64):
    the serial loop, right; an index out of bounds is still an IndexError
    at the user's line on both paths."""
    rng = np.random.default_rng(16)
    x = rng.standard_normal(40_000)
    idx = rng.integers(0, 40_000, 1_000_000)
    w = rng.standard_normal(1_000_000)
    expected = np.zeros_like(x)
    np.add.at(expected, idx, w * np.cos(x[idx]))
    assert np.allclose(adpasses.grad(pk.gather_sum)(x, idx, w), expected, rtol=1e-11, atol=1e-12)
    for size in (40_000, 5):  # serial, private copies
        bad = rng.integers(0, size, 100_000)
        bad[77_777] = size + 3
        with pytest.raises(IndexError) as err:
            adpasses.grad(pk.gather_sum)(x[:size].copy(), bad, w[:100_000])
        assert "parallel_kernels.py:" in str(err.value)


def test_shared_shadow_element_is_summed_per_chunk_and_the_reverse_is_parallel():
    """dw[0] += ... in every iteration of the reverse: carried as a sum
    (transforms/accumulators.py), so the reverse loop runs in parallel, and
    no update is lost (2e6 iterations, 3 threads, five calls)."""
    x, w = np.random.default_rng(8).standard_normal(2_000_000), np.array([1.3])
    s = w[0] * (x * x).sum()
    for _ in range(5):
        gx, gw = adpasses.grad(pk.shared_weight, (0, 1))(x, w)
        assert np.allclose(gx, 2 * s * 2 * w[0] * x, rtol=1e-9)
        assert gw[0] == pytest.approx(2 * s * (x * x).sum(), rel=1e-9)
    report = gradient_report(pk.shared_weight, (x[:10], w), ("dup", "dup"))
    assert [p for _, p in report] == [None, None]
    small = np.random.default_rng(9).standard_normal(40)
    gx, gw = adpasses.grad(pk.shared_weight, (0, 1))(small, w)
    assert np.allclose(gx, central_fd(pk.shared_weight, [small, w], 0), rtol=1e-6, atol=1e-7)
    assert np.allclose(gw, central_fd(pk.shared_weight, [small, w], 1), rtol=1e-6, atol=1e-7)


def test_active_float_read_by_every_iteration_has_a_parallel_loop_local_reverse():
    x = np.random.default_rng(10).standard_normal(100_001)
    a = 0.7
    for threads in (1, 2, 3):
        adpasses.set_num_threads(threads)
        gx, ga = adpasses.grad(pk.scaled, (0, 1))(x, a)
        assert np.allclose(gx, 2 * a * x, rtol=1e-13)
        assert ga == pytest.approx((x * x).sum(), rel=1e-12)
    small = x[:30].copy()
    gx, ga = adpasses.grad(pk.scaled, (0, 1))(small, a)
    assert np.allclose(gx, central_fd(pk.scaled, [small, a], 0), rtol=1e-6, atol=1e-8)
    assert ga == pytest.approx((pk.scaled(small, a + 1e-6) - pk.scaled(small, a - 1e-6)) / 2e-6, rel=1e-6)
    report = gradient_report(pk.scaled, (x[:10], a), ("dup", "active"))
    assert [p for _, p in report] == [None]


def test_many_python_threads_call_a_parallel_gradient():
    rng = np.random.default_rng(9)
    data = [(rng.standard_normal(20_000), rng.standard_normal(20_000)) for _ in range(8)]
    grad = adpasses.grad(pk.loss_squared, (0, 1))
    expected = [grad(x, w) for x, w in data]
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for _ in range(10):
                gx, gw = grad(*data[k])
                assert np.array_equal(gx, expected[k][0]) and np.array_equal(gw, expected[k][1])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_fuzzer_parallel_mode_on_a_few_seeds():
    """The fuzzer's --mode parallel (tools/fuzz/parallel.py) on seeds whose
    programs have loops proven parallel in the primal and the gradient."""
    from adpasses.tools.fuzz.parallel import run_parallel_case

    details = []
    for seed in (1, 2, 5):
        outcome = run_parallel_case(seed)
        assert outcome.kind == "ok", (seed, outcome.kind, outcome.detail)
        details.append(outcome.detail)
    assert any(not d.endswith("primal 0, gradient 0") for d in details), details
