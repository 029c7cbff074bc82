"""Every entry of the op table, in forward mode, against central finite
differences (the tangent rules derive from the entries' partials:
`ops.partials.emit_tangents`; there is no second table).

For each entry, @f applying the op (test_rules_numeric.source_for) is
differentiated with every float argument `dup`, in vector mode with one
lane per float argument (lane k seeds argument k: the lanes give the whole
row of partial derivatives in one sweep) and with width 1 along a random
direction; both are compared with central differences of the compiled
primal at random points of the entry's domains. A wrong partial, a wrong
sum, a wrong lane or a missing tangent fails here.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith

from adpasses.ops import OP_TABLE
from adpasses.ops.entry import INTEGER_DOMAINS
from test_rules_numeric import entries, sample, source_for


def _forward(text: str, acts: list[str], width: int):  # type: ignore[no-untyped-def]
    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.forward_pass import forward_differentiate

    module = parse_module(text, "test.mlir")
    fwd_acts = ["dup" if a == "active" else a for a in acts]
    g = forward_differentiate(module, "f", fwd_acts, ["dup"], width=width)
    compiled = compile_module(module)
    return compiled["f"], compiled[g.name]


def _call_tangent(tangent, args, acts, directions):  # type: ignore[no-untyped-def]
    """Arguments in fwddiff order (each dup one followed by its lanes)."""
    call = []
    k = 0
    for a, act in zip(args, acts):
        call.append(a)
        if act == "active":
            call += [d[k] for d in directions]
            k += 1
    out = tangent(*call)
    return out[0], list(out[1:])


def _central(primal, args, acts, direction, h):  # type: ignore[no-untyped-def]
    def shifted(sign):  # type: ignore[no-untyped-def]
        moved, k = [], 0
        for a, act in zip(args, acts):
            if act == "active":
                moved.append(a + sign * h * direction[k])
                k += 1
            else:
                moved.append(a)
        return primal(*moved)
    return (shifted(1) - shifted(-1)) / (2 * h)


@pytest.mark.parametrize("cls", entries(), ids=lambda c: c.name)
def test_tangents_match_finite_differences(cls):  # type: ignore[no-untyped-def]
    entry = OP_TABLE[cls]
    text, acts = source_for(cls)
    rng = np.random.default_rng(sum(map(ord, cls.name)) + 1)
    n = acts.count("active")
    floats = [d for d in entry.domains if d != "cond" and d not in INTEGER_DOMAINS]
    ints = [d for d in entry.domains if d in INTEGER_DOMAINS]
    primal, lanes = _forward(text, acts, width=n)
    _, single = _forward(text, acts, width=1)
    basis = [list(row) for row in np.eye(n)]
    for _ in range(4):
        args = [sample(d, rng) for d in floats] + [sample(d, rng) for d in ints]
        value, tangents = _call_tangent(lanes, args, acts, basis)
        assert value == primal(*args)
        if cls in (arith.TruncFOp, arith.ExtFOp):
            # f32 rounding steps defeat finite differences: hand derivations
            # (truncf then extf: 1; extf then square: 2h, h the f32 value).
            h = float(np.float32(args[0]))
            assert tangents[0] == pytest.approx(1.0 if cls is arith.TruncFOp else 2 * h, rel=1e-6)
            continue
        for k in range(n):
            numeric = _central(primal, args, acts, basis[k], 1e-6)
            assert tangents[k] == pytest.approx(numeric, rel=1e-5, abs=1e-7), (cls.name, k, args)
        u = list(rng.standard_normal(n))
        _, (along,) = _call_tangent(single, args, acts, [u])
        assert along == pytest.approx(sum(t * c for t, c in zip(tangents, u)), rel=1e-12, abs=1e-14)
