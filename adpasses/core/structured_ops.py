"""Ops on whole memrefs that accumulate into their outputs: which memrefs
each reads and writes (the table the effects, the activity analysis and
the derivative rules read; no pass names such an op to follow data).

`linalg.matmul ins(%A, %B) outs(%C)` on memrefs: C += A @ B. It reads A,
B and C's old contents and writes C; C's new contents depend on all three.
It stays a structured op through differentiation (its rules:
`reverse/rules/linalg.py`, `forward/rules/linalg.py`) and becomes BLAS or
loops only before the LLVM lowering (`transforms/lower_matmul.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation, SSAValue


@dataclass(frozen=True)
class StructuredOp:
    """`reads(op)`: the memrefs whose contents the op reads (an output it
    accumulates into included); `writes(op)`: those it writes, whose new
    contents depend on everything it reads."""

    reads: Callable[[Operation], Sequence[SSAValue]]
    writes: Callable[[Operation], Sequence[SSAValue]]


STRUCTURED_OPS: dict[type[Operation], StructuredOp] = {
    linalg.MatmulOp: StructuredOp(reads=lambda op: [*op.inputs, *op.outputs],  # type: ignore[attr-defined]
                                  writes=lambda op: list(op.outputs)),  # type: ignore[attr-defined]
}


def structured_op(op: Operation) -> StructuredOp | None:
    """The entry of `op` if it is a structured op on memrefs (no tensor
    results: on tensors it is not a memory op)."""
    entry = STRUCTURED_OPS.get(type(op))
    return entry if entry is not None and not op.results else None
