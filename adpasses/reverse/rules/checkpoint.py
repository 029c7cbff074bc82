"""Reverse rule of a checkpointed call (`func.call` with `ad.checkpoint`).

The forward sweep runs the call as it is: the callee's primal, nothing
taped inside it. The reverse sweep recomputes it: it calls the callee's
own gradient (built by `ad-build-gradients` for the activities seen here),
which reruns the callee's forward sweep, taping locally, then its reverse.
That rerun needs the call's inputs as they were when the call ran:

- scalar operands: needs of the rule, made available by the cache plan
  (reused, recomputed or taped: only the inputs are taped, never the
  callee's internals);
- memref operands: the cache plan snapshots the contents of those that the
  call itself or later code may overwrite (`plan.plan_memory`); the
  reverse restores the snapshot into a scratch buffer and passes that, so
  the primal memory keeps its final contents. Memory nothing overwrites is
  passed as it is; memory the callee writes before reading it gets an
  uninitialised scratch buffer (nothing taped).

The shadow of each memref operand with active memory is passed (`dup`);
the adjoint of each active float result is the callee gradient's seed; the
adjoints it returns are added to the active float operands.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.ir import Operation, OpResult, SSAValue

from adpasses.core.diagnostics import error_at
from adpasses.core.types import is_float_type, is_memref_type


def _available_memref(value: SSAValue) -> bool:
    """A memref the reverse sweep can name: defined in the function's top
    block, or a pure view of such memrefs (memrefs cannot be taped)."""
    from adpasses.cache.plan import is_recomputable_op
    from adpasses.core.ir_facts import home_block

    block = home_block(value)
    if isinstance(block.parent_op(), func.FuncOp):
        return True
    if isinstance(value, OpResult) and is_recomputable_op(value.op):
        return all(_available_memref(v) for v in value.op.operands if is_memref_type(v.type))
    return False


class CheckpointCallRule:
    def needs(self, op: func.CallOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        for v in op.operands:
            if is_memref_type(v.type) and not _available_memref(v):
                from adpasses.cache.report import value_label

                raise error_at(
                    op,
                    f"is a checkpointed call whose array argument {value_label(v)} is allocated "
                    "inside a loop or a branch; its recomputation needs the array in the reverse "
                    "sweep, where such an array does not exist: allocate it before the loop (or "
                    "do not checkpoint this call)",
                )
        return list(op.operands)

    def memory_needs(self, op: func.CallOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        return [v for v in dict.fromkeys(op.operands) if is_memref_type(v.type)]

    def reverse(self, rc, op: func.CallOp) -> None:  # type: ignore[no-untyped-def]
        sweep = rc.sweep
        if sweep.callee_gradient is None:
            raise error_at(op, "is a checkpointed call, but no gradient of its callee can be built here")
        activity = rc.activity
        args: list[SSAValue] = []
        acts: list[str] = []
        scratch: dict[SSAValue, SSAValue] = {}
        active_scalars: list[SSAValue] = []
        for v in op.operands:
            if is_memref_type(v.type):
                kind = sweep.plan.memory_kind(op, v)
                if kind in ("snapshot", "scratch"):
                    if v not in scratch:
                        scratch[v] = (sweep.restore_snapshot(rc, op, v) if kind == "snapshot"
                                      else sweep.scratch_buffer(rc, v))
                    args.append(scratch[v])
                else:
                    args.append(rc.primal(v))
                if activity.is_active_memory(v):
                    acts.append("dup")
                    args.append(rc.shadow(v))
                else:
                    acts.append("const")
            elif is_float_type(v.type) and activity.is_active(v):
                acts.append("active")
                args.append(rc.primal(v))
                active_scalars.append(v)
            else:
                acts.append("const")
                args.append(rc.primal(v))
        rets = ["active" if activity.is_active(r) else "const" for r in op.results]
        args += [rc.adjoint_or_zero(r) for r in op.results if activity.is_active(r)]
        name = (sweep.callee_gradient(op.callee.root_reference.data, acts, rets, strong_zero=True)
                if sweep.strong_zero else sweep.callee_gradient(op.callee.root_reference.data, acts, rets))
        sweep.checkpointed_calls.append((op, name))
        call = rc.insert(func.CallOp(name, args, [v.type for v in active_scalars]))
        for v, g in zip(active_scalars, call.results):
            rc.add_adjoint(v, g)
        for buffer in scratch.values():
            sweep.release_scratch(rc, buffer)


def is_checkpointed(op: Operation) -> bool:
    from adpasses.dialects.ad import CHECKPOINT_ATTR

    return isinstance(op, func.CallOp) and CHECKPOINT_ATTR in op.attributes
