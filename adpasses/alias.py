"""Alias analysis for memrefs, and which writes may clobber a load.

Facts used (soundness first: anything not proven is MAY):
- views (subview, cast, reinterpret_cast, ...) address their source's memory
  (`memref_views.memory_object` finds the underlying object);
- distinct allocations never alias each other or any argument;
- function arguments may alias each other unless one carries `ad.noalias`
  or `llvm.noalias`;
- two views of one object with provably disjoint static ranges do not alias.

For a load and a write to the same object, the element each touches is an
affine form of index values (`affine_index`), composed through subviews
with constant steps. A write may clobber a load when it can execute after it
and touch the same element:
- in the same iteration of every loop enclosing both, after it in program
  order: clobbered unless some dimension differs by a nonzero constant;
- in a later iteration t >= 1 of a common scf.for with step s: the write's
  induction variable is i + t*s and every value defined inside that loop is
  unknown; clobbered unless some dimension's difference is nonzero for all
  t >= 1;
- in a later iteration of a common scf.while: assumed clobbered.
The reverse pass asks `clobbers(load)`: empty means the load can be issued
again in the reverse sweep instead of taping its value.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from adpasses.affine_index import Affine, affine_form, constant_of
from adpasses.diagnostics import op_location
from adpasses.memref_views import is_allocation, is_function_argument, memory_object

NOALIAS_ATTRS = ("ad.noalias", "llvm.noalias")


class AliasKind(Enum):
    NO_ALIAS = "no-alias"
    MAY_ALIAS = "may-alias"
    MUST_ALIAS = "must-alias"


@dataclass(frozen=True)
class AliasResult:
    kind: AliasKind
    reason: str


@dataclass(frozen=True)
class Clobber:
    op: Operation
    reason: str


def _name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else f"%<{type(value.owner).__name__}>"


def _where(op: Operation) -> str:
    return op_location(op) or op.name


@dataclass(frozen=True)
class Location:
    """The element an access touches: object, and per object dimension an
    affine form (None: unknown element of the object)."""

    base: SSAValue
    dims: tuple[Affine, ...] | None


class AliasAnalysis:
    def __init__(self, function: func.FuncOp):
        self.function = function
        self.args = list(function.body.block.args)
        attrs = function.arg_attrs.data if function.arg_attrs is not None else []
        self.noalias = {
            self.args[i]
            for i, d in enumerate(attrs)
            if i < len(self.args) and any(n in d.data for n in NOALIAS_ATTRS)
        }
        self.order = {op: k for k, op in enumerate(function.walk())}
        self.writes = [op for op in function.walk() if self._is_write(op)]

    # -- objects ---------------------------------------------------------------

    def underlying(self, value: SSAValue) -> SSAValue:
        return memory_object(value)

    def _object_alias(self, a: SSAValue, b: SSAValue) -> AliasResult:
        if a is b:
            return AliasResult(AliasKind.MUST_ALIAS, f"both address {_name(a)}")
        if is_allocation(a) and is_allocation(b):
            return AliasResult(AliasKind.NO_ALIAS, "distinct allocations")
        if (is_allocation(a) and is_function_argument(b)) or (is_allocation(b) and is_function_argument(a)):
            return AliasResult(AliasKind.NO_ALIAS, "an allocation and an argument")
        if is_function_argument(a) and is_function_argument(b):
            if a in self.noalias or b in self.noalias:
                return AliasResult(AliasKind.NO_ALIAS, f"{_name(a if a in self.noalias else b)} is noalias")
            return AliasResult(AliasKind.MAY_ALIAS,
                               f"arguments {_name(a)} and {_name(b)} may alias (no noalias attribute)")
        return AliasResult(AliasKind.MAY_ALIAS, f"{_name(a)} and {_name(b)}: unknown origin")

    def alias(self, a: SSAValue, b: SSAValue) -> AliasResult:
        oa, ob = self.underlying(a), self.underlying(b)
        base = self._object_alias(oa, ob)
        if base.kind is not AliasKind.MUST_ALIAS:
            return base
        if a is b:
            return AliasResult(AliasKind.MUST_ALIAS, f"the same memref {_name(a)}")
        ra, rb = _static_region(a), _static_region(b)
        if ra is not None and rb is not None:
            if any(x_hi < y_lo or y_hi < x_lo for (x_lo, x_hi), (y_lo, y_hi) in zip(ra, rb)):
                return AliasResult(AliasKind.NO_ALIAS,
                                   f"disjoint static views of {_name(oa)}: {_fmt(ra)} and {_fmt(rb)}")
            if ra == rb and a.type == b.type:
                return AliasResult(AliasKind.MUST_ALIAS, f"identical static views of {_name(oa)}")
        return AliasResult(AliasKind.MAY_ALIAS, f"both address {_name(oa)}")

    def classes(self) -> list[list[SSAValue]]:
        """Memref values grouped by underlying object; objects that may
        alias each other (arguments without noalias) share a class."""
        values = [v for op in self.function.walk() for v in op.results if isinstance(v.type, MemRefType)]
        values = [a for a in self.args if isinstance(a.type, MemRefType)] + values
        groups: dict[SSAValue, list[SSAValue]] = {}
        for v in values:
            groups.setdefault(self.underlying(v), []).append(v)
        objects = list(groups)
        merged: list[list[SSAValue]] = []
        seen: set[SSAValue] = set()
        for o in objects:
            if o in seen:
                continue
            cls = [o]
            seen.add(o)
            for p in objects:
                if p not in seen and self._object_alias(o, p).kind is not AliasKind.NO_ALIAS:
                    cls.append(p)
                    seen.add(p)
            merged.append([v for obj in cls for v in groups[obj]])
        return merged

    # -- accesses ---------------------------------------------------------------

    @staticmethod
    def _is_write(op: Operation) -> bool:
        if isinstance(op, (memref.StoreOp, memref.CopyOp, memref.DeallocOp)):
            return True
        return isinstance(op, func.CallOp) and any(isinstance(a.type, MemRefType) for a in op.operands)

    def _written(self, op: Operation) -> list[tuple[SSAValue, tuple | None]]:
        """(memref, indices or None for 'anything in it') written by `op`."""
        if isinstance(op, memref.StoreOp):
            return [(op.memref, tuple(op.indices))]
        if isinstance(op, memref.CopyOp):
            return [(op.destination, None)]
        if isinstance(op, memref.DeallocOp):
            return [(op.memref, None)]
        return [(a, None) for a in op.operands if isinstance(a.type, MemRefType)]

    def may_overlap(self, write: Operation, read: memref.LoadOp) -> AliasResult:
        """Could `write` touch the element `read` reads (program order ignored)."""
        for target, indices in self._written(write):
            result = self._pair_overlap(target, indices, read, same_instance=[])
            if result.kind is not AliasKind.NO_ALIAS:
                return result
        return AliasResult(AliasKind.NO_ALIAS, "different elements")

    def clobbers(self, load: memref.LoadOp) -> list[Clobber]:
        found: list[Clobber] = []
        for write in self.writes:
            reason = self._clobber_reason(write, load)
            if reason is not None:
                found.append(Clobber(write, reason))
        return found

    def _clobber_reason(self, write: Operation, load: memref.LoadOp) -> str | None:
        for target, indices in self._written(write):
            view_alias = self.alias(target, load.memref)
            if view_alias.kind is AliasKind.NO_ALIAS:
                continue
            what = {memref.StoreOp: "store", memref.CopyOp: "copy into",
                    memref.DeallocOp: "dealloc of", func.CallOp: "call writing"}.get(type(write), write.name)
            if self.underlying(target) is not self.underlying(load.memref):
                return f"{what} at {_where(write)}: {view_alias.reason}"
            for scenario in self._after_scenarios(write, load):
                if scenario == "while":
                    return f"{what} at {_where(write)}, same object, in a later scf.while iteration"
                overlap = self._pair_overlap(target, indices, load, scenario)
                if overlap.kind is not AliasKind.NO_ALIAS:
                    when = "later in the same iteration" if not scenario else "in a later iteration"
                    if not _common_loops(write, load) and not scenario:
                        when = "later"
                    return f"{what} at {_where(write)} {when}: {overlap.reason}"
        return None

    # -- program order ------------------------------------------------------------

    def _after_scenarios(self, write: Operation, load: Operation) -> list:
        """How `write` can run after `load`: [] (same iteration of the
        common loops, later in order) and/or one entry per common loop
        (a later iteration of it: the scf.for op, or 'while')."""
        scenarios: list = []
        if self._later_in_same_iteration(write, load):
            scenarios.append([])
        for loop in _common_loops(write, load):
            if isinstance(loop, scf.WhileOp):
                scenarios.append("while")
            elif isinstance(loop, scf.ForOp):
                scenarios.append([loop])
        return scenarios

    def _later_in_same_iteration(self, write: Operation, load: Operation) -> bool:
        wa, la = _ancestors(write), _ancestors(load)
        for w, l in zip(reversed(wa), reversed(la)):
            if w is l:
                continue
            if w.parent_block() is l.parent_block():
                return self.order[w] > self.order[l]
            # Same op, different regions (if/else branches or while regions).
            parent = w.parent_op()
            if isinstance(parent, scf.WhileOp):
                return w.parent_region() is parent.after_region
            return False
        return self.order[write] > self.order[load]

    # -- element overlap -------------------------------------------------------------

    def _pair_overlap(self, target: SSAValue, indices: tuple | None, load: memref.LoadOp,
                      same_instance: list) -> AliasResult:
        loc_w = _location(target, indices)
        loc_r = _location(load.memref, tuple(load.indices))
        if loc_w.base is not loc_r.base:
            return self._object_alias(loc_w.base, loc_r.base)
        if loc_w.dims is None or loc_r.dims is None:
            return AliasResult(AliasKind.MAY_ALIAS, f"may touch any element of {_name(loc_r.base)}")
        dims_w = list(loc_w.dims)
        if same_instance:
            loop = same_instance[0]
            dims_w = [_later_iteration(d, loop) for d in dims_w]
        for dw, dr in zip(dims_w, loc_r.dims):
            if _never_equal(dr - dw):
                return AliasResult(AliasKind.NO_ALIAS, "indices differ")
        same = all((dr - dw).is_constant and (dr - dw).const == 0 for dw, dr in zip(dims_w, loc_r.dims))
        detail = "the same element" if same else "possibly the same element"
        return AliasResult(AliasKind.MAY_ALIAS, f"{detail} of {_name(loc_r.base)}")


# -- helpers ----------------------------------------------------------------------

_T = object()  # the symbol "t >= 1 iterations later"


def _never_equal(diff: Affine) -> bool:
    """True if diff = const + c*t is nonzero for every integer t >= 1 (and no
    other unknowns remain)."""
    other = {k: v for k, v in diff.terms.items() if k is not _T}
    if other:
        return False
    c = diff.terms.get(_T, 0)
    if c == 0:
        return diff.const != 0
    # const + c*t == 0  <=>  t == -const / c
    if diff.const % c != 0:
        return True
    return -diff.const // c < 1


def _later_iteration(form: Affine, loop: scf.ForOp) -> Affine:
    """The form evaluated in a later iteration of `loop`: iv -> iv + t*step,
    every other value defined inside the loop -> a fresh unknown."""
    iv = loop.body.block.args[0]
    step = constant_of(loop.step)
    result = Affine(form.const)
    for sym, coeff in form.terms.items():
        if sym is iv:
            if step is None:
                result = result + Affine(0, {iv: coeff, object(): coeff})
            else:
                result = result + Affine(0, {iv: coeff, _T: coeff * step})
        elif isinstance(sym, SSAValue) and _defined_inside(sym, loop):
            result = result + Affine(0, {object(): coeff})
        else:
            result = result + Affine(0, {sym: coeff})
    return result


def _defined_inside(value: SSAValue, op: Operation) -> bool:
    owner = value.block.parent_op() if isinstance(value, BlockArgument) else value.op
    while owner is not None:
        if owner is op:
            return True
        owner = owner.parent_op()
    return False


def _ancestors(op: Operation) -> list[Operation]:
    """op, its parent op, ... up to (excluding) the function."""
    chain = []
    cur: Operation | None = op
    while cur is not None and not isinstance(cur, func.FuncOp):
        chain.append(cur)
        cur = cur.parent_op()
    return chain


def _common_loops(a: Operation, b: Operation) -> list[Operation]:
    """Loops enclosing both, outermost first."""
    la = [o for o in _ancestors(a)[1:] if isinstance(o, (scf.ForOp, scf.WhileOp))]
    lb = set(o for o in _ancestors(b)[1:] if isinstance(o, (scf.ForOp, scf.WhileOp)))
    return [o for o in reversed(la) if o in lb]


def _location(value: SSAValue, indices: tuple | None) -> Location:
    """Compose the access through views down to the underlying object."""
    dims = None if indices is None else tuple(affine_form(i) for i in indices)
    while isinstance(value, OpResult) and value is not memory_object(value):
        op = value.op
        if isinstance(op, memref.CastOp):
            value = op.source
            continue
        if isinstance(op, memref.SubviewOp) and dims is not None:
            composed = _through_subview(op, dims)
            value = op.source
            dims = composed
            continue
        value = memory_object(value)
        dims = None
    return Location(value, dims)


def _through_subview(op: memref.SubviewOp, dims: tuple[Affine, ...]) -> tuple[Affine, ...] | None:
    offsets = _mixed(op.static_offsets.get_values(), list(op.offsets))
    sizes = list(op.static_sizes.get_values())
    steps = _mixed(op.static_strides.get_values(), list(op.strides))
    src_rank = len(offsets)
    dropped = src_rank - len(dims)
    unit = [d for d in range(src_rank) if sizes[d] == 1]
    if dropped and len(unit) != dropped:
        return None  # ambiguous rank reduction: give up on the element
    out = []
    it = iter(dims)
    for d in range(src_rank):
        if dropped and d in unit:
            out.append(offsets[d])
            continue
        step = steps[d]
        if not step.is_constant:
            return None
        out.append(offsets[d] + next(it).scale(step.const))
    return tuple(out)


def _mixed(static, dynamic) -> list[Affine]:  # type: ignore[no-untyped-def]
    dyn = iter(dynamic)
    return [Affine(s) if s != DYNAMIC_INDEX else affine_form(next(dyn)) for s in static]


def _static_region(value: SSAValue) -> list[tuple[int, int]] | None:
    """Per dimension of the underlying object, the [first, last] index a
    chain of static subviews can touch; None if not static."""
    if not (isinstance(value, OpResult) and isinstance(value.op, memref.SubviewOp)):
        return None
    op = value.op
    offs, sizes, steps = (list(op.static_offsets.get_values()), list(op.static_sizes.get_values()),
                          list(op.static_strides.get_values()))
    if DYNAMIC_INDEX in offs + sizes + steps or not isinstance(op.source, BlockArgument | OpResult):
        return None
    if memory_object(op.source) is not op.source:
        return None  # nested views: not handled, stay conservative
    return [(o, o + max(s - 1, 0) * st) for o, s, st in zip(offs, sizes, steps)]


def _fmt(region: list[tuple[int, int]]) -> str:
    return "x".join(f"[{lo}, {hi}]" for lo, hi in region)

