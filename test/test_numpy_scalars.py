"""numpy scalars take the fast call paths (after a first call of their own
signature: jit specialises on them, issue 16), and `jit(f)` twice shares
code (issue 19, item 3)."""

from __future__ import annotations

import numpy as np
import pytest

import adpasses
from adpasses.api import functions, gradcall
from adpasses.api.shadows import signature_code


def weighted(a, n, flag, x):
    s = 0.0
    for i in range(n):
        s += a * x[i] * x[i]
    if flag:
        s = 2.0 * s
    return s


SCALARS = [
    (np.float64(1.5), 3, True), (np.float32(1.5), np.int64(3), np.bool_(True)),
    (1.5, np.int32(3), np.bool_(False)), (np.float64(-0.25), np.int64(4), False),
]


@pytest.mark.parametrize("a, n, flag", SCALARS)
def test_numpy_scalars_have_codes_of_their_own(a, n, flag) -> None:  # type: ignore[no-untyped-def]
    """jit compiles a version per numpy scalar type (NEP 50: strong), so
    each has its own nonzero code, distinct from its Python kind's."""
    x = np.arange(5.0)
    code = signature_code(a, n, flag, x)
    assert code != 0
    python = signature_code(float(a), int(n), bool(flag), x)
    assert (code == python) == all(type(v) in (float, int, bool) for v in (a, n, flag))
    codes = {signature_code(v) for v in (1.0, 1, True, np.float64(1), np.float32(1), np.int64(1),
                                          np.int32(1), np.bool_(True))}
    assert len(codes) == 8 and 0 not in codes


class MyFloat(float):
    def __float__(self) -> float:
        return 7.0


def test_other_scalars_still_take_the_slow_path() -> None:
    x = np.arange(3.0)
    assert signature_code(MyFloat(1.0), 3, True, x) == 0
    assert signature_code(np.float16(1.0), 3, True, x) == 0
    assert signature_code(1.0, np.uint64(3), True, x) == 0


@pytest.mark.parametrize("a, n, flag", SCALARS)
def test_numpy_scalars_call_without_the_slow_path(a, n, flag, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    jf = functions.JitFunction(weighted)
    x = np.arange(5.0)
    want = weighted(float(a), int(n), bool(flag), x)
    assert jf(1.0, 2, True, x) == weighted(1.0, 2, True, x)  # compiles, installs the dispatch
    g = adpasses.grad(jf, argnums=(0, 3))
    g(1.0, 2, True, x)
    # numpy scalars have codes of their own: jit compiles their version (and
    # grad registers its fast path for them) on their first call.
    first = jf(a, n, flag, x)
    assert type(first) is type(weighted(a, n, flag, x))  # a numpy scalar where Python gives one
    g(a, n, flag, x)
    slow = []
    monkeypatch.setattr(functions, "plain_arguments", lambda *a: slow.append(1) or a[2])
    monkeypatch.setattr(gradcall, "plain_arguments", lambda *a: slow.append(1) or a[2])
    assert jf(a, n, flag, x) == pytest.approx(want, rel=1e-12)
    da, dx = g(a, n, flag, x)
    assert slow == []
    k = np.arange(5) < int(n)
    scale = 2.0 if flag else 1.0
    assert da == pytest.approx(scale * float(np.sum(x[k] ** 2)), rel=1e-12)
    np.testing.assert_allclose(dx, np.where(k, scale * 2.0 * float(a) * x, 0.0), rtol=1e-6)


def test_other_scalars_still_work_on_the_slow_path() -> None:
    jf = functions.JitFunction(weighted)
    x = np.arange(5.0)
    assert jf(1.0, 2, False, x) == weighted(1.0, 2, False, x)
    assert jf(np.float16(0.5), np.uint8(2), False, x) == weighted(0.5, 2, False, x)


def test_jit_twice_is_one_function_per_options() -> None:
    def f(x):
        return x[0] * 3.0

    a, b = adpasses.jit(f), adpasses.jit(f)
    assert a is b
    assert adpasses.jit(boundscheck=False)(f) is adpasses.jit(f, boundscheck=False) is not a
    assert adpasses.jit(f, fastmath=True) is not a
    x = np.ones(2)
    assert a(x) == 3.0
    assert len(b._primal) == 1  # compiled once, shared
    assert adpasses.grad(f)(x)[0] == 3.0 and functions.as_jit(f) is a  # grad of the plain function too

    def h(x):
        return x[0]

    gh = adpasses.grad(h)  # grad first, jit after: the same JitFunction
    assert functions.as_jit(h) is adpasses.jit(h)
    assert gh(x)[0] == 1.0
