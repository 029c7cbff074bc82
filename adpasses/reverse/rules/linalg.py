"""Reverse rule of the matrix product `linalg.matmul ins(%A, %B) outs(%C)`
on memrefs (C += A @ B), at the level of matrices:

    dA += dC @ B^T        (if A's memory carries derivatives)
    dB += A^T @ dC        (if B's)

two `linalg.matmul`s on the shadows, the transposes being views (a
`memref.reinterpret_cast` with the sizes and strides swapped), never
copies; dC is left as it is (C's old contents enter C's new ones with
factor 1). After differentiation each product is lowered like the
primal's (`transforms/lower_matmul.py`): BLAS above the size threshold
(the transposed view goes to BLAS with its transpose flag), a vectorised
loop nest below. Nothing is taped per element, unlike the reverse of the
scalar loop nest.

What the reverse reads: the contents of B (for dA) and of A (for dB) as
they were when the product ran (`memory_needs`: the cache plan reuses the
memory when no later write may change it, else snapshots it before the
product and restores it into a scratch buffer for the reverse), and the
memrefs themselves and their shadows (`needs`: reused, or views
recomputed). A product whose operands the reverse sweep cannot name (an
array allocated inside a loop or a branch), or whose output may share
memory with an input (arguments not marked noalias), is lowered to its
loop nest before differentiation instead (`matmul_has_structured_reverse`,
asked by `ad-expand-upstream-ops`), whose scalar rules then apply.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, NoneAttr, StridedLayoutAttr
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation, OpResult, SSAValue

from adpasses.analysis.memref_views import memory_objects
from adpasses.core.diagnostics import error_at
from adpasses.core.types import is_memref_type
from adpasses.reverse.rules.memref import shadow_needs


def reverse_can_name(value: SSAValue) -> bool:
    """Whether the reverse sweep can name the memref `value`: defined in
    the function's top block, or a pure view of such memrefs (a memref
    cannot be taped)."""
    from adpasses.cache.plan import is_recomputable_op
    from adpasses.core.ir_facts import home_block

    block = home_block(value)
    if isinstance(block.parent_op(), func.FuncOp):
        return True
    if isinstance(value, OpResult) and is_recomputable_op(value.op):
        return all(reverse_can_name(v) for v in value.op.operands if is_memref_type(v.type))
    return False


def matmul_has_structured_reverse(op: linalg.MatmulOp, separate: bool) -> bool:
    """The rule below applies: memref operands the reverse can name, and
    an output that shares no memory with the inputs (`separate`, from the
    alias analysis; with a shared one, `C += A @ B` reads elements it has
    written, which only its loop nest's rules follow)."""
    return separate and not op.results and all(reverse_can_name(v) for v in op.inputs)


def transposed(rc, value: SSAValue) -> SSAValue:  # type: ignore[no-untyped-def]
    """A view of the 2-d memref `value` with its dimensions swapped."""
    mtype = value.type
    assert isinstance(mtype, MemRefType)
    md = rc.insert(memref.ExtractStridedMetaDataOp(value))
    offset, sizes, strides = md.results[1], list(md.results[2:4]), list(md.results[4:6])
    result_type = MemRefType(mtype.element_type, [DYNAMIC_INDEX] * 2,
                             StridedLayoutAttr([NoneAttr()] * 2, NoneAttr()))
    view = rc.insert(memref.ReinterpretCastOp(
        value, [offset], sizes[::-1], strides[::-1],
        [DYNAMIC_INDEX], [DYNAMIC_INDEX] * 2, [DYNAMIC_INDEX] * 2, result_type))
    return view.results[0]


class MatmulRule:
    def _active(self, op: linalg.MatmulOp, activity) -> tuple[bool, bool]:  # type: ignore[no-untyped-def]
        a, b = op.inputs
        return activity.is_active_memory(a), activity.is_active_memory(b)

    def _check(self, op: linalg.MatmulOp) -> None:
        a, b = op.inputs
        (c,) = op.outputs
        shared = set(memory_objects(c)) & (set(memory_objects(a)) | set(memory_objects(b)))
        if shared:
            raise error_at(op, "writes its product into memory that one of its inputs may share: the "
                               "reverse of C += A @ B needs A and B as they were; write the product "
                               "into a separate array")

    def needs(self, op: linalg.MatmulOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        self._check(op)
        a, b = op.inputs
        (c,) = op.outputs
        want_a, want_b = self._active(op, activity)
        needs = list(shadow_needs(c))  # C itself is not read: its shadow is
        if want_a:
            needs += [a, b, *shadow_needs(a)]
        if want_b:
            needs += [a, b, *shadow_needs(b)]
        return needs

    def memory_needs(self, op: linalg.MatmulOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        a, b = op.inputs
        want_a, want_b = self._active(op, activity)
        return list(dict.fromkeys([*([b] if want_a else []), *([a] if want_b else [])]))

    def reverse(self, rc, op: linalg.MatmulOp) -> None:  # type: ignore[no-untyped-def]
        a, b = op.inputs
        (c,) = op.outputs
        want_a, want_b = self._active(op, rc.activity)
        if not (want_a or want_b):
            return
        sweep = rc.sweep
        dc = rc.shadow(c)
        scratch: dict[SSAValue, SSAValue] = {}

        def contents(m: SSAValue) -> SSAValue:
            if sweep.plan.memory_kind(op, m) != "snapshot":
                return rc.primal(m)
            if rc.width != 1:  # the rule runs once per lane: each would pop the snapshot
                raise error_at(op, "needs a snapshot of an operand that is overwritten later, which "
                                   "vector reverse mode (width > 1) does not support yet; "
                                   "differentiate with width 1")
            if m not in scratch:  # x @ x: one snapshot, restored once
                scratch[m] = sweep.restore_snapshot(rc, op, m)
            return scratch[m]

        if want_a:
            rc.insert(linalg.MatmulOp([dc, transposed(rc, contents(b))], [rc.shadow(a)]))
        if want_b:
            rc.insert(linalg.MatmulOp([transposed(rc, contents(a)), dc], [rc.shadow(b)]))
        for buffer in scratch.values():
            sweep.release_scratch(rc, buffer)


RULES = {linalg.MatmulOp: MatmulRule()}
