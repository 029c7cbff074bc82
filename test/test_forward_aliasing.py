"""jvp, jacfwd, hessian, hvp and jacrev with arguments that share memory
(adpasses/api/aliasing.py, `check_written_distinct`; docs/api.md,
"Aliasing"): arrays that are only read may share memory, each gets its own
tangent (what `grad` accepts), checked against central differences of the
function of separate arrays; an array the function writes that shares
memory with another array or a tangent stays a ValueError, on the first
call and once the fast path exists."""

from __future__ import annotations

import math

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

import adpasses
from adpasses import Output


def coupled(a, b, s):
    t = 0.0
    for i in range(len(a)):
        t += math.sin(a[i] * b[i]) + s * a[i] * a[i] * b[(i + 1) % len(b)]
    return t * t * 0.5 + s * math.exp(0.1 * t)


def scaled_into(a, b, out):
    for i in range(len(out)):
        out[i] = a[i] * b[i] + math.sin(a[(i + 1) % len(a)])


def writes_first(a, b):
    a[0] = a[0] * 2.0
    t = 0.0
    for i in range(len(a)):
        t += a[i] * b[i] * b[i]
    return t


def joint_hessian(f, a, b, s):  # type: ignore[no-untyped-def]
    """d^2 f / d(a, b)^2 of separate arrays, by central differences of grad
    (grad of separate arrays is checked against differences elsewhere)."""
    n = len(a)
    g = adpasses.grad(f, (0, 1))
    z = np.concatenate([a, b])
    cols = []
    for j in range(2 * n):
        h = 1e-6 * max(1.0, abs(z[j]))
        up, down = z.copy(), z.copy()
        up[j] += h
        down[j] -= h
        gu, gd = g(up[:n].copy(), up[n:].copy(), s), g(down[:n].copy(), down[n:].copy(), s)
        cols.append((np.concatenate(gu) - np.concatenate(gd)) / (2 * h))
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("view", ["same", "overlapping"])
def test_read_only_arrays_that_share_memory_in_every_forward_api(view: str) -> None:
    rng = np.random.default_rng(15)
    base = rng.uniform(-1, 1, 6)
    x, y = (base[:5], base[:5]) if view == "same" else (base[:5], base[1:6])
    s = 0.7
    H = adpasses.hessian(coupled, (0, 1))(x, y, s)
    want = joint_hessian(coupled, x.copy(), y.copy(), s)
    got = np.block([[H[0][0], H[0][1]], [H[1][0], H[1][1]]])
    assert_matches(got, want)
    fd_a, fd_b = finite_differences(coupled, [x.copy(), y.copy(), s], (0, 1))
    ja, jb = adpasses.jacfwd(coupled, (0, 1))(x, y, s)
    assert_matches(ja, fd_a)
    assert_matches(jb, fd_b)
    # tangents sharing memory with each other and with the primals: all read
    u = base[:5]
    value, tangent = adpasses.jvp(coupled, (x, y, s), (u, u, 0.0))
    assert value == pytest.approx(coupled(x.copy(), y.copy(), s), rel=1e-13)
    assert tangent == pytest.approx(np.dot(fd_a, u) + np.dot(fd_b, u), rel=1e-6, abs=1e-8)
    # v sharing memory with the arguments
    hv = adpasses.hvp(coupled, 1)(x, y, s, x)
    assert_matches(hv, H[1][1] @ x)


def test_the_fast_path_sends_shared_read_only_arrays_to_the_general_path() -> None:
    rng = np.random.default_rng(16)
    x, y = rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 4)
    hess = adpasses.hessian(coupled, (0, 1))
    jac = adpasses.jacfwd(coupled, 0)
    for _ in range(2):  # the second call installs and takes the fast path
        hess(x, y, 0.5)
        jac(x, y, 0.5)
    H = hess(x, x, 0.5)
    assert_matches(np.block([[H[0][0], H[0][1]], [H[1][0], H[1][1]]]),
                   joint_hessian(coupled, x.copy(), x.copy(), 0.5))
    assert_matches(jac(x, x, 0.5), finite_differences(coupled, [x.copy(), x.copy(), 0.5], (0,))[0])


def test_jacrev_of_read_only_inputs_that_share_memory() -> None:
    x = np.random.default_rng(17).uniform(-1, 1, 4)
    out = np.zeros(4)
    J = adpasses.jacrev(scaled_into, (0, 1))(x, x, Output(out))

    def column(a, b, i):  # type: ignore[no-untyped-def]
        o = np.zeros(4)
        scaled_into(a, b, o)
        return o[i]
    for i in range(4):
        da, db = finite_differences(lambda a, b: column(a, b, i), [x.copy(), x.copy()], (0, 1))
        assert_matches(J[0][i], da)
        assert_matches(J[1][i], db)


def test_written_arrays_that_share_memory_stay_errors() -> None:
    rng = np.random.default_rng(18)
    x = rng.uniform(-1, 1, 5)
    before = x.copy()
    message = r"share memory with argument 0 \('a'\), which writes_first\(\) writes"
    with pytest.raises(ValueError, match=message):
        adpasses.hessian(writes_first, (0, 1))(x, x)
    with pytest.raises(ValueError, match=message):
        adpasses.jacfwd(writes_first, 1)(x[1:], x[:-1])
    with pytest.raises(ValueError, match=message):
        adpasses.jvp(writes_first, (x, x), (np.ones(5), np.ones(5)))
    with pytest.raises(ValueError, match=message):
        adpasses.hvp(writes_first, 1)(x, x, np.ones(5))
    y = rng.uniform(-1, 1, 5)
    with pytest.raises(ValueError, match=message):  # a tangent sharing memory with a written array
        adpasses.jvp(writes_first, (x, y), (np.ones(5), x))
    with pytest.raises(ValueError, match=r"share memory with argument 2 \('out'\)"):
        adpasses.jacrev(scaled_into)(x, y, Output(x))
    assert np.array_equal(x, before)
    # once the fast path exists, too
    hess = adpasses.hessian(writes_first, (0, 1))
    hess(x.copy(), y)
    hess(x.copy(), y)
    with pytest.raises(ValueError, match=message):
        hess(x, x)


def test_jvp_fast_path_then_arrays_that_share_memory() -> None:
    rng = np.random.default_rng(19)
    x, y, u, v = (rng.uniform(-1, 1, 4) for _ in range(4))
    for _ in range(2):  # the second call installs and takes the fast path
        adpasses.jvp(coupled, (x, y, 0.5), (u, v, 0.0))
        adpasses.jvp(writes_first, (x.copy(), y), (u, v))
    fd_a, fd_b = finite_differences(coupled, [x.copy(), x.copy(), 0.5], (0, 1))
    _, tangent = adpasses.jvp(coupled, (x, x, 0.5), (u, u, 0.0))
    assert tangent == pytest.approx(np.dot(fd_a + fd_b, u), rel=1e-6, abs=1e-8)
    with pytest.raises(ValueError, match=r"argument 0 \('a'\), which writes_first\(\) writes"):
        adpasses.jvp(writes_first, (x, x), (u, v))


def accumulate_into(x, out):
    for i in range(len(x)):
        out[i] = out[i] + x[i] * x[i]


def accumulate_then_sum(x, out):
    accumulate_into(x, out)
    return np.sum(out * out)


def _self_overlapping(n):
    from numpy.lib.stride_tricks import as_strided

    return as_strided(np.zeros(1), (n,), (0,))  # writeable, every element the same cell


CALLS = {
    "jvp": lambda o: adpasses.jvp(accumulate_then_sum, (X3, o), (np.ones(3), None)),
    "hessian": lambda o: adpasses.hessian(accumulate_then_sum)(X3, o),
    "hvp": lambda o: adpasses.hvp(accumulate_then_sum)(X3, o, np.ones(3)),
    "jacfwd": lambda o: adpasses.jacfwd(accumulate_into)(X3, Output(o)),
    "jacrev": lambda o: adpasses.jacrev(accumulate_into)(X3, Output(o)),
    "vjp": lambda o: adpasses.vjp(accumulate_then_sum)(X3, o)[1](1.0),
    "split": lambda o: list(adpasses.split(accumulate_then_sum))[0](X3, o),
    "grad": lambda o: adpasses.grad(accumulate_then_sum)(X3, o),
}
X3 = np.array([1.0, 2.0, 3.0])


@pytest.mark.parametrize("api", sorted(CALLS))
def test_a_written_array_whose_elements_share_memory_is_an_error(api: str) -> None:
    """These APIs run f on copies of the arrays it writes; the copy of an
    array whose elements share memory (stride 0) has distinct elements, so
    f ran on another array: jvp gave the value 98 where Python gives 588,
    jacrev/jacfwd of Output(out) a diagonal Jacobian where every element of
    out depends on every x. grad raised a ValueError; now all of them do,
    also once a fast path exists for the strided signature (a legitimate
    strided `out` first)."""
    call = CALLS[api]
    for _ in range(2):
        call(np.zeros(6)[::2])  # strided, distinct elements: fine (and makes the fast path)
    with pytest.raises(ValueError, match=r"argument 1 \('out'\) has elements that share memory .* writes it"):
        call(_self_overlapping(3))
