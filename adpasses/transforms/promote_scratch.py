"""`ad-promote-scratch`: local arrays that never leave their function
allocate nothing per call.

Small-vector code allocates in its loops (`d = np.zeros(3)` per pair of
atoms: a `memref.alloc` and a `memref.dealloc` per iteration, and as many
for the shadow of `d` in the reverse sweep). For each `memref.alloc` of
every function this pass decides:

- **stack slot**: every size a constant, at most `max-bytes` bytes, and the
  function's stack slots together within `stack-budget` bytes. The alloc
  becomes a `memref.alloca` at the start of the function's entry block
  (hoisted out of every loop: MLIR's alloca lives until the function
  returns, so one slot serves every iteration), its sizes constants there,
  its type unchanged; its deallocations are erased. LLVM's SROA then keeps
  the elements in registers when every access has a constant index (after
  unrolling), as for scalar code.
- **workspace**: any other size, freed by exactly one `memref.dealloc`
  later in its own block. Both get `ad.workspace` (and `ad.scratch`): the
  JIT keeps the buffer across calls in a per-thread pool, as for tapes
  (adpasses/lowering/thread_state.py), so a call that needs no more than
  an earlier one allocates nothing.

Only arrays that do not **escape** are touched: every use, through views
(adpasses.analysis.memref_views), is a load, a store *into* it, `dim`,
`rank`, `copy`, `ad.keep`, `ad.shadow_check` (sizes), a deallocation of
the allocation itself, or an argument of a `func.call` to a function of the
module whose parameter does not escape either (the same rules, no deallocation). A returned array, one
yielded by a region op, stored as a value, taped, chosen by a select, passed
to a declaration (an extern) or to any other op stays a heap allocation.
That is what makes one slot per allocation site safe: an array that does not
escape is dead when the block that allocated it ends, before the next
execution of the same alloc (recursion is rejected).

Accesses keep their bounds checks (constant sizes let LLVM fold those it
can prove). The LLVM lowering runs this pass on the module it compiles
(`without_heap_scratch`); `ad-opt -p ad-promote-scratch` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType, ModuleOp, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from adpasses.analysis.memref_views import view_source
from adpasses.core.ir_walk import nested_ops
from adpasses.dialects.ad import SCRATCH_ATTR, WORKSPACE_ATTR, KeepOp, ShadowCheckOp

MAX_STACK_BYTES = 4096
"""Largest array made a stack slot (the size up to which tapes are allocas,
adpasses/transforms/lower_tapes.py)."""

STACK_BUDGET = 64 * 1024
"""Stack slots of one function together: a call from a thread with a small
stack (Python threads: 8 MiB or less) must not overflow."""

_READS_OR_WRITES_IN_PLACE = (memref.LoadOp, memref.DimOp, memref.RankOp, memref.CopyOp, KeepOp, ShadowCheckOp)
"""Uses that read or write the array's memory (or its sizes) and keep no
reference to it."""


class EscapeAnalysis:
    """Whether a memref value's memory may be reached after the block that
    defines it ends. Parameters of the module's functions are memoised;
    a call cycle counts as an escape."""

    def __init__(self, module: ModuleOp):
        self.functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
        self._parameters: dict[SSAValue, bool] = {}

    def escapes(self, value: SSAValue, *, own_allocation: bool) -> bool:
        """`own_allocation`: `value` is the alloc's result, which its
        function may deallocate (a view or a parameter may not)."""
        for use in list(value.uses):
            user = use.operation
            if isinstance(user, _READS_OR_WRITES_IN_PLACE):
                continue
            if isinstance(user, memref.StoreOp):
                if user.value is value:
                    return True  # the memref itself is stored somewhere
                continue
            if isinstance(user, memref.DeallocOp):
                if own_allocation:
                    continue
                return True
            source = view_source(user)
            if source is value:
                if self.escapes(user.results[0], own_allocation=False):
                    return True
                continue
            if isinstance(user, func.CallOp) and self._parameter_escapes(user, use.index):
                return True
            if not isinstance(user, func.CallOp):
                return True
        return False

    def _parameter_escapes(self, call: func.CallOp, index: int) -> bool:
        callee = self.functions.get(call.callee.root_reference.data)
        if callee is None or not callee.body.blocks or index >= len(callee.args):
            return True  # a declaration (extern): it may keep the pointer
        param = callee.args[index]
        if param not in self._parameters:
            self._parameters[param] = True  # a cycle through this parameter escapes
            self._parameters[param] = self.escapes(param, own_allocation=False)
        return self._parameters[param]


def constant_sizes(op: memref.AllocOp) -> list[int] | None:
    """The sizes of every dimension if each is known at compile time."""
    dynamic = iter(op.dynamic_sizes)
    sizes = []
    for s in op.memref.type.get_shape():
        if s == DYNAMIC_INDEX:
            owner = next(dynamic).owner
            if not isinstance(owner, arith.ConstantOp) or not isinstance(owner.value, IntegerAttr):
                return None
            s = owner.value.value.data
        if s < 0:
            return None  # the lowering's check reports it, at run time
        sizes.append(s)
    return sizes


def element_bytes(t: MemRefType) -> int:
    width = getattr(t.element_type, "width", None)
    bits = width.data if width is not None else 64  # index
    return max(1, (bits + 7) // 8)


def _deallocs(op: memref.AllocOp) -> list[memref.DeallocOp]:
    return [use.operation for use in op.memref.uses if isinstance(use.operation, memref.DeallocOp)]


def _to_stack_slot(op: memref.AllocOp, f: func.FuncOp, sizes: list[int]) -> None:
    """`op` as a memref.alloca at the start of `f`'s entry block, its sizes
    constants defined there; its deallocations erased."""
    entry = f.body.blocks[0]
    at = InsertPoint.at_start(entry)
    dynamic: list[SSAValue] = []
    new_ops: list[Operation] = []
    for s, static in zip(sizes, op.memref.type.get_shape()):
        if static == DYNAMIC_INDEX:
            c = arith.ConstantOp.from_int_and_width(s, op.dynamic_sizes[0].type)
            c.location = op.location
            new_ops.append(c)
            dynamic.append(c.result)
    t = op.memref.type
    slot = memref.AllocaOp.get(t.element_type, shape=t.get_shape(), dynamic_sizes=dynamic,
                               layout=t.layout, memory_space=t.memory_space)
    slot.location = op.location
    slot.memref.name_hint = op.memref.name_hint
    new_ops.append(slot)
    Rewriter.insert_op(new_ops, at)
    for dealloc in _deallocs(op):
        Rewriter.erase_op(dealloc)
    op.memref.replace_all_uses_with(slot.memref)
    Rewriter.erase_op(op)


def _freed_once_in_its_block(op: memref.AllocOp) -> memref.DeallocOp | None:
    frees = _deallocs(op)
    if len(frees) != 1 or frees[0].parent_block() is not op.parent_block():
        return None
    return frees[0] if op.is_before_in_block(frees[0]) else None


def promote_scratch(module: ModuleOp, *, max_bytes: int = MAX_STACK_BYTES,
                    stack_budget: int = STACK_BUDGET, workspace: bool = True,
                    dry_run: bool = False) -> bool:
    """Rewrite `module` in place (see the module docstring); True if
    anything changed (`dry_run`: would change; nothing is rewritten)."""
    escape = EscapeAnalysis(module)
    changed = False
    for f in module.ops:
        if not isinstance(f, func.FuncOp) or not f.body.blocks:
            continue
        budget = stack_budget
        for op in [o for o in nested_ops(f) if isinstance(o, memref.AllocOp)]:
            if WORKSPACE_ATTR in op.attributes or escape.escapes(op.memref, own_allocation=True):
                continue
            sizes = constant_sizes(op)
            if sizes is not None:
                nbytes = element_bytes(op.memref.type)
                for s in sizes:
                    nbytes *= s
                if nbytes <= max_bytes and nbytes <= budget:
                    if dry_run:
                        return True
                    budget -= nbytes
                    _to_stack_slot(op, f, sizes)
                    changed = True
                    continue
            dealloc = _freed_once_in_its_block(op) if workspace else None
            if dealloc is not None:
                if dry_run:
                    return True
                for o in (op, dealloc):
                    o.attributes[WORKSPACE_ATTR] = UnitAttr()
                    o.attributes[SCRATCH_ATTR] = UnitAttr()
                changed = True
    return changed


def without_heap_scratch(module: ModuleOp, *, copy: bool = True) -> ModuleOp:
    """`module` itself if it has no allocation to promote, else a promoted
    copy (`copy=False`: `module`, rewritten in place). The caller's module
    is never changed with `copy`: the API prints gradients after lowering."""
    if not any(isinstance(o, memref.AllocOp) for o in nested_ops(module)):
        return module
    if copy and not promote_scratch(module, dry_run=True):
        return module
    target = module.clone() if copy else module
    promote_scratch(target)
    return target


@dataclass(frozen=True)
class PromoteScratchPass(ModulePass):
    """`ad-promote-scratch{max-bytes=4096 stack-budget=65536 workspace=true}`."""

    name = "ad-promote-scratch"
    max_bytes: int = MAX_STACK_BYTES
    stack_budget: int = STACK_BUDGET
    workspace: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        promote_scratch(op, max_bytes=self.max_bytes, stack_budget=self.stack_budget,
                        workspace=self.workspace)
