"""What memory each op may write, for the alias analysis.

- memref.store: one element;
- memref.copy: every element of the target view;
- a linalg structured op (generic, fill, matmul, ...): its output views;
- ad.gemm (BLAS `c += a @ b`): the view `c`;
- memref.dealloc: all of its object (the memory is gone);
- memref.alloca_scope: all of the allocas it frees when it ends;
- func.call: judged from the callee's body when the module has it
  (`CalleeEffect`; the memref arguments it may write, `written_arguments`),
  else like an op with unknown effects. A callee that only addresses its
  arguments' memory through their views (`stays_in_views`: no
  reinterpret_cast or raw pointer, nor a call of a function that has one)
  writes every element of those views at most (a row `X[i, :]` passed to
  it is that row), else all of each written argument's object;
- an op with write/free effects: all of each memref operand's object; with
  unknown effects (no effect trait), also any memory reachable from
  outside the function;
- the memrefs its effects name (`effects.effects_of`): nothing for
  ad.tape.* (their tape) and printf.* (the output);
- nothing: loads, views, terminators, pure ops, and the region ops of
  `region_flow` themselves (the ops in their bodies are visited on their
  own).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from math import prod

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType, NoneAttr
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Operation, SSAValue
from xdsl.traits import IsTerminator, MemoryEffectKind, RecursiveMemoryEffect, SymbolTable

from adpasses.dialects.ad import NO_MEMORY_ATTR, GemmOp, OverlapsOp, SelfOverlapsOp, SizeMatchOp
from adpasses.core.effects import effects_of, touches_memory
from adpasses.analysis.memref_access import ObjectKind, object_of
from adpasses.analysis.memref_views import is_view_result
from adpasses.analysis.returned_views import returned_arguments
from adpasses.core.region_flow import REGION_FLOWS

READ_ONLY_USERS = (memref.LoadOp, memref.DimOp, memref.RankOp, SizeMatchOp, OverlapsOp,
                   SelfOverlapsOp)
"""Memref ops that only read (or only look at the descriptor: ad.size_match
compares sizes)."""


REVIEWING_OPS = (memref.ReinterpretCastOp, memref.ExtractAlignedPointerAsIndexOp, memref.ViewOp,
                 memref.GetGlobalOp)
"""Ops that make an address of their own from a memref (or a global):
a function containing one may reach memory outside the views it is
given."""


def flattens_own_elements(op: Operation) -> bool:
    """Whether `op` is the 1-D view of every element of an identity-layout
    memref, in order: `memref.reinterpret_cast %m to offset 0, sizes
    [dim(%m, 0) * ... * dim(%m, r-1)], strides [1]` (`seed_loops._flat_view`),
    which addresses exactly %m's elements."""
    if not isinstance(op, memref.ReinterpretCastOp) or not isinstance(op.source.type, MemRefType):
        return False
    source_type = op.source.type
    if not isinstance(source_type.layout, NoneAttr) or op.offsets or op.strides:
        return False
    if tuple(op.static_offsets.get_values()) != (0,) or tuple(op.static_strides.get_values()) != (1,):
        return False
    shape = source_type.get_shape()
    if len(op.sizes) == 0:  # static: the product of the static shape
        return (DYNAMIC_INDEX not in shape and len(op.static_sizes.get_values()) == 1
                and op.static_sizes.get_values()[0] == prod(shape))
    if len(op.sizes) != 1:
        return False
    dims: list[int] = []
    constant = 1
    pending = [op.sizes[0]]
    while pending:
        v = pending.pop()
        owner = v.owner
        if isinstance(owner, arith.MuliOp):
            pending += [owner.lhs, owner.rhs]
        elif isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            constant *= owner.value.value.data
        elif isinstance(owner, memref.DimOp) and owner.source == op.source \
                and isinstance(owner.index.owner, arith.ConstantOp) \
                and isinstance(owner.index.owner.value, IntegerAttr):
            dims.append(owner.index.owner.value.value.data)
        else:
            return False
    # each dimension once, by its memref.dim or (a static one) folded into the constants
    missing = set(range(len(shape))) - set(dims)
    return (len(set(dims)) == len(dims) and set(dims) <= set(range(len(shape)))
            and all(shape[k] != DYNAMIC_INDEX for k in missing)
            and constant == prod(shape[k] for k in missing))


class Extent(Enum):
    ELEMENT = "element"  # memref.store: one element
    VIEW = "view"  # memref.copy: every element of the target view
    OBJECT = "object"  # dealloc, calls: anything in the memref's object
    OUTSIDE = "outside"  # unknown code: any memory reachable from outside


@dataclass(frozen=True)
class WriteTarget:
    extent: Extent
    memref: SSAValue | None = None  # None for OUTSIDE
    indices: tuple[SSAValue, ...] = ()  # for ELEMENT


class CalleeEffect(Enum):
    NONE = "writes no memory"
    ARGUMENTS = "writes only memory reachable from its memref arguments"
    UNKNOWN = "may write anything"


class WriteEffects:
    """`targets(op)`: what `op` may write. Callees found in `module` are
    summarised once (`CalleeEffect`)."""

    def __init__(self, module: Operation | None):
        self.module = module
        self._callees: dict[str, CalleeEffect] = {}

    def targets(self, op: Operation) -> list[WriteTarget]:
        if isinstance(op, memref.StoreOp):
            return [WriteTarget(Extent.ELEMENT, op.memref, tuple(op.indices))]
        if isinstance(op, memref.CopyOp):
            return [WriteTarget(Extent.VIEW, op.destination)]
        if isinstance(op, memref.DeallocOp):
            return [WriteTarget(Extent.OBJECT, op.memref)]
        if isinstance(op, READ_ONLY_USERS) or (op.results and is_view_result(op.results[0])):
            return []
        if isinstance(op, memref.AllocaScopeOp):
            return [
                WriteTarget(Extent.OBJECT, inner.memref)
                for inner in op.walk()
                if isinstance(inner, memref.AllocaOp) and alloca_scope_of(inner) is op
            ]
        if isinstance(op, GemmOp):
            return [WriteTarget(Extent.VIEW, op.c)]  # c += a @ b: c's elements only
        if is_structured_op(op):
            # linalg.generic/fill/matmul...: reads its inputs, writes its outputs
            return [WriteTarget(Extent.VIEW, v) for v in op.outputs  # type: ignore[attr-defined]
                    if isinstance(v.type, MemRefType)]
        if op.has_trait(IsTerminator) or op.has_trait(RecursiveMemoryEffect) or type(op) in REGION_FLOWS:
            return []  # the ops inside a loop or a branch are visited themselves
        operands = [
            WriteTarget(Extent.OBJECT, v) for v in op.operands if isinstance(v.type, MemRefType)
        ]
        if isinstance(op, func.CallOp):
            name = op.callee.root_reference.data
            effect = self.callee_effect(name)
            if effect is CalleeEffect.NONE:
                return []
            if effect is CalleeEffect.ARGUMENTS:
                written = self.written_arguments(name)
                if written is None:
                    return operands
                extent = Extent.VIEW if self.stays_in_views(name) else Extent.OBJECT
                return [WriteTarget(extent, v) for k, v in enumerate(op.operands)
                        if k in written and isinstance(v.type, MemRefType)]
            return operands + [WriteTarget(Extent.OUTSIDE)]
        effects = effects_of(op)
        if effects is None:
            return operands + [WriteTarget(Extent.OUTSIDE)]
        writes = [e for e in effects if e.kind in (MemoryEffectKind.WRITE, MemoryEffectKind.FREE)
                  and touches_memory(e)]
        if not writes:
            return []  # reads, or writes to a tape or the output
        if all(isinstance(e.value, SSAValue) for e in writes):
            return [WriteTarget(Extent.OBJECT, e.value) for e in writes]  # the memrefs it names
        if operands:
            return operands  # a known write: the memrefs it is given
        return operands + [WriteTarget(Extent.OUTSIDE)]

    def written_arguments(self, name: str) -> set[int] | None:
        """The positions of the memref arguments the callee `name` may write
        (`written_arguments`), once per callee; None if unknown."""
        cache = self.__dict__.setdefault("_written", {})
        if name not in cache:
            cache[name] = None  # while summarising: recursion
            callee = SymbolTable.lookup_symbol(self.module, name) if self.module else None
            cache[name] = (written_arguments(self, callee) if isinstance(callee, func.FuncOp)
                           else None)
        return cache[name]

    def returned_arguments(self, name: str) -> tuple[frozenset[int] | None, ...] | None:
        """Per memref result of the callee `name` (a function of the
        module): the positions of the arguments whose memory it addresses
        (`returned_views`: a helper returning `x[::-1]`), or None for a
        result that may address other memory; None for a function the
        module does not define (and while summarising it: recursion)."""
        cache = self.__dict__.setdefault("_returned", {})
        if name not in cache:
            cache[name] = None  # while summarising: recursion
            callee = SymbolTable.lookup_symbol(self.module, name) if self.module else None
            if isinstance(callee, func.FuncOp) and callee.body.blocks:
                cache[name] = returned_arguments(callee, self.returned_arguments)
        return cache[name]

    def stays_in_views(self, name: str) -> bool:
        """Whether the callee `name` (a function of the module) reads and
        writes its memref arguments only within the views it is given:
        every access goes through loads, stores, subviews, casts, copies,
        linalg ops and calls of such functions, never an op that rebuilds
        an address (`REVIEWING_OPS`: a reinterpret_cast may address any
        element of the argument's buffer). In-bounds indices assumed, as
        everywhere in the analysis (the bounds checks stay)."""
        cache = self.__dict__.setdefault("_in_views", {})
        if name not in cache:
            cache[name] = False  # while summarising: recursion
            callee = SymbolTable.lookup_symbol(self.module, name) if self.module else None
            cache[name] = isinstance(callee, func.FuncOp) and bool(callee.body.blocks) and all(
                (not isinstance(op, REVIEWING_OPS) or flattens_own_elements(op))
                and (not isinstance(op, func.CallOp) or self.stays_in_views(op.callee.root_reference.data))
                for op in callee.body.walk())
        return cache[name]

    def callee_effect(self, name: str) -> CalleeEffect:
        """NONE if the callee's body writes nothing; ARGUMENTS if every write
        in it goes to its own arguments or allocations (no `get_global`, calls
        only to such functions); UNKNOWN otherwise, for external functions
        and for recursion; NONE for a declaration marked `ad.no_memory`."""
        if name in self._callees:
            return self._callees[name]
        self._callees[name] = CalleeEffect.UNKNOWN  # while summarising: recursion
        callee = SymbolTable.lookup_symbol(self.module, name) if self.module else None
        effect = CalleeEffect.UNKNOWN
        if isinstance(callee, func.FuncOp) and not callee.body.blocks and NO_MEMORY_ATTR in callee.attributes:
            effect = CalleeEffect.NONE  # a declared pure C function (adpasses.extern)
        elif isinstance(callee, func.FuncOp) and callee.body.blocks:
            effect = CalleeEffect.NONE
            for op in callee.body.walk():
                if isinstance(op, memref.GetGlobalOp):
                    effect = CalleeEffect.UNKNOWN
                    break
                for target in self.targets(op):
                    if target.extent is Extent.OUTSIDE or (
                        target.memref is not None
                        and object_of(target.memref).kind is ObjectKind.UNKNOWN
                    ):
                        effect = CalleeEffect.UNKNOWN
                        break
                    effect = CalleeEffect.ARGUMENTS
                if effect is CalleeEffect.UNKNOWN:
                    break
        self._callees[name] = effect
        return effect


def is_structured_op(op: Operation) -> bool:
    """A linalg structured op (linalg.generic, fill, matmul, ...): on
    memrefs it writes (parts of) its output views and nothing else."""
    return isinstance(op, LinalgStructuredOperation)


def alloca_scope_of(alloca: memref.AllocaOp) -> memref.AllocaScopeOp | None:
    """The alloca_scope that frees `alloca` when it ends, if any."""
    parent = alloca.parent_op()
    while parent is not None and not isinstance(parent, (memref.AllocaScopeOp, func.FuncOp)):
        parent = parent.parent_op()
    return parent if isinstance(parent, memref.AllocaScopeOp) else None


def written_arguments(effects: WriteEffects, callee: func.FuncOp) -> set[int] | None:
    """The positions of the memref arguments `callee` may write (through
    views, nested calls too); None if it may write memory it was not given
    (unknown memory, globals, an external function)."""
    if not callee.body.blocks:
        return None
    params = list(callee.body.block.args)
    written: set[int] = set()
    for op in callee.body.walk():
        if isinstance(op, memref.GetGlobalOp):
            return None
        for target in effects.targets(op):
            if target.extent is Extent.OUTSIDE or target.memref is None:
                return None
            obj = object_of(target.memref)
            if obj.kind is ObjectKind.ARGUMENT and obj.value in params:
                written.add(params.index(obj.value))
            elif obj.kind is ObjectKind.UNKNOWN:
                return None
    return written


def written_before_read(callee: func.FuncOp, index: int) -> bool:
    """Whether `callee` writes every element of its memref argument `index`
    before reading it, so that its contents on entry never matter: every
    load of it (directly, no view) is at indices that are the induction
    variables of a loop nest whose store of the same argument, at the same
    induction variables, runs earlier in the same instance (the stores'
    nest precedes the loads' nest in one block, with the same bounds, and
    stores unconditionally in its innermost body). Copies from it, views of
    it and calls with it count as reads."""
    from xdsl.dialects import scf

    if not callee.body.blocks:
        return False
    arg = callee.body.block.args[index]
    loads, stores = [], []
    for use in arg.uses:
        user = use.operation
        if isinstance(user, memref.LoadOp):
            loads.append(user)
        elif isinstance(user, memref.StoreOp) and user.memref is arg and user.value is not arg:
            stores.append(user)
        elif not isinstance(user, (memref.DimOp, memref.RankOp)):
            return False

    def nest(access: Operation) -> list[scf.ForOp] | None:
        """The loops whose ivs index `access`, innermost last, if its
        indices are exactly those ivs and it sits directly in their bodies."""
        loops: list[scf.ForOp] = []
        op = access
        for index_value in reversed(list(access.indices)):  # type: ignore[attr-defined]
            parent = op.parent_op()
            if not isinstance(parent, scf.ForOp) or index_value is not parent.body.block.args[0]:
                return None
            loops.append(parent)
            op = parent
        return list(reversed(loops))

    def same_bounds(a: scf.ForOp, b: scf.ForOp) -> bool:
        return a.lb is b.lb and a.ub is b.ub and a.step is b.step

    for load in loads:
        lnest = nest(load)
        if not lnest:
            return False
        covered = False
        for store in stores:
            snest = nest(store)
            if (snest and len(snest) == len(lnest) and all(same_bounds(a, b) for a, b in zip(snest, lnest))
                    and snest[0].parent_block() is lnest[0].parent_block()
                    and snest[0].is_before_in_block(lnest[0])):
                covered = True
                break
        if not covered:
            return False
    return True
