"""Generic checks over every scalar rule (like JAX's rule tests).

Scalar rules are derived from the op table's partials (`adpasses/ops/`).
1. Each rule reads, through `rc.primal`, exactly the values its traced
   `needs` lists, for every combination of active operands: the cache
   planner relies on `needs` to decide what the reverse sweep can see.
2. Each rule returns an adjoint of the operand's type for every wanted
   operand with a partial (None only where the entry's partial is None:
   piecewise-constant ops, integer and condition operands).

Numerical correctness of every rule against finite differences is checked
in test_rules_numeric.py.
"""

from __future__ import annotations

import itertools

import pytest
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType
from xdsl.ir import Block, Operation
from xdsl.rewriter import InsertPoint

from adpasses.ops.partials import trace
from adpasses.reverse.rules import ScalarRule, rule_table
from adpasses.reverse.reverse_context import ReverseContext

F64, F32, I1, I32 = Float64Type(), Float32Type(), IntegerType(1), IntegerType(32)

OPERAND_TYPES = {
    arith.SelectOp: ([I1, F64, F64], F64),
    math.FPowIOp: ([F64, I32], F64),
    arith.ExtFOp: ([F32], F64),
    arith.TruncFOp: ([F64], F32),
}


def scalar_rules() -> list[tuple[type[Operation], ScalarRule]]:
    return [(cls, r) for cls, r in rule_table().items() if isinstance(r, ScalarRule)]


def make_op(cls: type[Operation]) -> tuple[Operation, Block]:
    arity = len(cls.get_irdl_definition().operands)
    operand_types, result_type = OPERAND_TYPES.get(cls, ([F64] * arity, F64))
    block = Block(arg_types=operand_types)
    op = cls.create(operands=list(block.args), result_types=[result_type])
    block.add_op(op)
    return op, block


class _AllActive:
    def is_active(self, v):  # noqa: ANN001
        return isinstance(v.type, (Float64Type, Float32Type))


class _Sweep:
    activity = _AllActive()
    width = 1  # one cotangent per sweep (vector reverse mode has more)
    strong_zero = False


class _StrongZeroSweep(_Sweep):
    strong_zero = True  # adjoints guarded by `g == 0`: reads the seed, no primal more


class RecordingContext(ReverseContext):
    """A reverse context whose primal values are the op's own values, and
    which records every primal value a rule asks for."""

    def __init__(self, scratch: Block, sweep: type = _Sweep):
        super().__init__(sweep(), scratch, InsertPoint.at_end(scratch))
        self.requested: list = []

    def primal(self, value):  # noqa: ANN001
        self.requested.append(value)
        return value


@pytest.mark.parametrize("sweep", [_Sweep, _StrongZeroSweep], ids=["plain", "strong_zero"])
@pytest.mark.parametrize("cls,rule", scalar_rules(), ids=lambda x: getattr(x, "name", ""))
def test_rule_reads_exactly_what_it_needs(cls, rule, sweep):
    op, block = make_op(cls)
    float_positions = [i for i, o in enumerate(op.operands) if _AllActive().is_active(o)]
    assert float_positions, f"{cls.name} has no float operand"
    for r in range(1, len(float_positions) + 1):
        for subset in itertools.combinations(float_positions, r):
            want = tuple(i in subset for i in range(len(op.operands)))
            scratch = Block(arg_types=[op.results[0].type])
            rc = RecordingContext(scratch, sweep)
            g = scratch.args[0]
            adjoints = list(rule.adjoint(rc, op, g, want))
            assert len(adjoints) == len(op.operands), cls.name
            declared = set(rule.needs_for(op, want))
            assert set(rc.requested) == declared, (
                f"{cls.name} with active operands {subset}: reads {rc.requested}, declares {declared}"
            )
            partials, _ = trace(rule.entry.partials, op, len(op.operands))
            for i in subset:
                if partials[i] is None:
                    assert adjoints[i] is None
                    continue
                assert adjoints[i] is not None, f"{cls.name}: no adjoint for operand {i}"
                assert adjoints[i].type == op.operands[i].type
            assert all(adjoints[i] is None for i in range(len(adjoints)) if i not in subset)


@pytest.mark.parametrize("n", [0, 3])
def test_constant_exponent_needs_only_what_it_reads(n):
    """fpowi with a constant exponent 0 has derivative 0 and reads nothing;
    with another constant it reads the base (traced needs, not declared)."""
    block = Block(arg_types=[F64])
    k = arith.ConstantOp.from_int_and_width(n, 32)
    op = math.FPowIOp(block.args[0], k.result)
    block.add_ops([k, op])
    rule = rule_table()[math.FPowIOp]
    assert set(rule.needs_for(op, (True, False))) == (set() if n == 0 else {block.args[0], k.result})


def test_every_float_op_of_arith_and_math_has_a_rule():
    """Ops that can produce an active float: a new one needs a table line."""
    table = rule_table()
    wanted = [
        arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.NegfOp,
        arith.MaximumfOp, arith.MinimumfOp, arith.SelectOp, arith.ExtFOp, arith.TruncFOp,
        math.ExpOp, math.LogOp, math.Log1pOp, math.ExpM1Op, math.SinOp, math.CosOp,
        math.TanOp, math.TanhOp, math.SqrtOp, math.RsqrtOp, math.PowFOp, math.FPowIOp,
        math.AbsFOp, math.AtanOp, math.Atan2Op, math.ErfOp, math.FloorOp, math.CeilOp,
        math.FmaOp,
    ]
    missing = [c.name for c in wanted if c not in table]
    assert not missing
