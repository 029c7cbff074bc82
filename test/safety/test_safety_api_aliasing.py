"""Aliasing misuse (issue 13, item 7): arguments that share memory either
get the right derivative or a ValueError naming them, never a wrong number.

- `grad`/`value_and_grad`: arrays sharing memory with one f writes form a
  *written group*: every float member is differentiated through one shadow
  of the shared memory, and each gradient is the derivative with respect
  to the memory the argument covers (finite differences perturbing the
  base buffer), whatever argnums says (r07). Arrays only read get their own
  contiguous shadows: a broadcast (stride 0) array's gradient has one entry
  per element, as for a copy (r09). A written array whose own elements
  share memory is a ValueError.
- `autodiff` (Enzyme's rule: shadows share memory exactly as their arrays
  do): `Duplicated(x, x)`, a shadow that is another argument or shares
  memory with another's shadow, overlapping arrays f writes with separate
  shadows, a constant sharing memory with a Duplicated array f writes
  (r08), and a shadow whose elements share memory unlike its array's (r21)
  are ValueErrors; the rule-abiding calls give the right numbers.

Overlap is decided exactly (np.shares_memory): interleaved views that
share no element are distinct arrays.
"""

from __future__ import annotations

import numpy as np
import pytest

import adpasses
from adpasses import Const, Duplicated, DuplicatedNoNeed
from finite_diff import assert_matches, finite_differences

rng = np.random.default_rng(1307)
as_strided = np.lib.stride_tricks.as_strided


@adpasses.jit
def copy_shift(src, dst):
    s = 0.0
    for i in range(len(dst)):
        dst[i] = src[i] * src[i]
        s += dst[i]
    return s


@adpasses.jit
def smear(a, b):
    # reads of a after writes to b see the writes when they share memory
    for i in range(len(b)):
        b[i] = a[i] * a[i] + 0.5 * b[i]
    s = 0.0
    for i in range(len(b)):
        s += b[i] * a[i]
    return s


@adpasses.jit
def sumsq(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


@adpasses.jit
def dot(x, y):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]
    return s


@adpasses.jit
def inplace_square(x):
    for i in range(len(x)):
        x[i] = x[i] * x[i]
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


@adpasses.jit
def weighted_2d(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s += (i + 1.0) * m[i, j] * m[i, j] + m[i, j] * m[0, j]
    return s


@adpasses.jit
def transpose_mix(a, b):
    # b may be a.T: the writes to b change later reads of a
    n = a.shape[0]
    for i in range(n):
        for j in range(n):
            b[i, j] = a[i, j] * a[j, i] + 0.25 * b[i, j]
    s = 0.0
    for i in range(n):
        for j in range(n):
            s += a[i, j] * b[i, j]
    return s


@adpasses.jit
def write_count(x, counts):
    s = 0.0
    for i in range(len(x)):
        counts[i] = 7
        s += x[i] * x[i]
    return s


def memory_gradients(f, base, views, nums):
    """d f(*views(w)) / d w by finite differences on the base buffer w (a
    copy per evaluation), gathered through each differentiated argument's
    view: the derivative with respect to the memory it covers."""
    [g] = finite_differences(lambda w: f(*views(w)), [base], (0,))
    return [views(g)[k] for k in nums]


# -- grad: written groups (r07) ------------------------------------------------------------------


@pytest.mark.parametrize("nums", [1, 0, (0, 1), -1, (1, 0)])
def test_grad_of_overlapping_written_arguments_any_argnums_r07(nums):
    """Before: grad(copy_shift, 1)(w[1:], w[:-1]) returned zeros while
    argnums (0, 1) was right."""
    base = np.linspace(0.1, 0.9, 8)
    views = lambda w: (w[1:], w[:-1])  # noqa: E731
    work = base.copy()
    got = adpasses.grad(copy_shift, nums)(*views(work))
    single = isinstance(nums, int)
    expected = memory_gradients(copy_shift.py_func, base, views, [nums] if single else nums)
    for g, e in zip([got] if single else got, expected):
        assert_matches(g, e, what=f"argnums {nums}")
    np.testing.assert_array_equal(work, base)  # and the caller's memory is unchanged
    assert np.any(expected[0] != 0)


@pytest.mark.parametrize("views", [
    lambda w: (w[1:], w[:-1]),
    lambda w: (w[:-1], w[1:]),
    lambda w: (w[::-1][1:], w[2:]),
    lambda w: (w[1:7], w[0:6]),
    lambda w: (w, w),
], ids=["shift-left", "shift-right", "reversed", "window", "same"])
def test_written_groups_read_after_write_through_shared_memory(views):
    """smear's later reads of a see its writes to b when they share
    memory: value and gradients are those of f on that memory."""
    base = rng.uniform(0.5, 1.5, 8)
    for nums in [(0, 1), 0, 1]:
        work = base.copy()
        value, got = adpasses.value_and_grad(smear, nums)(*views(work))
        assert value == pytest.approx(smear.py_func(*views(base.copy())), rel=1e-12)
        single = isinstance(nums, int)
        expected = memory_gradients(smear.py_func, base, views, [nums] if single else nums)
        for g, e in zip([got] if single else got, expected):
            assert_matches(g, e, what=f"argnums {nums}")
        np.testing.assert_array_equal(work, base)


def test_written_group_of_2d_views_transposed():
    base = rng.uniform(0.5, 1.5, (4, 4))
    views = lambda w: (w, w.T)  # noqa: E731
    work = base.copy()
    ga, gb = adpasses.grad(transpose_mix, (0, 1))(*views(work))
    ea, eb = memory_gradients(transpose_mix.py_func, base, views, (0, 1))
    assert_matches(ga, ea, what="a")
    assert_matches(gb, eb, what="b = a.T")
    np.testing.assert_array_equal(work, base)
    assert not np.shares_memory(ga, gb)


def test_interleaved_views_share_no_element_and_are_distinct_arrays():
    """x[::2] and x[1::2] have overlapping byte ranges but no common
    element: no group, per-argument gradients (exact overlap test)."""
    base = rng.uniform(0.5, 1.5, 12)
    work = base.copy()
    a, b = work[::2], work[1::2]
    ga, gb = adpasses.grad(smear, (0, 1))(a, b)
    ea, eb = finite_differences(smear.py_func, [a.copy(), b.copy()], (0, 1))
    assert_matches(ga, ea, what="a")
    assert_matches(gb, eb, what="b")
    np.testing.assert_array_equal(work, base)


def test_written_group_with_mismatched_elements_is_an_error():
    x = rng.uniform(0.5, 1.5, 6)
    with pytest.raises(ValueError, match=r"write_count\(\): arguments 0 \('x'\) and 1 \('counts'\) share "
                                         r"memory but have different dtypes \(float64, int64\), and "
                                         r"write_count writes argument 1 \('counts'\).*pass copies"):
        adpasses.grad(write_count)(x, x.view(np.int64))
    raw = np.zeros(72, np.uint8)
    a = raw[0:48].view(np.float64)
    b = np.ndarray((6,), np.float64, raw.data, offset=4, strides=(8,))  # 4 bytes into a's elements
    a[:] = 1.0
    with pytest.raises(ValueError, match=r"share memory at offsets that are not a multiple of their "
                                         r"element size"):
        adpasses.grad(smear)(a, b)


def test_int_arrays_written_alone_are_left_unchanged():
    x, counts = rng.uniform(0.5, 1.5, 5), np.zeros(5, np.int64)
    g = adpasses.grad(write_count)(x, counts)
    assert_matches(g, 2 * x)
    np.testing.assert_array_equal(counts, 0)


# -- grad: broadcast and self-overlapping arrays (r09) ---------------------------------------------


def test_grad_of_a_broadcast_array_has_one_entry_per_element_r09():
    """Before: [6, 6, 6, 6, 6, 6] (the six contributions summed into the one
    memory cell, then read six times); d sum(x**2) / dx_i = 2 * 0.5 = 1.
    The derivative with respect to the broadcast scalar is the sum."""
    x = np.broadcast_to(np.float64(0.5), (6,))
    for _ in range(2):  # the general path, then the fast path
        g = adpasses.grad(sumsq)(x)
        np.testing.assert_array_equal(g, np.ones(6))
        assert g.flags.c_contiguous and g.flags.writeable
    row = rng.uniform(-1, 1, 4)
    m = np.broadcast_to(row, (3, 4))
    for _ in range(2):
        value, g = adpasses.value_and_grad(weighted_2d)(m)
        assert value == pytest.approx(weighted_2d.py_func(np.array(m)), rel=1e-12)
        assert_matches(g, finite_differences(weighted_2d.py_func, [np.array(m)], (0,))[0], what="2-D")
    y = rng.uniform(-1, 1, 6)
    gx, gy = adpasses.grad(dot, (0, 1))(x, y)
    assert_matches(gx, y)
    assert_matches(gy, np.full(6, 0.5))
    assert float(np.sum(gx)) == pytest.approx(float(np.sum(y)))  # d/d(scalar) = sum over the broadcast


def test_written_array_whose_elements_share_memory_is_an_error():
    cell = np.array([0.7])
    x = as_strided(cell, (5,), (0,), writeable=True)
    message = (r"inplace_square\(\): argument 0 \('x'\) has elements that share memory \(a stride of 0.*"
               r"inplace_square writes it.*pass a copy \(np\.array\(x\)\)")
    with pytest.raises(ValueError, match=message):
        adpasses.grad(inplace_square)(x)
    # with the fast path of non-contiguous written arrays installed
    strided = rng.uniform(0.5, 1.5, 10)[::2]
    assert_matches(adpasses.grad(inplace_square)(strided), 2 * strided)
    with pytest.raises(ValueError, match=message):
        adpasses.value_and_grad(inplace_square)(x)
    with pytest.raises(ValueError, match=message):
        adpasses.grad(inplace_square)(x)
    windows = as_strided(np.arange(1.0, 7.0), (4, 3), (8, 8), writeable=True)  # sliding windows

    @adpasses.jit
    def square_2d(m):
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                m[i, j] = m[i, j] * m[i, j]
        return m[0, 0]

    with pytest.raises(ValueError, match=r"square_2d\(\): argument 0 \('m'\) has elements that share memory"):
        adpasses.grad(square_2d)(windows)
    assert cell[0] == 0.7


# -- autodiff: Enzyme's rule (r08, r21) ----------------------------------------------------------


def test_autodiff_rejects_the_r08_calls():
    """Before: all four ran silently (x overwritten by its own derivative,
    the constant y changed, d2 = 0, d = 0)."""
    x = np.linspace(0.1, 0.9, 5)
    with pytest.raises(ValueError, match=r"sumsq\(\): the shadow of argument 0 \('x'\) shares memory with "
                                         r"the array itself \(Duplicated\(x, x\)\)"):
        adpasses.autodiff(sumsq, Duplicated(x, x))
    with pytest.raises(ValueError, match=r"the shadow of argument 0 \('x'\) shares memory with the array"):
        adpasses.autodiff(sumsq, DuplicatedNoNeed(x, x[::-1]))
    y = x + 1
    with pytest.raises(ValueError, match=r"dot\(\): the shadow of argument 0 \('x'\) shares memory with "
                                         r"argument 1 \('y'\), an array of the call"):
        adpasses.autodiff(dot, Duplicated(x, y), Const(y))
    with pytest.raises(ValueError, match=r"the shadow of argument 1 \('y'\) shares memory with argument 0"):
        adpasses.autodiff(dot, x, Duplicated(y, x[::-1]))
    w = np.linspace(0.1, 0.9, 8)
    with pytest.raises(ValueError, match=r"copy_shift\(\): arguments 0 \('src'\) and 1 \('dst'\) share memory "
                                         r"and copy_shift writes argument 1 \('dst'\), so their shadows must "
                                         r"share memory the same way"):
        adpasses.autodiff(copy_shift, Duplicated(w[1:], np.zeros(7)), Duplicated(w[:-1], np.zeros(7)))
    with pytest.raises(ValueError, match=r"copy_shift\(\): argument 0 \('src'\) is constant but shares memory "
                                         r"with argument 1 \('dst'\), which is Duplicated, and copy_shift "
                                         r"writes argument 1 \('dst'\)"):
        adpasses.autodiff(copy_shift, Const(w[1:]), Duplicated(w[:-1], np.zeros(7)))
    with pytest.raises(ValueError, match=r"argument 1 \('dst'\) is constant but shares memory with argument 0 "
                                         r"\('src'\), which is Duplicated, and copy_shift writes argument 1"):
        adpasses.autodiff(copy_shift, Duplicated(w[1:], np.zeros(7)), w[:-1])
    np.testing.assert_array_equal(x, np.linspace(0.1, 0.9, 5))
    np.testing.assert_array_equal(y, x + 1)
    np.testing.assert_array_equal(w, np.linspace(0.1, 0.9, 8))  # rejected before running


def test_autodiff_rejects_shadows_sharing_memory_unlike_their_arrays():
    x, y = rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 5)
    d = np.zeros(8)
    with pytest.raises(ValueError, match=r"dot\(\): the shadows of arguments 0 \('x'\) and 1 \('y'\) share "
                                         r"memory, but the arrays do not"):
        adpasses.autodiff(dot, Duplicated(x, d[:5]), Duplicated(y, d[:5]))
    with pytest.raises(ValueError, match=r"the shadows of arguments 0 \('x'\) and 1 \('y'\) share memory, but "
                                         r"not the way the arrays do"):
        adpasses.autodiff(dot, Duplicated(x, d[0:5]), Duplicated(x, d[1:6]))
    np.testing.assert_array_equal(d, 0.0)


def test_autodiff_rule_abiding_aliased_calls_are_right():
    base = rng.uniform(0.5, 1.5, 8)
    views = lambda w: (w[1:], w[:-1])  # noqa: E731
    for shadow_kind in (Duplicated, DuplicatedNoNeed):
        w, dw = base.copy(), np.zeros(8)
        adpasses.autodiff(smear, Duplicated(w[1:], dw[1:]), shadow_kind(w[:-1], dw[:-1]))
        [expected] = finite_differences(lambda v: smear.py_func(*views(v)), [base], (0,))
        assert_matches(dw, expected, what=f"mirrored shadows ({shadow_kind.__name__})")
    # arrays that are only read may have separate shadows: per-argument derivatives
    x = rng.uniform(-1, 1, 5)
    dx, dy = np.zeros(5), np.zeros(5)
    adpasses.autodiff(dot, Duplicated(x, dx), Duplicated(x, dy))
    assert_matches(dx, x)
    assert_matches(dy, x)
    # a constant sharing memory with a Duplicated array nobody writes: the partial derivative
    dx = np.zeros(5)
    adpasses.autodiff(dot, Duplicated(x, dx), Const(x))
    assert_matches(dx, x)
    # interleaved views share no element: separate shadows are right, even for a written one
    w, d0, d1 = base.copy(), np.zeros(4), np.zeros(4)
    a, b = w[::2], w[1::2]
    ea, eb = finite_differences(smear.py_func, [a.copy(), b.copy()], (0, 1))
    adpasses.autodiff(smear, Duplicated(a, d0), Duplicated(b, d1))
    assert_matches(d0, ea, what="interleaved a")
    # d1 holds d/d(b's initial contents) + the seed of b's final contents (0)
    assert_matches(d1, eb, what="interleaved b")


def test_zero_stride_shadows_r21():
    """Before: a writable stride-0 shadow of a contiguous array kept only the
    last element's derivative (cell = 10 + 2*x[-1])."""
    x = np.linspace(0.1, 0.9, 4)
    cell = np.array([10.0])
    dx = as_strided(cell, (4,), (0,), writeable=True)
    message = r"sumsq\(\): the shadow of argument 0 \('x'\) has elements that share memory"
    with pytest.raises(ValueError, match=message):
        adpasses.autodiff(sumsq, Duplicated(x, dx))
    with pytest.raises(ValueError, match=message):
        adpasses.autodiff(sumsq, Duplicated(rng.uniform(-1, 1, 8)[::2], dx))
    assert cell[0] == 10.0
    # a broadcast array with a shadow laid out the same way: Enzyme's
    # semantics, the cell gets the derivative with respect to the one value
    b = np.broadcast_to(np.float64(0.5), (4,))
    adpasses.autodiff(sumsq, Duplicated(b, dx))
    assert cell[0] == pytest.approx(10.0 + 4 * 2 * 0.5)
    # and a contiguous shadow for it: one entry per element
    for _ in range(2):
        d = np.zeros(4)
        adpasses.autodiff(sumsq, Duplicated(b, d))
        np.testing.assert_array_equal(d, np.ones(4))


@pytest.mark.parametrize("layout", ["contiguous array, strided shadow", "strided array, contiguous shadow",
                                    "strided array, other strides"])
def test_autodiff_shadow_layouts(layout):
    base = rng.uniform(-1, 1, 12)
    x = base[:6] if layout.startswith("contiguous") else base[::2]
    store = np.zeros(24)
    d = {"contiguous array, strided shadow": store[::4], "strided array, contiguous shadow": store[:6],
         "strided array, other strides": store[::-3][:6]}[layout]
    for _ in range(3):  # general path, then the fast path where there is one
        d[...] = 1.0
        adpasses.autodiff(sumsq, Duplicated(x, d))
        assert_matches(d, 1.0 + 2 * x, what=layout)
    assert np.count_nonzero(store) == 6  # nothing outside the shadow's elements


def test_fast_paths_still_reject_misuse_after_valid_calls():
    x, y = rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 5)
    for _ in range(2):
        adpasses.autodiff(dot, Duplicated(x, np.zeros(5)), Duplicated(y, np.zeros(5)))
        adpasses.grad(copy_shift, 1)(x, y.copy())
    with pytest.raises(ValueError, match="shares memory with the array itself"):
        adpasses.autodiff(dot, Duplicated(x, x), Duplicated(y, np.zeros(5)))
    w = np.linspace(0.1, 0.9, 8)
    got = adpasses.grad(copy_shift, 1)(w[1:], w[:-1])
    [expected] = memory_gradients(copy_shift.py_func, w.copy(), lambda v: (v[1:], v[:-1]), [1])
    assert_matches(got, expected)


def test_autodiff_of_a_written_array_whose_elements_share_memory():
    """A written stride-0 array: only a shadow with the same layout carries
    the derivatives through the shared cell (Enzyme's semantics)."""
    cell = np.array([0.7])
    x = as_strided(cell, (4,), (0,), writeable=True)
    with pytest.raises(ValueError, match=r"inplace_square\(\): argument 0 \('x'\) has elements that share "
                                         r"memory .* and inplace_square writes it, but its shadow is laid "
                                         r"out differently"):
        adpasses.autodiff(inplace_square, Duplicated(x, np.zeros(4)))
    assert cell[0] == 0.7
    # the same layout: derivative of f(c) with respect to the cell's initial value
    shadow_cell = np.zeros(1)
    dx = as_strided(shadow_cell, (4,), (0,), writeable=True)
    adpasses.autodiff(inplace_square, Duplicated(x, dx))

    def on_cell(c):
        v = as_strided(np.array([c]), (4,), (0,), writeable=True)
        return inplace_square.py_func(v)

    h = 1e-6
    expected = (on_cell(0.7 + h) - on_cell(0.7 - h)) / (2 * h)
    assert shadow_cell[0] == pytest.approx(expected, rel=1e-6)


# -- the fuzzer's aliased-arguments mode ----------------------------------------------------------


def test_fuzzer_aliased_mode_seeds():
    """`python -m adpasses.tools.fuzz --aliased` on a few seeds, in worker
    processes: every call matches its reference or raises ValueError."""
    from adpasses.tools.fuzz.aliased import run_aliased_case
    from adpasses.tools.fuzz.runner import run_seeds

    results = run_seeds(range(12), jobs=2, timeout=300, case=run_aliased_case)
    assert len(results) == 12
    failures = [f"seed {r.seed}: {r.outcome.kind}: {r.outcome.detail}" for r in results
                if r.outcome.kind != "ok"]
    assert not failures, "\n".join(failures)


def test_fuzzer_aliased_mode_finds_planted_bugs(monkeypatch):
    """The mode can fail: with the autodiff checks removed it reports missed
    errors; with the copies of written arrays removed (the caller's and the
    gradient's own, ad-private-copies), changed arguments;
    without the written group's extra differentiated members, wrong
    gradients (the reference decides validity from the construction)."""
    import adpasses.api.functions
    import adpasses.api.gradcall
    import adpasses.transforms.private_copies
    from adpasses.api import aliasing
    from adpasses.tools.fuzz.aliased import autodiff_validity, generate_aliased, run_aliased_case, written_groups

    def first(predicate):
        return next(s for s in range(200) if predicate(generate_aliased(s)))

    invalid = first(lambda c: len(c.dup) >= 2 and c.shadow_mode in ("self", "other")
                    and all(v.writeable for v in c.views) and autodiff_validity(c))
    copied = first(lambda c: c.written and all(v.step for v in c.views)
                   and all(v.writeable for v in c.views) and written_groups(c) == set(c.written))
    grouped = first(lambda c: c.pattern in ("shift", "reversed", "same") and c.written
                    and any(k not in c.argnums for k in written_groups(c) - set(c.written))
                    and any(k in c.argnums for k in c.written))
    assert run_aliased_case(invalid).kind == "ok"
    with monkeypatch.context() as m:
        m.setattr(adpasses.api.functions, "check_autodiff_aliasing", lambda *a, **k: None)
        assert run_aliased_case(invalid).kind == "missed error"

    original = aliasing.grad_call

    def no_copies(fname, params, args, activity, written):  # type: ignore[no-untyped-def]
        call = original(fname, params, args, activity, written)
        if call.noalias:
            call.args = tuple(args)
        return call

    with monkeypatch.context() as m:
        m.setattr(adpasses.api.gradcall, "grad_call", no_copies)
        # and no copies made by the gradient itself (ad-private-copies)
        m.setattr(adpasses.transforms.private_copies, "copy_inside", lambda *a, **k: frozenset())
        assert run_aliased_case(copied).kind == "changed argument"

    def plan_activity_only(fname, params, args, activity, written):  # type: ignore[no-untyped-def]
        call = original(fname, params, args, activity, written)
        for k, act in enumerate(call.activity):
            if act == "dup" and activity[k] != "dup":
                call.shadows.pop(k)
                call.grouped.discard(k)
        call.activity = activity
        return call

    with monkeypatch.context() as m:
        m.setattr(adpasses.api.gradcall, "grad_call", plan_activity_only)
        assert run_aliased_case(grouped).kind == "wrong gradient"


def test_inspect_shows_the_aliasing_case_grad_uses():
    w = np.linspace(0.1, 0.9, 12)
    assert adpasses.inspect(copy_shift, w[1:], w[:-1], argnums=1).noalias is False
    assert adpasses.inspect(copy_shift, w[::2], w[1::2], argnums=1).noalias is True  # no common element
    assert adpasses.inspect(dot, w, w).noalias is True  # only read
    with pytest.raises(ValueError, match="has elements that share memory"):
        adpasses.inspect(inplace_square, as_strided(np.ones(1), (3,), (0,), writeable=True))
