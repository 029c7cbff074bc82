"""`ad-scalar-replace`: small local arrays become SSA values before the
reverse sweep is planned (scalar replacement of aggregates, mem2reg).

Small-vector code keeps a few numbers in an array: `d = np.zeros(3)` per
pair of atoms, `d[k] = x[i, k] - x[j, k]`, then `d[0] * d[0] + ...`. To the
reverse sweep each `d[k]` read is a load of memory that the next pair
overwrites, so it is taped (3 values per pair), and the shadow of `d` is
allocated, zeroed and accumulated into per pair. Written with scalars
(`dx, dy, dz`) the same code tapes nothing: every value is recomputed from
`x`. This pass makes the first form the second, in the functions the
reverse pipeline differentiates (before activity and cache planning), in
two phases of rewrite patterns:

1. `UnrollSmallArrayLoop`: an `scf.for` with constant bounds whose body
   indexes a small array with its induction variable (`for k in range(3):
   d[k] = ...`, and np.zeros' own fill loop) is fully unrolled, so that the
   indices become constants. Only when every such index is then a constant
   (a function of constants and of induction variables of loops with
   constant bounds), and only up to `unroll-limit` ops in the unrolled
   copies together: a long loop stays a loop.
2. `ScalarReplaceArray`: a `memref.alloc`/`alloca` whose sizes are
   constants, with at most `max-elements` elements, is replaced when every
   use is a load, a store into it, `memref.dim` or its deallocation (it is
   not viewed, copied, stored, yielded, returned or passed to a call), and
   every load and store has constant indices within its sizes. Each load
   becomes the value last stored to that element; where a store sits in an
   `scf.for` or `scf.if` and the element is read later (or in the next
   iteration), the element is carried as an iter_arg or a result of the
   region op. An array accessed inside any other region op, read where no
   store may have written it (uninitialised memory), or indexed out of
   bounds (its check must raise) stays as it is.

The forwarded values are the stored values themselves: no arithmetic
changes, so the function computes bit for bit what it computed before.
`ad-opt -p ad-scalar-replace` runs it on every function (`marked-only`:
only those marked `ad.gradient_of`, as the reverse pipeline runs it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from adpasses.core.effects import is_pure
from adpasses.core.ir_walk import nested_ops
from adpasses.transforms.gradient_marks import marked_functions
from adpasses.transforms.promote_scratch import constant_sizes

MAX_ELEMENTS = 64
"""Largest array replaced: 3-vectors, 3x3 and 6x6 matrices, a few of them
live at once stay within the registers LLVM has."""

UNROLL_LIMIT = 256
"""Most ops that the copies of one fully unrolled loop may hold."""

Key = tuple[int, ...]
"""An element of a small array: its constant indices."""

_ARRAY_ALLOCATIONS = (memref.AllocOp, memref.AllocaOp)


# -- constant indices ----------------------------------------------------------------------------

_INT64 = 1 << 64


def _wrap(n: int) -> int:
    """`n` as a signed 64-bit integer (index and i64 arithmetic wrap)."""
    n %= _INT64
    return n - _INT64 if n >= 1 << 63 else n


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


_BINARY = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.DivSIOp: lambda a, b: None if b == 0 else _trunc_div(a, b),
    arith.FloorDivSIOp: lambda a, b: None if b == 0 else a // b,
    arith.CeilDivSIOp: lambda a, b: None if b == 0 else -(-a // b),
    arith.RemSIOp: lambda a, b: None if b == 0 else a - b * _trunc_div(a, b),
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
}
"""Integer ops whose result is a function of signed operands (unsigned
ones are left alone: an index that needs them is not a small array's)."""

_CMPI = {0: lambda a, b: a == b, 1: lambda a, b: a != b, 2: lambda a, b: a < b,
         3: lambda a, b: a <= b, 4: lambda a, b: a > b, 5: lambda a, b: a >= b}
"""arith.cmpi's signed predicates (eq, ne, slt, sle, sgt, sge)."""


def static_value(value: SSAValue, env: dict[SSAValue, int]) -> int | None:
    """The integer `value` always holds, given the values `env` binds (loop
    induction variables); None if it is not a function of constants and of
    `env`. Follows the index arithmetic the frontend emits (Python's
    negative-index wrap included) and `memref.dim` of static sizes."""
    if value in env:
        return env[value]
    if not isinstance(value, OpResult) or not isinstance(value.type, (IndexType, IntegerType)):
        return None
    op = value.op
    if isinstance(op, arith.ConstantOp):
        return op.value.value.data if isinstance(op.value, IntegerAttr) else None
    if type(op) in _BINARY:
        a, b = static_value(op.operands[0], env), static_value(op.operands[1], env)
        if a is None or b is None:
            return None
        r = _BINARY[type(op)](a, b)
        return None if r is None else _wrap(r)
    if isinstance(op, arith.CmpiOp):
        a, b = static_value(op.lhs, env), static_value(op.rhs, env)
        test = _CMPI.get(op.predicate.value.data)
        return None if a is None or b is None or test is None else int(test(a, b))
    if isinstance(op, arith.SelectOp):
        cond = static_value(op.cond, env)
        return None if cond is None else static_value(op.lhs if cond else op.rhs, env)
    if isinstance(op, arith.IndexCastOp):
        return static_value(op.input, env)
    if isinstance(op, memref.DimOp):
        axis = static_value(op.index, env)
        sizes = _static_sizes(op.source)
        return sizes[axis] if sizes is not None and axis is not None and 0 <= axis < len(sizes) else None
    return None


def _static_sizes(array: SSAValue) -> list[int] | None:
    if isinstance(array, OpResult) and isinstance(array.op, _ARRAY_ALLOCATIONS):
        return constant_sizes(array.op)  # type: ignore[arg-type]
    shape = array.type.get_shape() if hasattr(array.type, "get_shape") else None
    return None if shape is None or any(s < 0 for s in shape) else list(shape)


# -- which arrays ---------------------------------------------------------------------------------

Access = memref.LoadOp | memref.StoreOp


def small_array_accesses(alloc: Operation, max_elements: int) -> list[Access] | None:
    """The loads and stores of `alloc`'s array if it is small (constant
    sizes, at most `max_elements` elements) and used only in place: loads,
    stores into it, `memref.dim`, its deallocation. None otherwise (it
    escapes, is viewed or copied, or is too large)."""
    if not isinstance(alloc, _ARRAY_ALLOCATIONS):
        return None
    sizes = constant_sizes(alloc)  # type: ignore[arg-type]
    if sizes is None:
        return None
    count = 1
    for s in sizes:
        count *= s
    if count > max_elements:
        return None
    array = alloc.results[0]
    accesses: list[Access] = []
    for use in array.uses:
        user = use.operation
        if isinstance(user, memref.LoadOp):
            accesses.append(user)
        elif isinstance(user, memref.StoreOp) and user.memref is array and user.value is not array:
            accesses.append(user)
        elif not isinstance(user, (memref.DimOp, memref.DeallocOp)):
            return None
    return accesses


def _constant_trips(loop: scf.ForOp) -> int | None:
    lb, ub, step = (static_value(v, {}) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return max(0, -(-(ub - lb) // step))


def _constant_loop_ivs(op: Operation) -> dict[SSAValue, int]:
    """The induction variable of each scf.for with constant bounds around
    `op`, bound to its first value (what unrolling makes a constant)."""
    env: dict[SSAValue, int] = {}
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, scf.ForOp) and _constant_trips(parent) is not None:
            lb = static_value(parent.lb, {})
            assert lb is not None
            env[parent.body.block.args[0]] = lb
        parent = parent.parent_op()
    return env


# -- phase 1: unroll tiny loops over small arrays ---------------------------------------------------

@dataclass
class UnrollSmallArrayLoop(RewritePattern):
    """Fully unroll an `scf.for` with constant bounds whose body indexes a
    small array with the loop's induction variable, where every such index
    becomes a constant once the loops with constant bounds around it are
    unrolled; at most `limit` ops in all the copies."""

    max_elements: int
    limit: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, loop: scf.ForOp, rewriter: PatternRewriter) -> None:
        trips = _constant_trips(loop)
        if trips is None:
            return
        body_ops = nested_ops(loop)[1:]
        if trips * len(body_ops) > self.limit or not self._indexes_small_array(loop, body_ops):
            return
        lb, step = static_value(loop.lb, {}), static_value(loop.step, {})
        assert lb is not None and step is not None
        block = loop.body.block
        carried: list[SSAValue] = list(loop.iter_args)
        at = InsertPoint.before(loop)
        for t in range(trips):
            iv = arith.ConstantOp(IntegerAttr(lb + t * step, loop.lb.type))
            iv.location = loop.location
            rewriter.insert(iv, at)
            vmap: dict[SSAValue, SSAValue] = {block.args[0]: iv.result}
            vmap.update(zip(block.args[1:], carried))
            for op in block.ops:
                if isinstance(op, scf.YieldOp):
                    carried = [vmap.get(v, v) for v in op.operands]
                    break
                rewriter.insert(op.clone(value_mapper=vmap), at)
        rewriter.replace(loop, [], carried)

    def _indexes_small_array(self, loop: scf.ForOp, body_ops: Iterable[Operation]) -> bool:
        """Some access in the body indexes, through the loop's induction
        variable, a small array that unrolling makes constant-indexed (every
        access of it, here and elsewhere: else the unrolling buys nothing)."""
        iv = loop.body.block.args[0]
        for op in body_ops:
            if not isinstance(op, (memref.LoadOp, memref.StoreOp)) or not isinstance(op.memref, OpResult):
                continue
            env = _constant_loop_ivs(op)
            without = {k: v for k, v in env.items() if k is not iv}
            if all(static_value(i, without) is not None for i in op.indices):
                continue  # constant already, or not through this loop
            accesses = small_array_accesses(op.memref.op, self.max_elements)
            if accesses is not None and all(
                    static_value(i, _constant_loop_ivs(a)) is not None for a in accesses for i in a.indices):
                return True
        return False


# -- phase 2: the array as SSA values --------------------------------------------------------------

class _NotReplaceable(Exception):
    """The array stays in memory (found before anything was rewritten)."""


@dataclass(frozen=True)
class _Summary:
    """What a run of ops does to the array's elements: the elements it may
    read before writing them, those it writes on every path, those it may
    write."""

    exposed: frozenset[Key] = frozenset()
    must: frozenset[Key] = frozenset()
    may: frozenset[Key] = frozenset()

    def then(self, later: _Summary) -> _Summary:
        return _Summary(self.exposed | (later.exposed - self.must), self.must | later.must,
                        self.may | later.may)


_NOTHING = _Summary()


class _Replacement:
    """Replaces one small array by SSA values: `check()` runs the walk
    without rewriting (raises `_NotReplaceable`), `rewrite()` then runs it
    for real. The walk goes through the alloc's block in order, keeping the
    value each element holds; a region op that stores into the array
    carries the elements read after it (or in its next iteration) out as
    new results (scf.if, scf.for) and in as new iter_args (scf.for)."""

    def __init__(self, alloc: Operation, accesses: list[Access], rewriter: PatternRewriter):
        self.alloc = alloc
        self.array = alloc.results[0]
        self.sizes = constant_sizes(alloc)  # type: ignore[arg-type]
        self.rewriter = rewriter
        self.keys: dict[Operation, Key] = {}
        self.touching: set[Operation] = set()
        home = alloc.parent_block()
        for access in accesses:
            self.keys[access] = self._key(access)
            op: Operation = access
            while op.parent_block() is not home:
                parent = op.parent_op()
                if not isinstance(parent, (scf.ForOp, scf.IfOp)):
                    raise _NotReplaceable  # in a region op it cannot carry values out of
                op = parent
                self.touching.add(op)
        for use in self.array.uses:
            if isinstance(use.operation, memref.DimOp) and static_value(use.operation.index, {}) is None:
                raise _NotReplaceable
        self._summaries: dict[Operation, _Summary] = {}
        self.emit = False
        self.indices: list[SSAValue] = []
        """The index operands of the accesses replaced: their arithmetic
        (and the induction variables unrolling made constants) is dead."""

    def _key(self, access: Access) -> Key:
        key = tuple(static_value(i, {}) for i in access.indices)
        assert self.sizes is not None
        if any(k is None or not 0 <= k < s for k, s in zip(key, self.sizes)):
            raise _NotReplaceable  # a dynamic index, or one whose bounds check must fail
        return key  # type: ignore[return-value]

    # summaries
    def summary(self, op: Operation) -> _Summary:
        if op in self.keys:
            key = frozenset([self.keys[op]])
            return _Summary(exposed=key) if isinstance(op, memref.LoadOp) else _Summary(must=key, may=key)
        if op not in self.touching:
            return _NOTHING
        if op not in self._summaries:
            if isinstance(op, scf.ForOp):  # may run no iteration: writes nothing for sure
                body = self.run(op.body.block.ops)
                self._summaries[op] = _Summary(body.exposed, frozenset(), body.may)
            else:
                assert isinstance(op, scf.IfOp)
                then = self.run(op.true_region.block.ops)
                other = self.run(op.false_region.block.ops) if op.false_region.blocks else _NOTHING
                self._summaries[op] = _Summary(then.exposed | other.exposed, then.must & other.must,
                                               then.may | other.may)
        return self._summaries[op]

    def run(self, ops: Iterable[Operation]) -> _Summary:
        total = _NOTHING
        for op in ops:
            total = total.then(self.summary(op))
        return total

    # the walk
    def check(self) -> None:
        self.emit = False
        self._walk_block(self._after_alloc(), {}, frozenset())

    def rewrite(self) -> None:
        self.emit = True
        self._walk_block(self._after_alloc(), {}, frozenset())
        for use in list(self.array.uses):
            user = use.operation
            if isinstance(user, memref.DimOp):
                axis = static_value(user.index, {})
                assert axis is not None and self.sizes is not None
                size = arith.ConstantOp(IntegerAttr(self.sizes[axis], IndexType()))
                size.location = user.location
                self.rewriter.replace(user, size)
        for use in list(self.array.uses):
            assert isinstance(use.operation, memref.DeallocOp)
            self.rewriter.erase(use.operation)
        self.rewriter.erase(self.alloc)
        _erase_dead(self.indices, self.rewriter)

    def _after_alloc(self) -> list[Operation]:
        ops, seen = [], False
        for op in self.alloc.parent_block().ops:  # type: ignore[union-attr]
            if seen:
                ops.append(op)
            seen = seen or op is self.alloc
        return ops

    def _walk_block(self, ops: list[Operation], values: dict[Key, object],
                    live_out: frozenset[Key]) -> dict[Key, object]:
        """Walk `ops` with `values` (element -> the SSA value it holds, or
        `True` when only checking); `live_out`: the elements read after the
        last op. Returns the values at the end."""
        live_after: list[frozenset[Key]] = [frozenset()] * len(ops)
        live = live_out
        for i in range(len(ops) - 1, -1, -1):
            live_after[i] = live
            s = self.summary(ops[i])
            live = s.exposed | (live - s.must)
        for i, op in enumerate(ops):
            if op in self.keys:
                self._access(op, values)
            elif isinstance(op, scf.ForOp) and op in self.touching:
                self._loop(op, values, live_after[i])
            elif isinstance(op, scf.IfOp) and op in self.touching:
                self._if(op, values, live_after[i])
        return values

    def _access(self, op: Operation, values: dict[Key, object]) -> None:
        key = self.keys[op]
        if self.emit:
            self.indices += op.indices  # type: ignore[attr-defined]
        if isinstance(op, memref.StoreOp):
            values[key] = op.value if self.emit else True
            if self.emit:
                self.rewriter.erase(op)
            return
        if values.get(key) is None:
            raise _NotReplaceable  # a read of an element nothing stored (or not carried here)
        if self.emit:
            self.rewriter.replace(op, [], [values[key]])  # type: ignore[list-item]

    def _defined(self, keys: Iterable[Key], values: dict[Key, object]) -> list[object]:
        out = [values.get(k) for k in keys]
        if any(v is None for v in out):
            raise _NotReplaceable  # it would carry an element nothing stored
        return out

    def _name(self, key: Key) -> str | None:
        """`d0` for d[0], `a1x2` for a[1, 2] (the printer would renumber `d_0`)."""
        hint = self.array.name_hint
        return None if hint is None else hint + "x".join(str(k) for k in key)

    def _element_type(self):  # type: ignore[no-untyped-def]
        return self.array.type.element_type

    def _loop(self, loop: scf.ForOp, values: dict[Key, object], live_after: frozenset[Key]) -> None:
        body = self.summary(loop)
        carried = sorted(body.may & (live_after | body.exposed))
        inits = self._defined(carried, values)
        block = loop.body.block
        inner = dict(values)
        for k in carried:
            if self.emit:
                arg = block.insert_arg(self._element_type(), len(block.args))
                arg.name_hint = self._name(k)
                inner[k] = arg
            else:
                inner[k] = True
        inner = self._walk_block(list(block.ops), inner, frozenset(carried))
        if not self.emit or not carried:
            for k in body.may:
                values[k] = True if k in carried else None
            return
        yield_op = block.last_op
        assert isinstance(yield_op, scf.YieldOp)
        yield_op.operands = [*yield_op.operands, *(inner[k] for k in carried)]  # type: ignore[misc]
        region = loop.detach_region(0)
        new = scf.ForOp(loop.lb, loop.ub, loop.step, [*loop.iter_args, *inits], region)  # type: ignore[list-item]
        self._replace_region_op(loop, new, carried, values, body.may)

    def _if(self, op: scf.IfOp, values: dict[Key, object], live_after: frozenset[Key]) -> None:
        summary = self.summary(op)
        out = sorted(summary.may & live_after)
        has_else = bool(op.false_region.blocks)
        if not has_else:
            self._defined(out, values)  # the missing branch yields the values before the if
        ends = []
        for region in (op.true_region, op.false_region) if has_else else (op.true_region,):
            ends.append(self._walk_block(list(region.block.ops), dict(values), frozenset(out)))
        for end in ends:
            self._defined(out, end)
        if not self.emit or not out:
            for k in summary.may:
                values[k] = True if k in out else None
            return
        then_region = op.detach_region(0)
        else_region = op.detach_region(0)
        if not has_else and out:
            else_region.add_block(Block([scf.YieldOp(*(values[k] for k in out))]))  # type: ignore[misc]
        for region, end in zip((then_region, else_region), ends):
            yield_op = region.block.last_op
            assert isinstance(yield_op, scf.YieldOp)
            yield_op.operands = [*yield_op.operands, *(end[k] for k in out)]  # type: ignore[misc]
        new = scf.IfOp(op.cond, [*op.result_types, *(self._element_type() for _ in out)],
                       then_region, else_region)
        self._replace_region_op(op, new, out, values, summary.may)

    def _replace_region_op(self, old: Operation, new: Operation, keys: list[Key],
                           values: dict[Key, object], written: frozenset[Key]) -> None:
        new.attributes.update(old.attributes)
        new.location = old.location
        kept = len(old.results)
        for r_old, r_new in zip(old.results, new.results):
            r_new.name_hint = r_old.name_hint
        for k, r in zip(keys, new.results[kept:]):
            r.name_hint = self._name(k)
        self.rewriter.replace(old, new, new.results[:kept])
        self.summaries_moved(old, new)
        for k in written:
            values[k] = None
        values.update(zip(keys, new.results[kept:]))

    def summaries_moved(self, old: Operation, new: Operation) -> None:
        """The enclosing walk may ask the summary of the rebuilt op again."""
        if old in self._summaries:
            self._summaries[new] = self._summaries.pop(old)
        if old in self.touching:
            self.touching.discard(old)
            self.touching.add(new)


def _erase_dead(values: list[SSAValue], rewriter: PatternRewriter) -> None:
    """Erase the pure ops defining `values` that nothing uses any more, and
    then those defining their operands."""
    work = list(values)
    while work:
        value = work.pop()
        if not isinstance(value, OpResult):
            continue
        op = value.op
        if op.parent is None or op.regions or any(r.uses for r in op.results) or not is_pure(op):
            continue
        work += op.operands
        rewriter.erase(op)


@dataclass
class ScalarReplaceArray(RewritePattern):
    """A small array used only in place, at constant indices within its
    sizes, as the SSA values stored into it (module docstring)."""

    max_elements: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocOp | memref.AllocaOp, rewriter: PatternRewriter) -> None:
        accesses = small_array_accesses(op, self.max_elements)
        if accesses is None:
            return
        try:
            replacement = _Replacement(op, accesses, rewriter)
            replacement.check()
        except _NotReplaceable:
            return
        replacement.rewrite()


def scalar_replace(function: func.FuncOp, *, max_elements: int = MAX_ELEMENTS,
                   unroll_limit: int = UNROLL_LIMIT) -> None:
    """Rewrite `function` in place (the module docstring's two phases)."""
    if not any(small_array_accesses(op, max_elements) is not None for op in nested_ops(function)):
        return
    # Innermost loops first: an outer loop's size is then what its copies hold.
    PatternRewriteWalker(GreedyRewritePatternApplier([UnrollSmallArrayLoop(max_elements, unroll_limit)],
                                                     dce_enabled=False),
                         walk_regions_first=True).rewrite_region(function.body)
    PatternRewriteWalker(GreedyRewritePatternApplier([ScalarReplaceArray(max_elements)], dce_enabled=False),
                         apply_recursively=False).rewrite_region(function.body)


@dataclass(frozen=True)
class ScalarReplacePass(ModulePass):
    """`ad-scalar-replace{marked-only=false max-elements=64 unroll-limit=256}`."""

    name = "ad-scalar-replace"
    marked_only: bool = False
    """Only the functions the reverse pipeline works on (`ad.gradient_of`)."""
    max_elements: int = MAX_ELEMENTS
    unroll_limit: int = UNROLL_LIMIT

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = marked_functions(op) if self.marked_only else [
            f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]
        for function in functions:
            scalar_replace(function, max_elements=self.max_elements, unroll_limit=self.unroll_limit)
