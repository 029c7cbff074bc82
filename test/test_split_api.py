"""Split mode from Python (`fwd, rev = adpasses.split(f)`, issue 20): the
forward call returns f's results and a tape, the reverse call the
cotangents of the arguments from that tape. On random inputs they must
equal the combined gradient (`adpasses.grad`, `vjp`) and central finite
differences, for loops whose values are taped, local arrays, branches, a
function that writes its argument and tuple results; the tape's buffers
are freed once (after the reverse, or when an unused tape is collected);
a tape is reversed once, by one thread; misuse is a clear error."""

from __future__ import annotations

import gc
import math
import pickle
import threading

import numpy as np
import pytest

import adpasses
from adpasses.native.runtime import handed_arrays


@adpasses.jit
def chain(x, a):
    """A product through a loop: every partial product and sine is taped."""
    p = 1.0
    for i in range(len(x)):
        p = p * math.sin(x[i] * a) + 0.1 * x[i]
    return p


@adpasses.jit
def local_then_overwrite(x, a):
    """A local array written, read, overwritten: the reverse reads what it held."""
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = math.exp(x[i] * a)
    s = 0.0
    for i in range(len(x)):
        s = s * 0.5 + y[i] * x[i]
        y[i] = math.sin(s)
    return s + y[len(x) - 1]


@adpasses.jit
def branches(x, a):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.5:
            s += math.log(x[i]) * s
        else:
            s += x[i] * a
    return s * s


@adpasses.jit
def writes_x(x, a):
    s = 0.0
    for i in range(len(x)):
        x[i] = math.exp(x[i] * a)
        s += x[i] * x[i]
    return s


@adpasses.jit
def two_results(x, a, n):
    s = 0.0
    t = 1.0
    for i in range(n):
        s += x[i] * x[i] * a
        t *= math.cos(x[i])
    return s, t


@adpasses.jit
def until_large(x, a):
    """A while loop: its values are a growable tape the forward hands over."""
    w = x[0]
    while w < 10.0:
        w = w + math.sin(w * a) ** 2 + a + 0.01 * x[1]
    return w * x[1]


KERNELS = {"chain": chain, "until_large": until_large, "local_then_overwrite": local_then_overwrite, "branches": branches,
           "writes_x": writes_x}


def _fd(f, x, a, h=1e-6):  # type: ignore[no-untyped-def]
    """Central differences of f(x, a) (f run on copies)."""
    da = (f(x.copy(), a + h) - f(x.copy(), a - h)) / (2 * h)
    dx = np.empty_like(x)
    for i in range(len(x)):
        e = np.zeros_like(x)
        e[i] = h
        dx[i] = (f(x + e, a) - f(x - e, a)) / (2 * h)
    return dx, da


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_split_equals_grad_and_finite_differences(name: str) -> None:
    f = KERNELS[name]
    fwd, rev = adpasses.split(f)
    rng = np.random.default_rng(2020)
    for _ in range(3):
        n = int(rng.integers(2, 9))
        x, a = rng.uniform(0.1, 1.0, n), float(rng.uniform(0.3, 0.9))
        seed = float(rng.uniform(0.5, 2.0))
        before = x.copy()
        out, tape = fwd(x, a)
        np.testing.assert_array_equal(x, before)  # f ran on a copy
        assert out == pytest.approx(f(x.copy(), a), rel=1e-14)
        dx, da = rev(tape, seed)
        gx, ga = adpasses.grad(f, (0, 1))(x, a)
        np.testing.assert_allclose(dx, seed * gx, rtol=1e-12, atol=1e-14)
        assert da == pytest.approx(seed * ga, rel=1e-12, abs=1e-14)
        fx, fa = _fd(f, x, a)
        np.testing.assert_allclose(dx, seed * fx, rtol=1e-5, atol=1e-7)
        assert da == pytest.approx(seed * fa, rel=1e-5, abs=1e-7)


def test_tuple_results_take_a_tuple_cotangent_and_ints_are_const() -> None:
    fwd, rev = adpasses.split(two_results)
    x, a = np.array([0.3, 0.9, 1.4, 0.2]), 0.7
    (s, t), tape = fwd(x, a, 3)
    assert (s, t) == pytest.approx(two_results(x, a, 3), rel=1e-15)
    dx, da, dn = rev(tape, (2.0, -1.0))
    _, vjp_fn = adpasses.vjp(two_results)(x, a, 3)
    vx, va, vn = vjp_fn((2.0, -1.0))
    np.testing.assert_allclose(dx, vx, rtol=1e-13)
    assert da == pytest.approx(va, rel=1e-13) and dn is None and vn is None
    assert dx[3] == 0.0  # beyond n: no derivative


def test_the_tape_is_what_the_forward_saw_not_the_arrays_later() -> None:
    """Changing the argument between the calls does not change the gradient."""
    fwd, rev = adpasses.split(chain)
    x, a = np.array([0.2, 0.5, 0.8]), 0.6
    _, tape = fwd(x, a)
    expected = adpasses.grad(chain, (0, 1))(x.copy(), a)
    x[:] = 5.0
    dx, da = rev(tape)
    np.testing.assert_allclose(dx, expected[0], rtol=1e-13)
    assert da == pytest.approx(expected[1], rel=1e-13)


def test_the_tape_is_freed_once_after_the_reverse_or_when_collected() -> None:
    fwd, rev = adpasses.split(local_then_overwrite)
    x, a = np.linspace(0.1, 0.9, 16), 0.5
    fwd(x, a)  # compiled
    gc.collect()
    start = handed_arrays()
    out, tape = fwd(x, a)
    handed = handed_arrays()["handed"] - start["handed"]
    assert handed > 0 and tape.nbytes > 0  # the tape's buffers are numpy's
    rev(tape)
    assert tape.nbytes == 0 and tape.state == "reversed"
    now = handed_arrays()
    assert now["freed"] - start["freed"] == handed  # freed by the reverse's end
    # A tape that is never reversed is freed with the object.
    for _ in range(5):
        fwd(x, a)
    gc.collect()
    now = handed_arrays()
    assert now["handed"] - start["handed"] == 6 * handed and now["freed"] - start["freed"] == 6 * handed


def test_reversing_a_tape_twice_is_an_error() -> None:
    fwd, rev = adpasses.split(chain)
    _, tape = fwd(np.array([0.2, 0.4]), 0.5)
    rev(tape)
    with pytest.raises(RuntimeError, match="this tape was already reversed: each tape is reversed once"):
        rev(tape)


def test_a_tape_after_a_failed_reverse_is_an_error() -> None:
    """A reverse that fails inside compiled code spends the tape (it may
    have changed what the tape holds). The failure is planted: the halves
    are replaced by one whose reverse raises."""
    import dataclasses

    fwd, rev = adpasses.split(chain)
    _, tape = fwd(np.array([0.2, 0.4]), 0.5)

    def failing(*args: object) -> None:
        raise ValueError("index 7 is out of bounds")

    tape._plan = dataclasses.replace(tape._plan, rev=failing)
    with pytest.raises(ValueError, match="index 7"):
        rev(tape)
    with pytest.raises(RuntimeError, match=r"this tape is spent: its reverse failed \(ValueError: index 7"):
        rev(tape)


def test_a_bad_cotangent_leaves_the_tape_usable() -> None:
    fwd, rev = adpasses.split(chain)
    x, a = np.array([0.2, 0.4, 0.9]), 0.5
    _, tape = fwd(x, a)
    with pytest.raises(TypeError, match=r"split\(chain\) reverse: the cotangent of the output \(a float\) must be a number"):
        rev(tape, "one")
    assert tape.state == "ready"
    dx, _ = rev(tape, 1.0)
    np.testing.assert_allclose(dx, adpasses.grad(chain)(x, a), rtol=1e-13)


def test_a_tape_of_another_split_or_no_tape_is_an_error() -> None:
    fwd, _ = adpasses.split(chain)
    _, other_rev = adpasses.split(branches)
    _, tape = fwd(np.array([0.2, 0.4]), 0.5)
    with pytest.raises(ValueError, match=r"this tape comes from adpasses.split\(chain\), not from split\(branches\)"):
        other_rev(tape)
    with pytest.raises(TypeError, match="the first argument must be the tape that the forward call returned"):
        other_rev(np.zeros(2))
    assert tape.state == "ready"


def test_one_tape_reversed_by_many_threads_runs_once() -> None:
    """Whatever the interleaving, exactly one thread gets the gradient and
    the others the error (the tape's values are taken atomically)."""
    fwd, rev = adpasses.split(local_then_overwrite)
    x, a = np.linspace(0.1, 0.9, 64), 0.5
    expected = adpasses.grad(local_then_overwrite, (0, 1))(x, a)
    for _ in range(5):
        _, tape = fwd(x, a)
        results: list[object] = []
        start = threading.Barrier(4)

        def run() -> None:
            start.wait()
            try:
                results.append(rev(tape))
            except RuntimeError as err:
                results.append(err)

        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        grads = [r for r in results if isinstance(r, tuple)]
        errors = [r for r in results if isinstance(r, RuntimeError)]
        assert len(grads) == 1 and len(errors) == 3
        np.testing.assert_allclose(grads[0][0], expected[0], rtol=1e-13)


def test_tapes_of_concurrent_forward_calls_are_independent() -> None:
    fwd, rev = adpasses.split(chain)
    rng = np.random.default_rng(7)
    xs = [rng.uniform(0.1, 1.0, 32) for _ in range(4)]
    tapes = [fwd(x, 0.4)[1] for x in xs]  # all alive at once
    out: dict[int, tuple] = {}

    def run(k: int) -> None:
        out[k] = rev(tapes[3 - k])

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        np.testing.assert_allclose(out[k][0], adpasses.grad(chain)(xs[3 - k], 0.4), rtol=1e-13)


def test_what_split_does_not_take_is_a_clear_error() -> None:
    @adpasses.jit
    def doubled(x):
        return 2.0 * x

    @adpasses.jit
    def count(n):
        return n + 1

    with pytest.raises(TypeError, match=r"split\(doubled\): doubled\(\) returns an array.*adpasses.vjp"):
        adpasses.split(doubled).forward(np.ones(3))
    with pytest.raises(TypeError, match=r"split\(count\): count\(\) returns no float"):
        adpasses.split(count).forward(3)
    fwd, _ = adpasses.split(chain)
    _, tape = fwd(np.array([0.2]), 0.5)
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(tape)


def test_split_objects_of_one_function_share_its_compiled_code_and_pickle() -> None:
    """`fwd, rev = adpasses.split(f)` written inside a training loop compiled
    f's split gradient again for every new split object (~0.3 s each); the
    compiled plans now live on the jitted function. A tape still belongs to
    the split that made it. A split pickles by reference, like jit and grad
    (it raised AttributeError on a local closure)."""
    x, a = np.random.default_rng(4).uniform(0.2, 1.0, 6), 0.7
    fwd, rev = adpasses.split(chain)
    out, tape = fwd(x, a)
    first = dict(adpasses.split(chain)._plans)
    assert first, "the first split's plan is not shared"
    fwd2, rev2 = adpasses.split(chain)
    out2, tape2 = fwd2(x, a)
    assert dict(adpasses.split(chain)._plans) == first   # nothing compiled again
    with pytest.raises(ValueError):
        rev2(tape, 1.0)
    dx, da = rev(tape, 1.0)
    dx2, da2 = rev2(tape2, 1.0)
    np.testing.assert_array_equal(dx, dx2)
    fwd3, rev3 = pickle.loads(pickle.dumps(adpasses.split(chain)))
    out3, tape3 = fwd3(x, a)
    dx3, da3 = rev3(tape3, 1.0)
    assert out3 == out and da3 == da
    np.testing.assert_array_equal(dx3, dx)


def test_grad_of_grad_says_what_to_use() -> None:
    with pytest.raises(TypeError, match=r"got GradCallable; derivatives of derivatives: adpasses.hessian"):
        adpasses.grad(adpasses.grad(chain))(np.ones(3), 0.5)
