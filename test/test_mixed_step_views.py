"""Views whose slices mix negative and positive steps (`A[::-1, ::2]`,
`A[::-1, :]`, `A[3:0:-1, 2:5]`): every axis gets Python's bounds for its own
step's sign (frontend/arrays.py `_reinterpret_view`). Before, a positive-step
axis beside a negative-step one got the negative-step bounds: negative sizes,
so `A[::-1, :].sum()` was 0.0 and `A[::-1, ::2][0, 0]` read the wrong column,
silently. Random slice combinations on 2-D and 3-D arrays against numpy
(values, reductions, writes through the view) and gradients against central
finite differences; a step `-k` known at run time, of either sign or zero."""

from __future__ import annotations

import importlib
import textwrap

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

STEPS = [None, 1, 2, 3, -1, -2, -3]
BOUNDS = [None, 0, 1, 2, -1, -2, 7, -9]


def _slice(rng) -> str:
    step = STEPS[rng.integers(len(STEPS))]
    lo, hi = (BOUNDS[rng.integers(len(BOUNDS))] for _ in range(2))
    text = f"{'' if lo is None else lo}:{'' if hi is None else hi}"
    return text + ("" if step is None else f":{step}")


def _items(rng, rank: int) -> str:
    items = [_slice(rng) for _ in range(rank)]
    if not any(":-" in i for i in items):  # at least one negative step: the reinterpreted view
        items[int(rng.integers(rank))] = "::-1"
    return ", ".join(items)


CASES = [_items(np.random.default_rng(seed), 2 + seed % 2) for seed in range(12)] + [
    "::-1, :", "::-1, ::2", ":, ::-1", "3:0:-1, 2:5", "::2, ::-1", "1:, ::-1", "::-1, ::1"]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory, request):
    """One module of jitted kernels per case: the view's weighted sum, its
    sum and max, an element of it, and a write through it."""
    root = tmp_path_factory.mktemp("views")
    lines = ["import numpy as np", "import adpasses", ""]
    for k, items in enumerate(CASES):
        lines += textwrap.dedent(f"""
            @adpasses.jit
            def weighted{k}(A, w):
                v = A[{items}]
                return np.sum(v * w) + np.sum(np.sin(v))

            @adpasses.jit
            def reductions{k}(A):
                v = A[{items}]
                out = np.zeros(3)
                out[0] = v.sum()
                out[1] = v.size if False else np.sum(v * 0.0 + 1.0)
                if out[1] > 0.0:
                    out[2] = np.max(v)
                return out

            @adpasses.jit
            def write{k}(A, c):
                A[{items}] = c * A[{items}] + 1.0
                return np.sum(A * A)
            """).splitlines()
    (root / "mixed_step_kernels.py").write_text("\n".join(lines) + "\n")
    request.addfinalizer(lambda: __import__("sys").path.remove(str(root)))
    __import__("sys").path.insert(0, str(root))
    return importlib.import_module("mixed_step_kernels")


def _array(rank: int, rng) -> np.ndarray:
    return rng.uniform(-1, 1, (4, 5) if rank == 2 else (4, 5, 6))


@pytest.mark.parametrize("k", range(len(CASES)))
def test_values_match_numpy(kernels, k: int) -> None:
    items = CASES[k]
    rng = np.random.default_rng(100 + k)
    A = _array(items.count(",") + 1, rng)
    view = eval(f"A[{items}]")  # noqa: S307 (the test's own slice text)
    w = rng.normal(size=view.shape)
    got = getattr(kernels, f"weighted{k}")(A, w)
    assert got == pytest.approx(np.sum(view * w) + np.sum(np.sin(view)), rel=1e-12, abs=1e-12), items
    red = getattr(kernels, f"reductions{k}")(A)
    want = [view.sum(), view.size, view.max() if view.size else 0.0]
    np.testing.assert_allclose(red, want, rtol=1e-12, atol=1e-12, err_msg=items)
    B, C = A.copy(), A.copy()
    exec(f"C[{items}] = 0.5 * C[{items}] + 1.0")  # noqa: S102
    total = getattr(kernels, f"write{k}")(B, 0.5)
    np.testing.assert_array_equal(B, C, err_msg=items)
    assert total == pytest.approx(np.sum(C * C), rel=1e-12)


@pytest.mark.parametrize("k", [0, 3, 5, len(CASES) - 6, len(CASES) - 5])
def test_gradients_match_finite_differences(kernels, k: int) -> None:
    import adpasses

    items = CASES[k]
    rng = np.random.default_rng(200 + k)
    A = _array(items.count(",") + 1, rng)
    w = rng.normal(size=eval(f"A[{items}]").shape)  # noqa: S307
    f = getattr(kernels, f"weighted{k}")
    fd_A, fd_w = finite_differences(lambda a, b: f(a, b), [A, w], [0, 1])
    gA, gw = adpasses.grad(f, (0, 1))(A, w)
    assert_matches(gA, fd_A, what=f"A[{items}]: dA")
    assert_matches(gw, fd_w, what=f"A[{items}]: dw")
    B = A.copy()
    fd_B, = finite_differences(lambda a: getattr(kernels, f"write{k}")(a.copy(), 0.5), [B], [0])
    assert_matches(adpasses.grad(getattr(kernels, f"write{k}"), 0)(B, 0.5), fd_B, what=f"write A[{items}]")


def test_a_step_known_at_run_time(tmp_path, monkeypatch) -> None:
    """`A[::-k, 1:]`: -k's sign decides the bounds when the view is made;
    k == 0 raises Python's ValueError."""
    (tmp_path / "runtime_step.py").write_text(textwrap.dedent("""
        import numpy as np
        import adpasses

        @adpasses.jit
        def view_sum(A, k):
            v = A[::-k, 1:]
            return np.sum(v * v) + v[0, 0]
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import runtime_step

    A = np.random.default_rng(5).uniform(-1, 1, (5, 4))
    for k in (1, 2, -1, -3):
        v = A[::-k, 1:]
        assert runtime_step.view_sum(A, k) == pytest.approx(np.sum(v * v) + v[0, 0], rel=1e-12), k
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        runtime_step.view_sum(A, 0)
