"""The op table (`adpasses/ops/`) is the one place an op's facts live.

Every view (the frontend's maps, the reverse rules, the LLVM lowering, the
cache planner's costs, the fuzzer's op list) holds every entry, and no view
names a scalar op that is not in the table. The partials of every entry are
checked against finite differences in test_rules_numeric.py, what each rule
reads against its traced needs in test_rule_tables.py.
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import arith, math

from adpasses.cache.cost_model import OTHER_COSTS, RECOMPUTE_COST
from adpasses.frontend import arithmetic as frontend_arithmetic
from adpasses.frontend import expressions as frontend_expressions
from adpasses.frontend import unsupported
from adpasses.tools.fuzz.ops import OPS
from adpasses.lowering import scalar_ops
from adpasses.lowering.core import op_table as lowering_table
from adpasses.ops import OP_TABLE, ScalarOp
from adpasses.ops.entry import TRANSCENDENTAL, Custom, Intrinsic, ToInt
from adpasses.reverse.rules import ScalarRule, rule_table

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = sorted(OP_TABLE.values(), key=lambda e: e.op.name)


def _frontend_map_for(entry: ScalarOp, spelling: object) -> dict:
    if isinstance(spelling, ToInt):
        return frontend_expressions.TO_INT_MATH
    if isinstance(spelling, type) and issubclass(spelling, ast.AST):
        return (frontend_arithmetic.FLOAT_UNARY_OPERATORS if entry.arity == 1
                else frontend_arithmetic.FLOAT_OPERATORS)
    return frontend_expressions.UNARY_MATH if entry.arity == 1 else frontend_expressions.BINARY_MATH


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.op.name)
def test_every_view_has_the_entry(entry: ScalarOp) -> None:
    cls = entry.op
    rule = rule_table().get(cls)
    assert isinstance(rule, ScalarRule) and rule.entry is entry, f"{cls.name}: no rule derived from its entry"
    assert lowering_table()[cls] is scalar_ops.LOWERINGS[cls], f"{cls.name}: lowered by something else"
    if isinstance(entry.llvm, Custom):
        assert cls in scalar_ops.CUSTOM
    assert RECOMPUTE_COST[cls] == entry.cost
    for spelling in entry.python:
        key = spelling.fn if isinstance(spelling, ToInt) else spelling
        assert _frontend_map_for(entry, spelling).get(key) is cls, f"{cls.name}: {spelling} not compiled to it"
    if entry.oracle is not None:
        spec = OPS[cls.name.split(".", 1)[1]]
        assert (spec.mlir, spec.python, spec.domains) == (cls.name, entry.oracle, entry.domains)


def test_no_view_names_an_op_outside_the_table() -> None:
    table = set(OP_TABLE)
    for view in (frontend_expressions.UNARY_MATH, frontend_expressions.BINARY_MATH,
                 frontend_expressions.TO_INT_MATH, frontend_arithmetic.FLOAT_OPERATORS,
                 frontend_arithmetic.FLOAT_UNARY_OPERATORS):
        assert set(view.values()) <= table
    assert {spec.mlir for spec in OPS.values()} <= {cls.name for cls in table}
    scalar_rules = {cls for cls, r in rule_table().items() if isinstance(r, ScalarRule)}
    assert scalar_rules == table
    assert not (table & set(OTHER_COSTS)), "an entry's cost is its entry's, not a second list's"
    assert set(RECOMPUTE_COST) == table | set(OTHER_COSTS)
    # Float ops the lowering handles: all from the table (none lowered
    # without a derivative).
    lowered = set(lowering_table())
    math_ops = {c for c in lowered if c.name.startswith("math.")}
    assert math_ops <= table
    float_arith = {c for c in lowered if c.name.startswith("arith.") and c.name.endswith("f")
                   and c is not arith.CmpfOp}
    assert float_arith <= table


def _function_names() -> set[str]:
    """The names of the table's Python function spellings (`exp`, `arcsinh`)."""
    names = set()
    for entry in OP_TABLE.values():
        for spelling in entry.python:
            fn = spelling.fn if isinstance(spelling, ToInt) else spelling
            if not (isinstance(fn, type) and issubclass(fn, ast.AST)):
                names.add(fn.__name__)
    return names


def test_the_frontend_doc_lists_every_spelling() -> None:
    """docs/frontend.md's list of math/numpy functions is a view too."""
    text = (ROOT / "docs/frontend.md").read_text()
    start = text.index("- `math.*` and `np.*` functions on scalars")
    bullet = text[start:text.index("\n- ", start + 1)]
    missing = sorted(n for n in _function_names() if not re.search(rf"\b{n}\b", bullet))
    assert not missing, f"docs/frontend.md does not list {missing}"


def test_no_unsupported_hint_names_a_compiled_function() -> None:
    """A hint 'write ... instead' for a function the frontend compiles is
    dead text (np.arctanh had one after it became an entry)."""
    compiled = {fn for view in (frontend_expressions.UNARY_MATH, frontend_expressions.BINARY_MATH)
                for fn in view}
    stale = sorted([f"np.{n}" for n in unsupported.NUMPY_SCALAR_HINTS if getattr(np, n, None) in compiled]
                   + [n for n in unsupported.BUILTIN_HINTS if getattr(builtins, n, None) in compiled])
    assert not stale, f"frontend/unsupported.py has hints for compiled functions: {stale}"


def test_every_float_op_the_frontend_emits_is_in_the_table() -> None:
    """Ops the frontend builds itself (`**`, hypot, abs, conversions)."""
    for cls in (math.PowFOp, math.FPowIOp, math.SqrtOp, math.AbsFOp, math.FloorOp,
                arith.SelectOp, arith.ExtFOp, arith.TruncFOp, arith.MaximumfOp, arith.MinimumfOp):
        assert cls in OP_TABLE


def test_a_missing_field_fails_when_the_table_loads() -> None:
    with pytest.raises(TypeError, match="cost"):
        ScalarOp(math.ExpOp, python=(), partials=lambda x, r: [r], llvm=Intrinsic("llvm.exp"),  # type: ignore[call-arg]
                 domains=("small",), oracle=None)
    with pytest.raises(ValueError, match="1 domains for 2 operands"):
        ScalarOp(math.PowFOp, python=(), partials=lambda a, b, r: [b, a], llvm=Intrinsic("llvm.pow"),
                 cost=TRANSCENDENTAL, domains=("pos",), oracle=None)
    with pytest.raises(ValueError, match="unknown domain"):
        ScalarOp(math.ExpOp, python=(), partials=lambda x, r: [r], llvm=Intrinsic("llvm.exp"),
                 cost=TRANSCENDENTAL, domains=("positive",), oracle=None)


ENGINE = ("adpasses/reverse/reverse_context.py", "adpasses/reverse/gradient.py", "adpasses/reverse/rules")
ALLOWED = {
    "AddfOp": "adjoints are accumulated",
    "SelectOp": "the shadow of a select between memrefs (rules/arith.py) and its engine helper",
}


def test_the_reverse_engine_names_no_scalar_op() -> None:
    """Adjoints of scalar ops come from their entries' partials only."""
    names = {cls.__name__ for cls in OP_TABLE}
    found = []
    for target in ENGINE:
        path = ROOT / target
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            for node in ast.walk(ast.parse(file.read_text())):
                if isinstance(node, ast.Attribute) and node.attr in names and node.attr not in ALLOWED:
                    found.append(f"{file.relative_to(ROOT)}:{node.lineno}: {node.attr}")
                if isinstance(node, ast.alias) and node.name in names:
                    found.append(f"{file.relative_to(ROOT)}:{node.lineno}: imports {node.name}")
    assert not found, "scalar ops named outside the op table:\n" + "\n".join(found)
