"""Integer literals that do not fit their type are errors, with a location.

xDSL checks the range of an `IntegerAttr` of an integer type when it is
built, but not of `index`: `arith.constant 18446744073709551616 : index`
parsed, and the lowering emitted it as 0. Like MLIR, an index literal
must fit in 64 bits (either signedness: -2**63 .. 2**64 - 1; values from
2**63 up are bit patterns, 2**64 - 1 is -1). `check_literals(op)` runs on
every op the MLIR parser makes (adpasses.core.context) and in `verify_module`.
The Python frontend checks its own literals (a Python int must fit in a
signed 64-bit integer there).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IndexType, IntegerAttr
from xdsl.ir import Attribute, Operation

from adpasses.core.diagnostics import CompileError

INDEX_MIN, INDEX_END = -(1 << 63), 1 << 64


def check_literals(op: Operation) -> None:
    """Raise a CompileError at `op` for an index literal out of range."""
    for attr in (*op.properties.values(), *op.attributes.values()):
        _check(op, attr)


def _check(op: Operation, attr: Attribute) -> None:
    if isinstance(attr, IntegerAttr):
        value = attr.value.data
        if isinstance(attr.type, IndexType) and not INDEX_MIN <= value < INDEX_END:
            raise CompileError(f"'{op.name}': integer literal {value} is out of range for index "
                               f"(64 bits: from -2**63 to 2**64 - 1)", op=op)
    elif isinstance(attr, ArrayAttr):
        for inner in attr.data:
            _check(op, inner)
    elif isinstance(attr, DictionaryAttr):
        for inner in attr.data.values():
            _check(op, inner)
