"""Which arguments' memory a function's memref results address.

A helper that returns a view of its argument (`def flip(x): return x[::-1]`
compiles to `func.return (memref.reinterpret_cast %x ...)`) hands its
caller memory the caller already knows: the call's result is a view of the
memref the caller passed. Without this summary the result is memory of
unknown origin, which may be any argument or escaped allocation, and a
prange loop reading it is refused although it only reads an argument
(issue 17; fuzz seed 100145, test/test_prange_call_results.py).

`returned_arguments(callee, summary)` is, per result, the positions of the
parameters whose memory the result may address on every return: the
returned value traced through views (`memref_views.memory_objects`: also
through a run-time choice between memrefs) and through calls of functions
summarised the same way; None when some return may give other memory (an
allocation, a global, a memref carried by a loop, an unknown call). Only
memory identity is summarised: what the callee writes is the call's write
effect (`memory_writes.WriteEffects`), judged on its own.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import func
from xdsl.ir import OpResult, SSAValue

from adpasses.analysis.memref_views import memory_objects
from adpasses.core.types import is_memref_type

Summary = Callable[[str], "tuple[frozenset[int] | None, ...] | None"]
"""The summary of another function by name (None: not in the module, or
being summarised: recursion), for calls inside a callee."""


def returned_arguments(callee: func.FuncOp, summary: Summary) -> tuple[frozenset[int] | None, ...]:
    """Per result of `callee`: the parameter positions whose memory it may
    address (a view of them, or one of them chosen at run time), or None
    when it may address other memory (or is not a memref)."""
    results = callee.function_type.outputs.data
    if not callee.body.blocks:
        return tuple(None for _ in results)
    params = list(callee.body.blocks.first.args)
    returns = [op for block in callee.body.blocks for op in block.ops if isinstance(op, func.ReturnOp)]
    found: list[frozenset[int] | None] = []
    for position, result_type in enumerate(results):
        if not is_memref_type(result_type) or not returns:
            found.append(None)
            continue
        positions: set[int] | None = set()
        for ret in returns:
            sources = _sources(ret.operands[position], params, summary, depth=0)
            if sources is None:
                positions = None
                break
            positions |= sources
        found.append(None if positions is None else frozenset(positions))
    return tuple(found)


def _sources(value: SSAValue, params: list[SSAValue], summary: Summary, depth: int) -> set[int] | None:
    """The positions in `params` of the memory `value` may address, or None."""
    if depth > 16:
        return None
    positions: set[int] = set()
    for root in memory_objects(value):
        if root in params:
            positions.add(params.index(root))
            continue
        if not (isinstance(root, OpResult) and isinstance(root.op, func.CallOp)):
            return None
        inner = summary(root.op.callee.root_reference.data)
        if inner is None or root.index >= len(inner) or inner[root.index] is None:
            return None
        for k in inner[root.index]:  # type: ignore[union-attr]
            sources = _sources(root.op.operands[k], params, summary, depth + 1)
            if sources is None:
                return None
            positions |= sources
    return positions
