"""Alias analysis for memrefs, and which writes may overwrite what a load read.

The reverse-mode cache planner asks `clobbers(load)`: when it is empty, no
write that can run after the load touches the element it read, so the
reverse sweep may issue the load again instead of taping its value. A wrong
"no" makes gradients silently wrong, so every answer that is not proven is
MAY. See docs/alias.md for the facts used and what stays conservative.

Objects (`memref_access.object_of`): function arguments, allocations, and
values of unknown origin. Distinct allocations never alias each other or an
argument; arguments may alias each other unless one carries `ad.noalias` or
`llvm.noalias`; an unknown-origin memref may alias any argument and any
allocation that escapes (is passed to a call, yielded, stored, ...).

Elements (`memref_access.Location`, `affine_index`): for two accesses to the
same object, the indices are affine forms; a write cannot touch the loaded
element when, in some dimension (or in the linear offset), the difference
of the forms is never 0.

Time: a write may run after a load (1) later in program order in the same
iteration of every loop enclosing both, or (2) in a later iteration of a
loop enclosing both. In case (2) every value defined inside that loop is a
fresh unknown for the write, except the induction variable of an scf.for,
which is `i + k*step` with `k >= 1`. An scf.while or any other op whose
regions may run again, and a region with several blocks (cf branches),
only give case (2) with fresh values. An allocation inside the loop is a
new buffer in each iteration, so the write in (2) cannot touch the buffer
the load read (freeing that buffer first is a dealloc after the load, which
is itself reported).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue

from adpasses.analysis.affine_index import (
    Affine,
    Fresh,
    Interval,
    affine_form,
    can_be_zero,
    constant_of,
    interval_of,
)
from adpasses.core.diagnostics import op_location
from adpasses.core.effects import is_pure
from adpasses.analysis.memref_access import (
    Location,
    MemoryObject,
    ObjectKind,
    ViewMap,
    element,
    footprint,
    is_injective,
    object_of,
    view_map,
    whole_object,
)
from adpasses.analysis.memory_writes import READ_ONLY_USERS, Extent, WriteEffects, WriteTarget, is_structured_op
from adpasses.dialects.ad import NOALIAS_ATTRS, GemmOp
from adpasses.core.ir_facts import is_function_parameter
from adpasses.analysis.memref_views import chosen_sources, is_view_result
from adpasses.core.region_flow import Runs, counted_loop, region_flow, runs_at_most_once


__all__ = [
    "AliasAnalysis",
    "AliasKind",
    "AliasResult",
    "Clobber",
    "MemoryObject",
    "ObjectKind",
    "NOALIAS_ATTRS",
]


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
    """A write that may overwrite what a load read, after the load."""

    op: Operation
    reason: str


def _no(reason: str) -> AliasResult:
    return AliasResult(AliasKind.NO_ALIAS, reason)


def _may(reason: str) -> AliasResult:
    return AliasResult(AliasKind.MAY_ALIAS, reason)


def _must(reason: str) -> AliasResult:
    return AliasResult(AliasKind.MUST_ALIAS, reason)


# -- SSA names as the printer shows them ----------------------------------------------


def printed_names(function: func.FuncOp) -> dict[SSAValue, str]:
    """`%name` of every value in `function`, as xDSL's printer numbers them
    (name hints deduplicated with `_1`, `_2`, ...; others `%0`, `%1`, ...
    in printing order), so reports match the printed module."""
    names: dict[SSAValue, str] = {}
    used: dict[str, int] = {}
    next_number = 0

    def assign(value: SSAValue) -> None:
        nonlocal next_number
        hint = value.name_hint
        if hint:
            count = used.get(hint, 0)
            used[hint] = count + 1
            names[value] = f"%{hint}" if count == 0 else f"%{hint}_{count}"
        else:
            names[value] = f"%{next_number}"
            next_number += 1

    def visit(block: Block) -> None:
        for arg in block.args:
            assign(arg)
        for op in block.ops:
            for result in op.results:
                assign(result)
            for region in op.regions:
                for inner in region.blocks:
                    visit(inner)

    for block in function.body.blocks:
        visit(block)
    return names


def source_name(value: SSAValue, depth: int = 0) -> str:
    """The Python expression `value` stands for, for messages to the user:
    its variable (the frontend's name hint), an element `x[i]` for a load,
    seen through the index conversions the frontend adds (`index_cast`, the
    wrap of a negative index); `?` when it has none."""
    if value.name_hint:
        return value.name_hint
    owner = value.owner
    if depth > 8 or not isinstance(owner, Operation):
        return "?"
    if isinstance(owner, memref.LoadOp):
        inner = ", ".join(source_name(i, depth + 1) for i in owner.indices)
        return f"{source_name(owner.memref, depth + 1)}[{inner}]"
    if isinstance(owner, (arith.IndexCastOp, arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp)):
        return source_name(owner.operands[0], depth + 1)
    if isinstance(owner, arith.SelectOp) and _wraps_negative_index(owner):
        return source_name(owner.rhs, depth + 1)
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return str(owner.value.value.data)
    return "?"


def _wraps_negative_index(select: arith.SelectOp) -> bool:
    """`select(j < 0, j + n, j)`: Python's negative index j."""
    j = select.rhs
    cmp, add = select.cond.owner, select.lhs.owner
    return (isinstance(cmp, arith.CmpiOp) and cmp.lhs is j and isinstance(add, arith.AddiOp)
            and j in (add.lhs, add.rhs))


# -- how a write can follow a load ------------------------------------------------------


@dataclass(frozen=True)
class _Later:
    """One way a write can run after a load. `scope`: values defined inside
    it are other instances for the write (None: the same instance of all of
    them); `loop`: a counted loop (`region_flow.counted_loop`: scf.for)
    whose induction variable has advanced."""

    scope: Operation | Region | None
    loop: Operation | None
    when: str
    earlier: bool = False
    """The write runs k >= 1 iterations of `loop` *before* the access
    (iteration independence asks both directions)."""
    private_allocas: bool = False
    """A memref.alloca defined inside `scope` is another buffer in the
    write's instance (iterations run by different threads, each in its own
    stack frame: `iteration_conflict(per_thread=True)`)."""


# -- the analysis -----------------------------------------------------------------------


class AliasAnalysis:
    def __init__(self, function: func.FuncOp, *, source_names: bool = False,
                 distinct_arguments: bool = False):
        """`source_names`: reasons name values as the Python source does
        (`x[i - 1]`, `source_name`), for messages to the user; else as the
        printed IR (`%x[%i - 1]`). `distinct_arguments`: assume distinct
        indices of an argument address distinct elements whatever its
        layout (a strided argument has no stride 0: not known when
        compiling; callers ask whether only that stops a proof)."""
        self.function = function
        self.source_names = source_names
        self.distinct_arguments = distinct_arguments
        self.names = printed_names(function)
        args = function.body.blocks.first.args if function.body.blocks else ()
        attrs = function.arg_attrs.data if function.arg_attrs is not None else ()
        self.noalias: dict[SSAValue, str] = {}
        for arg, attr in zip(args, attrs):
            for name in NOALIAS_ATTRS:
                if name in attr.data:
                    self.noalias[arg] = name
                    break
        self._order = {op: k for k, op in enumerate(function.walk())}
        self._forms: dict[SSAValue, Affine] = {}
        self._maps: dict[SSAValue, ViewMap] = {}
        self._escapes: dict[SSAValue, Operation | None] = {}
        self._inside: dict[tuple[SSAValue, int], bool] = {}
        self._object_pairs: dict[tuple[SSAValue, SSAValue], AliasResult] = {}
        self._chains: dict[Operation, list[Operation]] = {}
        self._iv_ranges = self._induction_ranges()
        self._effects = WriteEffects(function.parent_op())
        self._targets = {op: t for op in function.body.walk() if (t := self._effects.targets(op))}

    # -- objects ---------------------------------------------------------------------

    def underlying(self, memref_value: SSAValue) -> MemoryObject:
        """The memory object behind a memref value (views traced through)."""
        return object_of(memref_value)

    def name(self, value: SSAValue) -> str:
        if self.source_names:
            return source_name(value)
        return self.names.get(value) or f"%{value.name_hint or '?'}"

    def origin(self, obj: MemoryObject) -> str:
        """Where an object comes from, e.g. `argument #0, ad.noalias`,
        `memref.alloc at t.mlir:4:3`, `unknown origin: func.call at t.mlir:6:8`."""
        owner = obj.value.owner
        if obj.kind is ObjectKind.ARGUMENT:
            assert isinstance(obj.value, BlockArgument)
            noalias = f", {self.noalias[obj.value]}" if obj.value in self.noalias else ""
            return f"argument #{obj.value.index}{noalias}"
        if obj.kind is ObjectKind.ALLOCATION:
            assert isinstance(owner, Operation)
            site = self.escape(obj.value)
            escapes = f", escapes through {site.name} at {_where(site)}" if site else ""
            return f"{owner.name} at {_where(owner)}{escapes}"
        if isinstance(owner, Operation):
            return f"unknown origin: {owner.name} at {_where(owner)}"
        parent = owner.parent_op() if isinstance(owner, Block) else None
        where = f"{parent.name} at {_where(parent)}" if parent else "?"
        return f"unknown origin: block argument of {where}"

    def describe(self, obj: MemoryObject) -> str:
        """`%name (origin)`."""
        return f"{self.name(obj.value)} ({self.origin(obj)})"

    def escape(self, alloc: SSAValue) -> Operation | None:
        """The first op (program order) through which an allocation's address
        leaves the memref ops we understand, or None if it never does."""
        if alloc not in self._escapes:
            sites: list[Operation] = []
            work = [alloc]
            while work:
                value = work.pop()
                for use in value.uses:
                    user = use.operation
                    if user.results and (is_view_result(user.results[0])
                                         or _chosen_memref(user)):
                        # A view, or a select between memrefs: its uses are
                        # this allocation's uses.
                        work.append(user.results[0])
                    elif isinstance(user, READ_ONLY_USERS + (memref.DeallocOp, memref.CopyOp)):
                        pass
                    elif isinstance(user, memref.StoreOp) and user.value is not value:
                        pass
                    elif isinstance(user, func.ReturnOp):
                        pass  # leaves the function only when it ends
                    else:
                        sites.append(user)
            self._escapes[alloc] = min(sites, key=self._position, default=None)
        return self._escapes[alloc]

    def _reachable_from_outside(self, obj: MemoryObject) -> bool:
        """Could code we cannot see (an unknown callee) address this object?"""
        return obj.kind is not ObjectKind.ALLOCATION or self.escape(obj.value) is not None

    def _object_alias(self, a: MemoryObject, b: MemoryObject) -> AliasResult:
        key = (a.value, b.value)
        if key not in self._object_pairs:
            self._object_pairs[key] = self._object_pair(a, b)
        return self._object_pairs[key]

    def choices(self, obj: MemoryObject) -> list[MemoryObject] | None:
        """The objects a memref chosen at run time may be (the result of an
        arith.select between memrefs: either operand's object), or the
        objects a call's result addresses (a callee returning a view of its
        arguments: `WriteEffects.returned_arguments`), or None."""
        value = obj.value
        if obj.kind is not ObjectKind.UNKNOWN or not isinstance(value, OpResult):
            return None
        op = value.op
        sources = chosen_sources(op) or self._returned_sources(value)
        if sources is None:
            return None
        found: list[MemoryObject] = []
        for source in sources:
            inner = object_of(source)
            for option in self.choices(inner) or [inner]:
                if option not in found:
                    found.append(option)
        return found

    def _returned_sources(self, value: OpResult) -> list[SSAValue] | None:
        """The operands of a call whose memory its result `value` addresses,
        when the callee's summary knows (it returns views of them)."""
        op = value.op
        if not isinstance(op, func.CallOp):
            return None
        summary = self._effects.returned_arguments(op.callee.root_reference.data)
        if summary is None or value.index >= len(summary) or summary[value.index] is None:
            return None
        return [op.operands[k] for k in sorted(summary[value.index])]  # type: ignore[arg-type]

    def _object_pair(self, a: MemoryObject, b: MemoryObject) -> AliasResult:
        if a == b:
            return _must(f"both are {self.describe(a)}")
        for chosen, other in ((a, b), (b, a)):
            options = self.choices(chosen)
            if options is None:
                continue
            # Either of its operands' objects (never MUST: the choice is
            # made at run time).
            owner = chosen.value.owner
            verb = "is a view of" if isinstance(owner, func.CallOp) else "is"
            what = (f"{self.name(chosen.value)} ({owner.name} at "  # type: ignore[union-attr]
                    f"{_where(owner)}) {verb} "  # type: ignore[arg-type]
                    f"{' or '.join(self.name(o.value) for o in options)}")
            results = [self._object_alias(o, other) for o in options]
            for option, result in zip(options, results):
                if result.kind is AliasKind.MUST_ALIAS:
                    if verb != "is":
                        return _may(what)  # a view of it: which elements, unknown here
                    return _may(f"{what}: it may be {self.name(option.value)}")
                if result.kind is AliasKind.MAY_ALIAS:
                    return _may(f"{what}, and {result.reason}")
            return _no(f"{what}: " + "; ".join(r.reason for r in results))
        na, nb = self.name(a.value), self.name(b.value)
        kinds = {a.kind, b.kind}
        if kinds == {ObjectKind.ALLOCATION}:
            return _no(f"distinct allocations {na} and {nb}")
        if kinds == {ObjectKind.ALLOCATION, ObjectKind.ARGUMENT}:
            alloc, arg = (na, nb) if a.kind is ObjectKind.ALLOCATION else (nb, na)
            return _no(f"allocation {alloc} never overlaps argument {arg}")
        if kinds == {ObjectKind.ARGUMENT}:
            for value in (a.value, b.value):
                if value in self.noalias:
                    return _no(f"argument {self.name(value)} is {self.noalias[value]}")
            return _may(f"arguments {na} and {nb} may alias (no noalias attribute)")
        # At least one has unknown origin: it may be anything visible to the
        # code that produced it.
        unknown, other = (a, b) if a.kind is ObjectKind.UNKNOWN else (b, a)
        if other.kind is ObjectKind.ALLOCATION:
            site = self.escape(other.value)
            if site is None:
                return _no(f"allocation {self.name(other.value)} never escapes, so "
                           f"{self.name(unknown.value)} (unknown origin) cannot address it")
            return _may(
                f"{self.describe(unknown)} may address allocation {self.name(other.value)}, "
                f"which escapes through {site.name} at {_where(site)}"
            )
        return _may(f"{self.describe(unknown)} may address {self.name(other.value)}")

    def _map(self, value: SSAValue) -> ViewMap:
        return view_map(value, self._maps, self._forms)

    def alias(self, a: SSAValue, b: SSAValue) -> AliasResult:
        """Can the memory the two memref values address overlap?"""
        result = self._object_alias(self.underlying(a), self.underlying(b))
        if result.kind is not AliasKind.MUST_ALIAS:
            return result
        if a is b:
            return _must(f"the same value {self.name(a)}")
        base = self.name(self.underlying(a).value)
        ma, mb = self._map(a), self._map(b)
        if (ma.dims is not None and None not in ma.dims and ma.dims == mb.dims) or (
            ma.linear is not None and ma.linear == mb.linear
        ):
            return _must(f"identical index maps into {base}")
        fa, fb = footprint(ma, a.type), footprint(mb, b.type)
        disjoint = self._disjoint(fa, fb, {**fa.ranges, **fb.ranges})
        if disjoint is not None:
            extents = _extents(fa), _extents(fb)
            if extents[0] and extents[1]:
                return _no(f"disjoint static subviews of {base} {extents[0]} and {extents[1]}")
            return _no(f"views of {base} that cannot overlap ({disjoint})")
        return _may(f"views of {base} that may overlap")

    def separate(self, values: Sequence[SSAValue]) -> list[bool]:
        """For each memref of `values`: whether it overlaps none of the
        others (distinct allocations, an allocation and an argument, noalias
        arguments, views of those). A function outlined from this one may
        mark such a parameter noalias: every call passes these values."""
        memrefs = [v for v in values if isinstance(v.type, MemRefType)]
        return [isinstance(v.type, MemRefType)
                and all(self.alias(v, w).kind is AliasKind.NO_ALIAS for w in memrefs if w is not v)
                for v in values]

    def classes(self) -> list[list[SSAValue]]:
        """Memref values (program order) grouped so that values in different
        classes never alias: objects that may alias share a class."""
        values = self.memref_values()
        objects: list[MemoryObject] = []
        for v in values:
            obj = self.underlying(v)
            if obj not in objects:
                objects.append(obj)
        root = {obj: obj for obj in objects}

        def find(o: MemoryObject) -> MemoryObject:
            while root[o] != o:
                o = root[o]
            return o

        for i, a in enumerate(objects):
            for b in objects[i + 1:]:
                if self._object_alias(a, b).kind is not AliasKind.NO_ALIAS:
                    ra, rb = find(a), find(b)
                    if ra != rb:
                        root[rb] = ra
        grouped: dict[MemoryObject, list[SSAValue]] = {}
        for v in values:
            grouped.setdefault(find(self.underlying(v)), []).append(v)
        return list(grouped.values())

    def memref_values(self) -> list[SSAValue]:
        """Every memref-typed argument, block argument and result, in program order."""
        values: list[SSAValue] = []

        def visit(block: Block) -> None:
            values.extend(a for a in block.args if isinstance(a.type, MemRefType))
            for op in block.ops:
                values.extend(r for r in op.results if isinstance(r.type, MemRefType))
                for region in op.regions:
                    for inner in region.blocks:
                        visit(inner)

        for block in self.function.body.blocks:
            visit(block)
        return values

    # -- writes -------------------------------------------------------------------------

    def writes(self) -> list[Operation]:
        """Every op that may write memory, in program order."""
        return list(self._targets)

    # -- elements ---------------------------------------------------------------------------

    def _element(self, memref_value: SSAValue, indices: tuple[SSAValue, ...]) -> Location:
        forms = [affine_form(i, self._forms) for i in indices]
        return element(self._map(memref_value), forms)

    def _target_location(self, target: WriteTarget) -> Location:
        assert target.memref is not None
        if target.extent is Extent.ELEMENT:
            return self._element(target.memref, target.indices)
        if target.extent is Extent.VIEW:
            return footprint(self._map(target.memref), target.memref.type)
        return whole_object(self.underlying(target.memref))

    def _disjoint(self, a: Location, b: Location, ranges: Mapping[object, Interval]) -> str | None:
        """Why `a` and `b` (same object) share no element, or None if they may."""
        injective = is_injective(a.obj.value.type) or (
            self.distinct_arguments and isinstance(a.obj.value, BlockArgument)
            and a.obj.value.owner is self.function.body.blocks.first)
        if a.dims is not None and b.dims is not None and injective:
            for d, (x, y) in enumerate(zip(a.dims, b.dims)):
                if x is not None and y is not None and not can_be_zero(x - y, ranges):
                    return f"dimension {d} differs" if len(a.dims) > 1 else "indices differ"
        if a.linear is not None and b.linear is not None:
            if not can_be_zero(a.linear - b.linear, ranges):
                return "element offsets differ"
        return None

    @staticmethod
    def _same_element(a: Location, b: Location) -> bool:
        if a.ranges or b.ranges:
            return False
        if a.dims is not None and b.dims is not None:
            if all(x is not None and x == y for x, y in zip(a.dims, b.dims)):
                return True
        return a.linear is not None and a.linear == b.linear

    def _render(self, loc: Location) -> str:
        base = self.name(loc.obj.value)

        def text(form: Affine | None) -> str:
            return "?" if form is None else form.render(self.name)

        if loc.dims is not None:
            return f"{base}[{', '.join(text(d) for d in loc.dims)}]"
        if loc.linear is not None:
            return f"{base}[offset {text(loc.linear)}]"
        return f"{base}[?]"  # an element the analysis cannot locate

    def may_overlap(self, write: Operation, read: memref.LoadOp) -> AliasResult:
        """Could `write` touch the element `read` reads? Program order is
        ignored; values are taken in one instance (the same iteration of the
        loops enclosing both). MUST_ALIAS: certainly the same element."""
        loaded = self._element(read.memref, tuple(read.indices))
        now = _Later(None, None, "")
        answers = [self._overlap(t, loaded, now) for t in self._targets.get(write, [])]
        for kind in (AliasKind.MUST_ALIAS, AliasKind.MAY_ALIAS):
            for answer in answers:
                if answer.kind is kind:
                    return answer
        if answers:
            return _no("; ".join(a.reason for a in answers))
        return _no(f"{write.name} writes no memory")

    def _overlap(self, target: WriteTarget, loaded: Location, later: _Later) -> AliasResult:
        """Can `target`, executed as described by `later`, write `loaded`?"""
        obj = loaded.obj
        if target.extent is Extent.OUTSIDE:
            if self._reachable_from_outside(obj):
                return _may(f"may write any memory reachable from outside the function, "
                            f"such as {self.name(obj.value)}")
            return _no(f"{self.name(obj.value)} is an allocation that never escapes")
        assert target.memref is not None
        written = self._target_location(target)
        objects = self._object_alias(written.obj, obj)
        if objects.kind is AliasKind.NO_ALIAS:
            return objects
        writes = self._written_text(target, written)
        if objects.kind is AliasKind.MAY_ALIAS:
            return _may(f"writes {writes}, and {objects.reason}")
        if later.scope is not None and self._defined_inside(obj.value, later.scope):
            # The write runs in another instance of the scope, where the
            # object's value is another one: a new heap buffer, or unknown
            # memory. (An alloca stays one buffer: the lowering hoists
            # static allocas, so later iterations reuse it.)
            if isinstance(obj.value.owner, memref.AllocOp):
                return _no(f"{self.name(obj.value)} is a new allocation in each iteration")
            if later.private_allocas and isinstance(obj.value.owner, memref.AllocaOp):
                return _no(f"{self.name(obj.value)} is a stack buffer of each iteration")
            if obj.kind is ObjectKind.UNKNOWN:
                return _may(f"{self.name(obj.value)} may address other memory in each iteration")
        if target.extent is Extent.OBJECT:
            return _may(f"writes {writes}")
        shifted, ranges = self._shift(written, later)
        ranges = {**self._iv_ranges, **loaded.ranges, **written.ranges, **ranges}
        why = self._disjoint(loaded, shifted, ranges)
        if why is not None:
            return _no(f"writes {writes}, never {self._render(loaded)}: {why}")
        if self._same_element(loaded, shifted):
            return _must(f"writes the same element {self._render(loaded)}")
        return _may(f"writes {writes}, which may be {self._render(loaded)}")

    def _what(self, op: Operation) -> str:
        if self.source_names:
            return _source_what(op)
        return _what(op)

    def _written_text(self, target: WriteTarget, written: Location) -> str:
        assert target.memref is not None
        if target.extent is Extent.OBJECT:
            return f"all of {self.name(written.obj.value)}"
        if target.extent is Extent.VIEW:
            return f"every element of {self.name(target.memref)} ({self._render(written)})"
        return self._render(written)

    # -- time ---------------------------------------------------------------------------------

    def clobbers(self, load: memref.LoadOp) -> list[Clobber]:
        """Every write that may run after `load` and overwrite the element it
        read, in program order. Empty: issuing the load again at the end of
        the function gives the value it read."""
        loaded = self._element(load.memref, tuple(load.indices))
        found: list[Clobber] = []
        for write, targets in self._targets.items():
            for later in self._later(write, load):
                reason = self._first_overlap(targets, loaded, later)
                if reason is not None:
                    what = f"{self._what(write)} at {_where(write)} ({later.when})"
                    found.append(Clobber(write, f"{what}: {reason}"))
                    break
        return found

    def overwritten_after(self, store: memref.StoreOp) -> list[Clobber]:
        """Every write that may run after `store` and overwrite the element
        it wrote (the store itself in later iterations of the loops around
        it included), in program order. Empty: loading that element at the
        end of the function gives the value it stored."""
        written = self._element(store.memref, tuple(store.indices))
        found: list[Clobber] = []
        for write, targets in self._targets.items():
            scenarios = self._later(write, store)
            if write is store:  # itself, again: only in a later iteration
                scenarios = [later for later in scenarios if later.scope is not None]
            for later in scenarios:
                reason = self._first_overlap(targets, written, later)
                if reason is not None:
                    what = f"{self._what(write)} at {_where(write)} ({later.when})"
                    found.append(Clobber(write, f"{what}: {reason}"))
                    break
        return found

    def overwrites_from(self, op: Operation, memref_value: SSAValue) -> list[Clobber]:
        """Every write that may change any element of `memref_value`'s
        memory object while or after `op` runs (`op` itself, if it writes
        there; later writes; writes of later iterations of the loops around
        `op`), in program order. Empty: the object's contents when `op`
        starts are still there at the end of the function."""
        whole = whole_object(self.underlying(memref_value))
        found: list[Clobber] = []
        for write, targets in self._targets.items():
            scenarios = self._later(write, op)
            if write is op:
                scenarios = [_Later(None, None, "while it runs"),
                             *(later for later in scenarios if later.scope is not None)]
            for later in scenarios:
                reason = self._first_overlap(targets, whole, later)
                if reason is not None:
                    what = f"{self._what(write)} at {_where(write)} ({later.when})"
                    found.append(Clobber(write, f"{what}: {reason}"))
                    break
        return found

    # -- iterations -------------------------------------------------------------------------

    def accesses(self, ops: Iterable[Operation]) -> list[tuple[Operation, Location]]:
        """Every memory access of `ops` and the ops nested in them, as
        (op, location): a load's element, each write target of a write,
        and, for any other op that takes a memref (a call, a copy's
        source), the whole object it may read."""
        found: list[tuple[Operation, Location]] = []
        for top in ops:
            for op in top.walk():
                if isinstance(op, memref.LoadOp):
                    found.append((op, self._element(op.memref, tuple(op.indices))))
                    continue
                for target in self._targets.get(op, []):
                    if target.memref is not None:
                        found.append((op, self._target_location(target)))
                if isinstance(op, (memref.StoreOp, memref.DeallocOp)):
                    continue  # reads nothing
                if isinstance(op, memref.CopyOp):
                    found.append((op, footprint(self._map(op.source), op.source.type)))
                    continue
                read_views = (op.inputs if is_structured_op(op)  # type: ignore[attr-defined]
                              else (op.a, op.b) if isinstance(op, GemmOp) else None)
                if read_views is not None:
                    # linalg.generic/fill/matmul..., ad.gemm: read within their
                    # input views (a row X[i, :] is that row, not all of X)
                    for operand in read_views:
                        if isinstance(operand.type, MemRefType):
                            found.append((op, footprint(self._map(operand), operand.type)))
                    continue
                if isinstance(op, READ_ONLY_USERS) or (op.results and is_view_result(op.results[0])):
                    continue
                if isinstance(op, func.CallOp) and self._effects.stays_in_views(op.callee.root_reference.data):
                    # the callee reads within the views it is given (a row, not all of X)
                    for operand in op.operands:
                        if isinstance(operand.type, MemRefType):
                            found.append((op, footprint(self._map(operand), operand.type)))
                    continue
                for operand in op.operands:
                    if isinstance(operand.type, MemRefType):
                        found.append((op, whole_object(self.underlying(operand))))
        return found

    def iteration_conflict(self, loop: Operation, *, per_thread: bool = False) -> str | None:
        """Why two iterations of the counted loop `loop` (scf.for) may touch
        the same memory, one of them writing it, or None: each iteration
        reads and writes only memory no other iteration writes (the
        iterations are independent through memory).

        `per_thread`: the question of a parallel loop, whose chunks of
        iterations run on threads with stack frames of their own: a
        memref.alloca made inside the loop is then another buffer in
        another iteration, as a memref.alloc is (the lowering hoists a
        static alloca, so one thread's iterations reuse one buffer, in
        order; an alloca's contents are undefined where it is made, so no
        iteration reads what an earlier one left there)."""
        if counted_loop(loop) is None:
            return f"{loop.name} is not a counted loop"
        body = list(loop.regions[0].block.ops)
        return self._cross_conflict(loop, body, body, both_ways=True, private_allocas=per_thread)

    def fusion_conflict(self, fused: Operation, first: Sequence[Operation],
                        second: Sequence[Operation]) -> str | None:
        """`fused` is an scf.for whose body runs the ops `first` (the first
        loop's body), then `second`. Fusing keeps every dependence between
        the two loops if no write of `first` in a later iteration touches
        what `second` accesses in an earlier one, and no write of `second`
        touches what `first` accesses in a later iteration. None: the
        fusion is legal; else why not."""
        return (self._cross_conflict(fused, first, second, both_ways=False)
                or self._cross_conflict(fused, second, first, both_ways=False, earlier=True))

    def _cross_conflict(self, loop: Operation, writers: Sequence[Operation],
                        accessors: Sequence[Operation], both_ways: bool,
                        earlier: bool = False, private_allocas: bool = False) -> str | None:
        """A write of `writers` in another iteration of `loop` than an
        access of `accessors` that may touch the same memory: a later
        iteration (`earlier`: an earlier one; `both_ways`: either)."""
        accessed = self.accesses(accessors)
        directions = [_Later(loop, loop, "in an earlier iteration" if earlier else "in a later iteration",
                             earlier=earlier, private_allocas=private_allocas)]
        if both_ways:
            directions.append(_Later(loop, loop, "in an earlier iteration", earlier=True,
                                     private_allocas=private_allocas))
        for top in writers:
            for write in top.walk():
                targets = self._targets.get(write, [])
                if not targets:
                    continue
                for op, location in accessed:
                    for later in directions:
                        reason = self._first_overlap(targets, location, later)
                        if reason is not None:
                            return (f"{self._what(write)} at {_where(write)} ({later.when}) may touch "
                                    f"what {self._what(op)} at {_where(op)} accesses: {reason}")
        return None

    def _first_overlap(
        self, targets: list[WriteTarget], loaded: Location, later: _Later
    ) -> str | None:
        for target in targets:
            answer = self._overlap(target, loaded, later)
            if answer.kind is not AliasKind.NO_ALIAS:
                return answer.reason
        return None

    def _later(self, write: Operation, load: Operation) -> list[_Later]:
        """The ways `write` can run after `load` (empty: it never does)."""
        cw, cl = self._chain(write), self._chain(load)
        p = 0
        while p < min(len(cw), len(cl)) and cw[p] is cl[p]:
            p += 1
        loops: list[_Later] = []
        for anc in reversed(cw[:p]):  # innermost first
            again = f"in a later iteration of the {anc.name} at {_where(anc)}"
            if counted_loop(anc) is not None:
                loops.append(_Later(anc, anc, again))
            elif anc.regions and not runs_at_most_once(anc):  # may run again after a load inside
                loops.append(_Later(anc, None, again))
        for region in self._common_regions(cw, cl, p):
            if len(region.blocks) > 1:
                where = _where(region.parent_op())
                again = f"possibly again: region with several blocks at {where}"
                loops.append(_Later(region, None, again))
        if not self._after_in_same_instance(cw, cl, p):
            return loops
        return [_Later(None, None, "later in the same iteration" if loops else "later"), *loops]

    @staticmethod
    def _common_regions(cw: list[Operation], cl: list[Operation], p: int) -> Iterator[Region]:
        for k in range(min(p + 1, len(cw), len(cl))):
            region = cw[k].parent_region()
            if region is None or region is not cl[k].parent_region():
                return
            yield region

    def _after_in_same_instance(self, cw: list[Operation], cl: list[Operation], p: int) -> bool:
        if p == len(cw) or p == len(cl):
            return True  # one op contains the other: order unknown
        aw, al = cw[p], cl[p]
        if aw.parent_block() is al.parent_block():
            return self._order[aw] > self._order[al]
        if aw.parent_region() is al.parent_region():
            return False  # other blocks of one region: the region scenario covers it
        parent = aw.parent_op()
        flow = region_flow(parent)
        if flow is None:
            return True  # regions of an op the table does not know: any order
        if flow.runs is Runs.ONE_OF:
            return False  # two branches never both run in one instance
        # Regions run in order within one instance (scf.while: before, then after).
        regions = list(parent.regions)  # type: ignore[union-attr]
        return regions.index(aw.parent_region()) > regions.index(al.parent_region())

    def _shift(self, loc: Location, later: _Later) -> tuple[Location, dict[object, Interval]]:
        """`loc` as computed in the instance `later` describes: symbols
        defined inside its scope are fresh, the loop's iv advanced."""
        if later.scope is None:
            return loc, {}
        scope = later.scope
        ranges: dict[object, Interval] = {}
        fresh: dict[SSAValue, Affine] = {}
        counted = counted_loop(later.loop) if later.loop is not None else None
        iv = counted[0] if counted is not None else None

        def replace(sym: object) -> Affine | None:
            if (not isinstance(sym, SSAValue) or not self._defined_inside(sym, scope)
                    or self._invariant(sym, scope)):
                return Affine.symbol(sym)
            if sym not in fresh:
                if sym is iv:
                    # k >= 1 iterations later: iv + k*step. A dynamic step is
                    # positive too (scf.for requires it), so iv + t, t >= 1.
                    assert counted is not None
                    step = constant_of(counted[3])
                    k = Fresh("?k")
                    if step is None or step > 0:
                        ranges[k] = (None, -1) if later.earlier else (1, None)
                    fresh[sym] = Affine.symbol(sym) + Affine.symbol(k, step or 1)
                elif counted is not None and _iteration_number(sym, counted):
                    # (iv - lb) / step, the iteration's number (a tape row of
                    # a loop by a step other than 1, lower_tapes): k >= 1
                    # iterations later it is k more.
                    q = Fresh("?q")
                    ranges[q] = (None, -1) if later.earlier else (1, None)
                    fresh[sym] = Affine.symbol(sym) + Affine.symbol(q)
                else:
                    other = Fresh(f"?{self.name(sym).lstrip('%')}")
                    if sym in self._iv_ranges:
                        ranges[other] = self._iv_ranges[sym]
                    fresh[sym] = Affine.symbol(other)
            return fresh[sym]

        def each(form: Affine | None) -> Affine | None:
            return None if form is None else form.substitute(replace)

        dims = None if loc.dims is None else tuple(each(d) for d in loc.dims)
        return Location(loc.obj, dims, each(loc.linear), loc.ranges), ranges

    def _defined_inside(self, value: SSAValue, scope: Operation | Region) -> bool:
        key = (value, id(scope))
        if key not in self._inside:
            if is_function_parameter(value):
                inside = False  # fixed for the whole call
            else:
                block = value.block if isinstance(value, BlockArgument) else value.op.parent_block()
                inside = False
                while block is not None:
                    region = block.parent_region()
                    parent = block.parent_op()
                    if region is scope or parent is scope:
                        inside = True
                        break
                    block = parent.parent_block() if parent is not None else None
            self._inside[key] = inside
        return self._inside[key]

    def _invariant(self, value: SSAValue, scope: Operation | Region, depth: int = 0) -> bool:
        """Whether `value`, defined inside `scope`, is the same in every
        instance of it: computed by pure ops, or read from the descriptor of
        a memref (`memref.dim`, `extract_strided_metadata`: sizes and strides
        do not change), from values defined outside `scope` or invariant
        themselves (the reverse sweep builds `dx[::-1]` inside the loop from
        dx's sizes: the same view in every iteration)."""
        key = (value, id(scope), "invariant")
        if key not in self._inside:
            owner = value.owner
            invariant = (depth < 16 and isinstance(owner, Operation) and not owner.regions
                         and (is_pure(owner) or isinstance(owner, (memref.DimOp, memref.ExtractStridedMetaDataOp)))
                         and all(not self._defined_inside(v, scope) or self._invariant(v, scope, depth + 1)
                                 for v in owner.operands))
            self._inside[key] = invariant  # type: ignore[index]
        return self._inside[key]  # type: ignore[index]

    def _induction_ranges(self) -> dict[SSAValue, Interval]:
        """[lb, ub - 1] for the iv of each counted loop (scf.for) with constant bounds."""
        ranges: dict[SSAValue, Interval] = {}
        for op in self.function.walk():
            counted = counted_loop(op)
            if counted is not None:
                iv, lb_value, ub_value, _ = counted
                lb, ub = constant_of(lb_value), constant_of(ub_value)
                if lb is not None or ub is not None:
                    ranges[iv] = (lb, None if ub is None else ub - 1)
        return ranges

    def _chain(self, op: Operation) -> list[Operation]:
        """The ops enclosing `op` inside the function, outermost first, then `op`."""
        if op not in self._chains:
            chain: list[Operation] = []
            cur: Operation | None = op
            while cur is not None and cur is not self.function:
                chain.append(cur)
                cur = cur.parent_op()
            chain.reverse()
            self._chains[op] = chain
        return self._chains[op]

    def _position(self, op: Operation) -> int:
        return self._order.get(op, len(self._order))


# -- helpers -------------------------------------------------------------------------------

def _iteration_number(value: SSAValue, counted: tuple[SSAValue, SSAValue, SSAValue, SSAValue]) -> bool:
    """Whether `value` is `(iv - lb) / step` (`arith.divui`/`divsi`; `iv /
    step` when lb is 0) of the counted loop `counted` (iv, lb, ub, step):
    the number of the iteration, exact since iv is lb + q*step."""
    iv, lb, _, step = counted
    op = value.owner
    if not isinstance(op, (arith.DivUIOp, arith.DivSIOp)) or not _same_index(op.rhs, step):
        return False
    if op.lhs is iv:
        return constant_of(lb) == 0
    sub = op.lhs.owner
    return isinstance(sub, arith.SubiOp) and sub.lhs is iv and _same_index(sub.rhs, lb)


def _same_index(a: SSAValue, b: SSAValue) -> bool:
    """The same value, or equal constants."""
    return a is b or (constant_of(a) is not None and constant_of(a) == constant_of(b))


def _chosen_memref(op: Operation) -> bool:
    """An op whose memref result is one of its memref operands, chosen at
    run time (`memref_views.chosen_sources`: arith.select between memrefs)."""
    return chosen_sources(op) is not None


def _where(op: Operation | None) -> str:
    return (op_location(op) or op.name) if op is not None else "?"


def _source_what(op: Operation) -> str:
    """`op` as the user wrote it (the Python source has no ops)."""
    if isinstance(op, memref.StoreOp):
        return "the assignment"
    if isinstance(op, memref.LoadOp):
        return "the read"
    if isinstance(op, func.CallOp):
        return f"the call of {op.callee.root_reference.data.split('.')[-1]}"
    return "the array operation"


def _what(op: Operation) -> str:
    if isinstance(op, memref.StoreOp):
        return "store"
    if isinstance(op, memref.CopyOp):
        return "copy"
    if isinstance(op, memref.DeallocOp):
        return "dealloc"
    if isinstance(op, func.CallOp):
        return f"call @{op.callee.root_reference.data}"
    if isinstance(op, memref.AllocaScopeOp):
        return "end of memref.alloca_scope"
    return op.name


def _extents(loc: Location) -> str | None:
    """`[lo,hi)` per dimension when a footprint's dims are static ranges."""
    if loc.dims is None:
        return None
    parts = []
    for d in loc.dims:
        if d is None or any(not isinstance(s, Fresh) or s not in loc.ranges for s in d.terms):
            return None
        bounds = interval_of(d, loc.ranges)
        if bounds is None or bounds[0] is None or bounds[1] is None:
            return None
        parts.append(f"[{bounds[0]},{bounds[1] + 1})")
    return "x".join(parts)

