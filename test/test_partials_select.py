"""Partials written with select/cmp structure (`select(cmpf(oeq, x, 0), 0, x / y)`,
nested selects, negated selects, selects inside quotients) in the op table.

Folding `g * partial` (`ops/partials.scale`) places a product with an
operand or the result (`g * x` inside `x / y`) at that operand's turn,
after the node that uses it; the emitter once emitted in that order alone
and failed with a KeyError. Here:
- every entry of the op table, its partials wrapped in value-preserving
  select/cmp structures (one wrapper per entry, cycling through them),
  differentiated in reverse and forward mode (MLIR harnesses of
  test_rules_numeric / test_forward_rules) against central differences;
- xlogy written with the select spellings a table author would use, under
  grad, jvp, hessian, jacfwd and vmap(grad) from Python, against finite
  differences, and exactly 0 in y where x == 0;
- the same construct in user code (`x / y if x != 0 else 0.0`) under every
  differentiation mode.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences
from gradcheck import check_gradient
from test_forward_rules import _call_tangent, _central, _forward
from test_rules_numeric import entries, sample, source_for
from xdsl.dialects import arith
from xdsl.dialects import math as mathd

import adpasses
from adpasses.ops import OP_TABLE
from adpasses.ops.entry import INTEGER_DOMAINS
from adpasses.ops.partials import call, cmpf, select, trace

sp = pytest.importorskip("scipy.special")
from adpasses.ops.special import XlogyOp  # noqa: E402


@contextlib.contextmanager
def partials_of(cls, partials):  # type: ignore[no-untyped-def]
    """The entry of `cls` with other partials for the duration (entries
    are frozen: the rules read `entry.partials` when they run)."""
    entry = OP_TABLE[cls]
    old = entry.partials
    object.__setattr__(entry, "partials", partials)
    try:
        yield
    finally:
        object.__setattr__(entry, "partials", old)


def _first_float(entry):  # type: ignore[no-untyped-def]
    return next(i for i, d in enumerate(entry.domains) if d != "cond" and d not in INTEGER_DOMAINS)


# Each wrapper keeps the partial's value at every non-NaN point.
WRAPPERS = {
    "zero-if-nan-result": lambda p, x, r: select(cmpf("une", r, r), 0, p),
    "same-both-ways": lambda p, x, r: select(cmpf("oeq", x, 0), p, p),
    "negated-select": lambda p, x, r: -select(cmpf("ord", x, x), -p, 0),
    "select-in-quotient": lambda p, x, r: select(cmpf("olt", x, 0), p, p * 2) / select(cmpf("olt", x, 0), 1, 2),
}


def wrapped(entry, wrapper):  # type: ignore[no-untyped-def]
    k = _first_float(entry)
    original = entry.partials

    def partials(*operands, r):  # type: ignore[no-untyped-def]
        got = original(*operands, r=r)
        return [None if p is None else wrapper(p, operands[k], r) for p in got]
    return partials


def _differentiable(cls) -> bool:
    entry = OP_TABLE[cls]
    got, _ = trace(entry.partials, None, entry.arity)
    return cls not in (arith.ExtFOp, arith.TruncFOp) and any(p is not None for p in got)


CASES = [(cls, name) for i, cls in enumerate(c for c in entries() if _differentiable(c))
         for name in [list(WRAPPERS)[i % len(WRAPPERS)]]]


@pytest.mark.parametrize("cls, wrapper", CASES, ids=lambda v: v if isinstance(v, str) else v.name)
def test_select_wrapped_partials_of_every_entry_match_finite_differences(cls, wrapper):
    entry = OP_TABLE[cls]
    text, acts = source_for(cls)
    rng = np.random.default_rng(sum(map(ord, cls.name)) + 7)
    floats = [d for d in entry.domains if d != "cond" and d not in INTEGER_DOMAINS]
    ints = [d for d in entry.domains if d in INTEGER_DOMAINS]
    n = acts.count("active")
    with partials_of(cls, wrapped(entry, WRAPPERS[wrapper])):
        primal, lanes = _forward(text, acts, width=n)
        points = [[sample(d, rng) for d in floats] + [sample(d, rng) for d in ints] for _ in range(3)]
        for args in points:
            check_gradient(text, "f", acts, ["active"], args, rtol=1e-6, atol=1e-8)
            _, tangents = _call_tangent(lanes, args, acts, [list(row) for row in np.eye(n)])
            for k in range(n):
                numeric = _central(primal, args, acts, list(np.eye(n)[k]), 1e-6)
                assert tangents[k] == pytest.approx(numeric, rel=1e-5, abs=1e-7), (cls.name, k, args)


# d/dy (x log y) = x / y, and 0 where x == 0, spelled as a table author would.
XLOGY_DY = {
    "select-zero-first": lambda x, y, r: select(cmpf("oeq", x, 0), 0, x / y),
    "select-zero-second": lambda x, y, r: select(cmpf("one", x, 0), x / y, 0),
    "negated-quotient": lambda x, y, r: select(cmpf("oeq", x, 0), 0, -(-x / y)),
    "nested-selects": lambda x, y, r: select(cmpf("oeq", x, 0), 0,
                                             select(cmpf("olt", y, 1), x / y, x * (1 / y))),
    "select-as-numerator": lambda x, y, r: select(cmpf("oeq", x, 0), 0, x) / y,
    "select-times-select": lambda x, y, r: select(cmpf("oeq", x, 0), 0, x) * select(cmpf("ogt", y, 0), 1 / y, 1 / y),
    "plain-quotient": lambda x, y, r: x / y,
}


def _xlogy_sum(x, y):
    s = 0.0
    for i in range(len(x)):
        s += sp.xlogy(x[i], y[i]) * (1.0 + y[i])
    return s


@pytest.mark.parametrize("spelling", list(XLOGY_DY))
def test_xlogy_partials_with_selects_in_every_mode(spelling, tmp_path):
    dy = XLOGY_DY[spelling]
    rng = np.random.default_rng(16)
    x = rng.uniform(-2, 2, 6)
    x[[1, 4]] = 0.0
    y = rng.uniform(0.3, 3, 6)
    # a fresh function per spelling, in its own file: nothing compiled for
    # another spelling is reused
    path = tmp_path / f"xlogy_{spelling.replace('-', '_')}.py"
    path.write_text(_SOURCE)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    f = module.xlogy_sum
    with partials_of(XlogyOp, lambda x, y, r: [call(mathd.LogOp, y), dy(x, y, r)]):
        gx, gy = adpasses.grad(f, (0, 1))(x, y)
        want_x, want_y = finite_differences(_xlogy_sum, [x, y], (0, 1))
        assert_matches(gx, want_x)
        assert_matches(gy, want_y)
        assert gy[1] == 0.0 and gy[4] == 0.0  # x == 0: xlogy does not move with y
        u, v = rng.standard_normal(6), rng.standard_normal(6)
        value, tangent = adpasses.jvp(f, (x, y), (u, v))
        assert value == pytest.approx(_xlogy_sum(x, y), rel=1e-13)
        assert tangent == pytest.approx(np.dot(want_x, u) + np.dot(want_y, v), rel=1e-6, abs=1e-8)
        assert_matches(adpasses.jacfwd(f, 1)(x, y), want_y)
        H = adpasses.hessian(f, 1)(x, y)
        gy_of = lambda yy: adpasses.grad(f, 1)(x, yy)  # noqa: E731
        H_fd = np.stack([(gy_of(y + h * e) - gy_of(y - h * e)) / (2 * h)
                         for e in np.eye(6) for h in [1e-6]], axis=1)
        assert_matches(H, H_fd)
        X, Y = np.stack([x, -x]), np.stack([y, y + 1])
        batched = adpasses.vmap(adpasses.grad(f, 1))(X, Y)
        for row in range(2):
            assert_matches(batched[row], finite_differences(_xlogy_sum, [X[row], Y[row]], (1,))[0])


_SOURCE = '''import scipy.special as sp


def xlogy_sum(x, y):
    s = 0.0
    for i in range(len(x)):
        s += sp.xlogy(x[i], y[i]) * (1.0 + y[i])
    return s
'''


def user_xlogy(x, y):
    s = 0.0
    for i in range(len(x)):
        s += (x[i] / y[i] if x[i] != 0 else 0.0) + (0.0 if x[i] == 0.0 else x[i] * math.log(y[i]))
    return s


def test_the_same_construct_in_user_code_in_every_mode():
    rng = np.random.default_rng(29)
    x = rng.uniform(-2, 2, 5)
    x[2] = 0.0
    y = rng.uniform(0.3, 3, 5)
    want_x, want_y = finite_differences(user_xlogy, [x, y], (0, 1))
    # at x == 0 the program takes the constant branch: its derivative in x
    # is the branch's (0), not the two-sided difference across the branch
    want_x[2] = 0.0
    gx, gy = adpasses.grad(user_xlogy, (0, 1))(x, y)
    assert_matches(gx, want_x)
    assert_matches(gy, want_y)
    assert gx[2] == 0.0 and gy[2] == 0.0
    u, v = rng.standard_normal(5), rng.standard_normal(5)
    value, tangent = adpasses.jvp(user_xlogy, (x, y), (u, v))
    assert value == pytest.approx(user_xlogy(x, y), rel=1e-13)
    assert tangent == pytest.approx(np.dot(want_x, u) + np.dot(want_y, v), rel=1e-6, abs=1e-8)
    assert_matches(adpasses.jacfwd(user_xlogy, 1)(x, y), want_y)
    H = adpasses.hessian(user_xlogy, 1)(x, y)
    # d2/dy2 of x/y + x log y: 2x/y^3 - x/y^2 (0 where x == 0), diagonal
    assert_matches(H, np.diag(np.where(x == 0, 0.0, 2 * x / y**3 - x / y**2)))
    X, Y = np.stack([x, 2 * x]), np.stack([y, y + 0.5])
    batched = adpasses.vmap(adpasses.grad(user_xlogy, 1))(X, Y)
    for row in range(2):
        assert_matches(batched[row], finite_differences(user_xlogy, [X[row], Y[row]], (1,))[0])
