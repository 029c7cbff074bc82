"""`ad-interchange-columns`: a loop over columns whose inner loops walk
down each column becomes passes over rows (scalar expansion, loop
distribution and interchange).

Column-wise reductions written as loops over columns,

    for j in range(n):                       # S0: mx = X[0, j]
        mx = X[0, j]
        for i in range(1, m): mx = max(mx, X[i, j])          # L1
        s = 0.0
        for i in range(m): s += math.exp(X[i, j] - mx)       # L2
        total += mx + math.log(s)                            # S2

(or through `col = X[:, j]` and `np.max(col)`, `np.sum(np.exp(col - mx))`,
which `ad-lower-linalg` and `ad-scalar-replace` make the same nest), walk
a row-major array with a stride of a row per element: every access a
cache miss, nothing vectorised, and the reverse sweep does the same. This
pass splits the outer loop `J` at its inner loops into stages, runs each
stage for all columns before the next, and turns each inner loop into a
loop over rows whose body loops over the columns:

    for j: mx[j] = X[0, j]                                   # S0
    for i in 1..m: for j: mx[j] = max(mx[j], X[i, j])        # L1, rows outside
    for j: s[j] = 0.0
    for i in 0..m: for j: s[j] += exp(X[i, j] - mx[j])       # L2
    total = for j: total + mx[j] + log(s[j])                 # S2, as J's iter_args

The scalars that one stage computes and a later stage reads (`mx`, `s`)
live in arrays of one element per column (freed after the last stage);
index arithmetic and views (`X[:, j]`) are computed again in each stage
that needs them. Each column's values are combined in the order the user
wrote (row 0, 1, ...; the total over j in column order): the results are
bit for bit those of the nest as written.

When (all checked before anything changes; otherwise the nest stays):
- `J` is an `scf.for` from 0 with step 1 whose body has an `scf.for` at
  its top level; its iter_args are read only after its last inner loop
  (the final stage: `total += ...`);
- nothing in `J`'s body writes memory, calls, allocates or prints: only
  pure ops, loads, `memref.dim` and views; the inner loops' bodies hold no
  region. A stop (`ad.raise_if`) whose operands are the same in every
  column (`np.max(X[:, j])`'s empty-column check on the view's size) is
  allowed: it is raised once before the stages when J runs at least once. With no write, running the stages in another order reads the
  same values: no dependence through memory can be reversed, whatever
  the arguments alias. (A nest that stores, `out[j] = ...`, or
  accumulates into an array stays as written.)
- each inner loop's bounds and step do not depend on `j` (the size of a
  column view counts as its size operand): the nest is rectangular;
- the values that cross stages are scalars (float, integer, index) or can
  be recomputed from `j` and values defined outside `J`;
- it pays: an inner loop reads an array of the identity layout (a row-major
  argument or allocation) at an element whose last index depends on `j`
  and not on the inner loop's variable, and whose other indices do.

Out-of-bounds reads still stop the call with their error, but with rows
outside, another of the nest's out-of-bounds reads may be the first.

In the reverse pipeline (`marked-only=true`) it runs after
`ad-scalar-replace` and before `ad-fuse-loops`: the gradient's sweeps then
run over rows as well (the loops of `ad-lower-linalg`'s reductions over a
leading axis). `ad-opt -p ad-interchange-columns` runs it on every function.
The LLVM lowering runs it (after `ad-scalar-replace`) on the functions of
every module it compiles that have such a nest (`with_rows_outside`): the
primal runs over rows too.

The loops over the columns run to the per-column arrays' size (`max(n, 0)`,
the same columns as `0..n`): their accesses are in bounds by construction,
and so the gradient's repeats of them are unchecked (ad-elide-shadow-checks)
and LLVM vectorises the reverse sweeps.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    UnitAttr,
)
from xdsl.ir import Block, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass

from adpasses.core.effects import is_pure
from adpasses.dialects.ad import BOUNDS_CHECKED_OPS, PARALLEL_ATTR, UNCHECKED_ATTR, RaiseIfOp
from adpasses.transforms.gradient_marks import marked_functions
from adpasses.transforms.scalar_replace import scalar_replace

_VIEWS = (memref.SubviewOp,)
_DIVISIONS = (arith.DivSIOp, arith.DivUIOp, arith.CeilDivSIOp, arith.CeilDivUIOp, arith.FloorDivSIOp,
              arith.RemSIOp, arith.RemUIOp)


def interchange_columns_in(function: func.FuncOp) -> int:
    """Interchange every column nest of `function` that qualifies; returns
    how many were rewritten."""
    done = 0
    for loop in [op for op in function.walk() if isinstance(op, scf.ForOp)]:
        if not function.is_ancestor(loop):
            continue  # a stage of a nest rewritten (and erased) before
        plan = _plan(loop)
        if plan is not None:
            _rewrite(loop, plan)
            done += 1
    return done


# -- analysis ----------------------------------------------------------------------------------


@dataclass
class _Plan:
    hoisted: list[Operation]
    """Pure ops of J's body that use nothing of J: moved before J."""
    stages: list[list[Operation]]
    """Scalar stages (lists of ops) and loop stages ([the inner scf.for]),
    alternating; the last one is the final stage (J's iter_args, its yield)."""
    expanded: list[SSAValue]
    """Scalars one stage defines and a later one reads: one array each."""
    invariant: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """J-dependent values known equal to a value defined before J (the size
    of a column view)."""
    raises: list[RaiseIfOp] = field(default_factory=list)
    """Stops of J's body whose operands are the same in every column (the
    empty-column check of `np.max(X[:, j])`): raised before the stages when
    J runs at least once."""


def _constant_index(v: SSAValue) -> int | None:
    if isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp):
        value = v.op.value
        if isinstance(value, IntegerAttr):
            return value.value.data
    return None


def _defined_in(v: SSAValue, block: Block) -> bool:
    """`v` is defined in `block` or in a region below it."""
    owner = v.op if isinstance(v, OpResult) else v.block.parent_op()  # type: ignore[attr-defined]
    if isinstance(v, OpResult):
        parent = owner.parent_block()
    else:
        parent = v.block  # type: ignore[attr-defined]
    while parent is not None:
        if parent is block:
            return True
        up = parent.parent_op()
        parent = up.parent_block() if up is not None else None
    return False


def _is_scalar(t: object) -> bool:
    return isinstance(t, (AnyFloat, IntegerType, IndexType))


def _allowed(op: Operation) -> bool:
    """An op that may sit in J's body: no effect but reading memory."""
    if op.regions:
        return False
    return is_pure(op) or isinstance(op, (memref.LoadOp, memref.DimOp, *_VIEWS))


def _plan(loop: scf.ForOp) -> _Plan | None:
    if _constant_index(loop.lb) != 0 or _constant_index(loop.step) != 1:
        return None
    if PARALLEL_ATTR in loop.attributes:
        return None  # outlined as written (transforms/parallelize.py)
    body = loop.body.block
    ops = list(body.ops)[:-1]
    if not any(isinstance(op, scf.ForOp) for op in ops):
        return None
    hoisted = [op for op in _hoistable(loop, ops)]
    hoisted_set = set(hoisted)
    stages: list[list[Operation]] = [[]]
    raises: list[RaiseIfOp] = []
    for op in ops:
        if op in hoisted_set:
            continue
        if isinstance(op, RaiseIfOp) and all(_same_each_column(v, loop, hoisted_set) for v in op.operands):
            raises.append(op)
        elif isinstance(op, scf.ForOp):
            stages += [[op], []]
        elif _allowed(op):
            stages[-1].append(op)
        else:
            return None  # a write, a call, an allocation, a region: order matters
    stage_of: dict[Operation, int] = {op: k for k, stage in enumerate(stages) for op in stage}
    invariant: dict[SSAValue, SSAValue] = {}
    for k, stage in enumerate(stages):
        if k % 2 == 0:
            continue
        inner = stage[0]
        assert isinstance(inner, scf.ForOp)
        if PARALLEL_ATTR in inner.attributes:
            return None
        for bound in (inner.lb, inner.ub, inner.step):
            same = _before_loop(bound, loop, hoisted_set)
            if same is None:
                return None
            if same is not bound:
                invariant[bound] = same
        for op in list(inner.body.block.ops)[:-1]:
            if not _allowed(op):
                return None
    # J's iter_args: read in the final stage only.
    final = len(stages) - 1
    for arg in body.args[1:]:
        for use in arg.uses:
            user = _stage_op(use.operation, body)
            if user is not body.last_op and stage_of.get(user) != final:
                return None
    expanded: list[SSAValue] = []
    for k, stage in enumerate(stages):
        for op in stage:
            if isinstance(op, scf.ForOp):  # its carried values: one array each
                if not all(_is_scalar(r.type) for r in op.results):
                    return None
                expanded += op.results
                continue
            for result in op.results:
                later = [u for u in result.uses
                         if (s := stage_of.get(_stage_op(u.operation, body), final)) != k]
                if not later or _recomputable(result, loop, hoisted_set):
                    continue
                if not _is_scalar(result.type):
                    return None
                expanded.append(result)
    if not any(_walks_columns(st[0], loop) for k, st in enumerate(stages) if k % 2 == 1):
        return None
    return _Plan(hoisted, stages, expanded, invariant, raises)


def _stage_op(op: Operation, body: Block) -> Operation:
    """The op of `body` that holds `op`."""
    while op.parent_block() is not body:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def _hoistable(loop: scf.ForOp, ops: list[Operation]) -> Iterable[Operation]:
    """Pure ops (and sizes) of J's body whose operands are all defined before J
    or by ops hoisted before them."""
    moved: set[Operation] = set()
    for op in ops:
        if op.regions or not (is_pure(op) or isinstance(op, memref.DimOp)):
            continue
        if isinstance(op, _DIVISIONS) and not _constant_index(op.operands[1]):
            continue  # a division by zero must not run where J runs no iteration
        if all(not _defined_in(v, loop.body.block) or (isinstance(v, OpResult) and v.op in moved)
               for v in op.operands):
            moved.add(op)
            yield op


def _before_loop(v: SSAValue, loop: scf.ForOp, hoisted: set[Operation]) -> SSAValue | None:
    """`v`, or a value equal to it, available before J (hoisted ops count)."""
    if not _defined_in(v, loop.body.block):
        return v
    if not isinstance(v, OpResult):
        return None
    if v.op in hoisted:
        return v
    if isinstance(v.op, memref.DimOp):
        size = _view_size(v.op)
        if size is not None:
            return _before_loop(size, loop, hoisted)
    return None


def _same_each_column(v: SSAValue, loop: scf.ForOp, hoisted: set[Operation], depth: int = 8) -> bool:
    """`v` has one value for every column and can be built before J
    (`_before_loop`): pure ops of values defined before J and of the sizes
    of column views."""
    if _before_loop(v, loop, hoisted) is not None:
        return True
    if depth == 0 or not isinstance(v, OpResult) or v.op.regions or not is_pure(v.op):
        return False
    if isinstance(v.op, _DIVISIONS):
        return False  # a division by zero must not run where J runs no iteration
    return all(_same_each_column(u, loop, hoisted, depth - 1) for u in v.op.operands)


def _view_size(dim: memref.DimOp) -> SSAValue | None:
    """The size operand a `memref.dim` of a subview reads, when its index is a
    constant and the subview keeps the dimensions whose size is not 1."""
    source = dim.source
    index = _constant_index(dim.index)
    if index is None or not isinstance(source, OpResult) or not isinstance(source.op, memref.SubviewOp):
        return None
    view = source.op
    sizes = list(view.static_sizes.get_values())
    dynamic = iter(view.sizes)
    per_dim: list[SSAValue | None] = [next(dynamic) if s == DYNAMIC_INDEX else None for s in sizes]
    kept = [k for k, s in enumerate(sizes) if s != 1]
    result_rank = len(view.result.type.get_shape())  # type: ignore[attr-defined]
    if len(kept) != result_rank or index >= result_rank:
        return None
    return per_dim[kept[index]]


def _recomputable(v: SSAValue, loop: scf.ForOp, hoisted: set[Operation], depth: int = 8) -> bool:
    """`v` can be computed again in another stage from `j` and values defined
    before J: index arithmetic and views, not floats and not loads."""
    if not _defined_in(v, loop.body.block) or v is loop.body.block.args[0]:
        return True
    if not isinstance(v, OpResult):
        return False  # J's iter_args
    if v.op in hoisted:
        return True
    if depth == 0:
        return False
    op = v.op
    if op.regions or isinstance(op, memref.LoadOp) or not (is_pure(op) or isinstance(op, (memref.DimOp, *_VIEWS))):
        return False
    if not all(isinstance(r.type, (IndexType, MemRefType)) for r in op.results):
        return False
    return all(_recomputable(u, loop, hoisted, depth - 1) for u in op.operands)


def _depends(v: SSAValue, on: SSAValue, depth: int = 12) -> bool:
    if v is on:
        return True
    if depth == 0 or not isinstance(v, OpResult):
        return False
    return any(_depends(u, on, depth - 1) for u in v.op.operands)


def _walks_columns(inner: Operation, loop: scf.ForOp) -> bool:
    """A read of the inner loop goes down a column of a row-major array: its
    last index depends on j and not on i, another index on i."""
    assert isinstance(inner, scf.ForOp)
    i, j = inner.body.block.args[0], loop.body.block.args[0]
    for op in inner.body.block.ops:
        if not isinstance(op, memref.LoadOp):
            continue
        access = _base_access(op.memref, list(op.indices))
        if access is None:
            continue
        base, index_deps = access
        t = base.type
        if not isinstance(t, MemRefType) or len(t.get_shape()) < 2 or not isinstance(t.layout, NoneAttr):
            continue
        last = index_deps[-1]
        if any(_depends(x, j) for x in last) and not any(_depends(x, i) for x in last) and any(
                _depends(x, i) for deps in index_deps[:-1] for x in deps):
            return True
    return False


def _base_access(ref: SSAValue, indices: list[SSAValue]) -> tuple[SSAValue, list[list[SSAValue]]] | None:
    """The array under `ref` (through subviews) and, per dimension of it, the
    values its index is computed from."""
    deps: list[list[SSAValue]] = [[x] for x in indices]
    while isinstance(ref, OpResult) and isinstance(ref.op, memref.SubviewOp):
        view = ref.op
        sizes = list(view.static_sizes.get_values())
        offsets = list(view.static_offsets.get_values())
        dyn_offsets = iter(view.offsets)
        offset_vals = [[next(dyn_offsets)] if o == DYNAMIC_INDEX else [] for o in offsets]
        kept = [k for k, s in enumerate(sizes) if s != 1]
        if len(kept) != len(deps):
            return None
        source_deps = [list(o) for o in offset_vals]
        for r, k in enumerate(kept):
            source_deps[k] += deps[r]
        deps, ref = source_deps, view.source
    return ref, deps


# -- rewrite -----------------------------------------------------------------------------------


class _Rewriter:
    """Emits the stages of `loop` before it, as loops over the columns."""

    def __init__(self, loop: scf.ForOp, plan: _Plan) -> None:
        self.loop, self.plan = loop, plan
        self.j = loop.body.block.args[0]
        block = loop.parent_block()
        assert block is not None
        self.block = block
        for op in plan.hoisted:
            op.detach()
            block.insert_op_before(op, loop)
        self.zero = self.before(arith.ConstantOp.from_int_and_width(0, IndexType())).results[0]
        self.one = self.before(arith.ConstantOp.from_int_and_width(1, IndexType())).results[0]
        self.count = self.before(arith.MaxSIOp(loop.ub, self.zero)).results[0]
        self.raise_before(plan.raises)
        self.buffers: dict[SSAValue, SSAValue] = {}
        # An inner loop's initial value that nothing else reads is stored
        # straight into the array of the loop's carried value.
        self.stored_as_state: dict[SSAValue, SSAValue] = {}
        for stage in plan.stages[1::2]:
            for init, result in zip(stage[0].iter_args, stage[0].results):  # type: ignore[attr-defined]
                if init in plan.expanded and len(list(init.uses)) == 1 and init not in self.stored_as_state:
                    self.stored_as_state[init] = result
        for v in plan.expanded:
            if v in self.stored_as_state:
                continue
            buf = self.before(memref.AllocOp([self.count], [], MemRefType(v.type, [DYNAMIC_INDEX]))).results[0]
            if v.name_hint:
                buf.name_hint = f"{v.name_hint}_per_column"
            self.buffers[v] = buf
        for init, result in self.stored_as_state.items():
            self.buffers[init] = self.buffers[result]

    def raise_before(self, raises: list[RaiseIfOp]) -> None:
        """Each stop that is the same in every column, before the stages,
        taken only when J runs at least once (as Python would raise it in
        column 0; with no write in J, nothing else is observable first)."""
        if not raises:
            return
        runs = self.before(arith.CmpiOp(self.loop.ub, self.zero, "sgt")).results[0]
        built: dict[SSAValue, SSAValue] = {}
        for stop in raises:
            operands = [self.invariant_value(v, built) for v in stop.operands]
            cond = self.before(arith.AndIOp(runs, operands[0])).results[0]
            moved = stop.clone()
            moved.operands = [cond, *operands[1:]]
            self.block.insert_op_before(moved, self.loop)
            stop.detach()
            stop.erase()

    def invariant_value(self, v: SSAValue, built: dict[SSAValue, SSAValue]) -> SSAValue:
        """`v` (`_same_each_column`) computed before J."""
        same = _before_loop(v, self.loop, set(self.plan.hoisted))
        if same is not None:
            return same
        if v not in built:
            assert isinstance(v, OpResult)
            op = v.op.clone()
            op.operands = [self.invariant_value(u, built) for u in v.op.operands]
            self.before(op)
            for old, new in zip(v.op.results, op.results):
                built[old] = new
        return built[v]

    def before(self, op: Operation) -> Operation:
        op.location = self.loop.location
        self.block.insert_op_before(op, self.loop)
        return op

    def column_loop(self, iter_args: list[SSAValue], at: Block | None = None) -> tuple[scf.ForOp, Block]:
        blk = Block(arg_types=[IndexType(), *(a.type for a in iter_args)])
        blk.args[0].name_hint = self.j.name_hint
        # To the arrays' size (max(n, 0): the same iterations from 0): their
        # accesses at j are then in bounds by construction, and so are the
        # reverse sweep's repeats of them (ad-elide-shadow-checks), which
        # LLVM vectorises only without a check.
        new = scf.ForOp(self.zero, self.count, self.one, iter_args, Region(blk))
        new.location = self.loop.location
        if at is None:
            self.before(new)
        else:
            at.add_op(new)
        return new, blk

    def local(self, v: SSAValue, blk: Block, vmap: dict[SSAValue, SSAValue]) -> SSAValue:
        """`v` as the stage being emitted in `blk` reads it: its copy, a load of
        its column's element, its computation again, or itself."""
        if v in vmap:
            return vmap[v]
        if v in self.plan.invariant:
            return self.plan.invariant[v]
        if not _defined_in(v, self.loop.body.block):
            return v
        if v in self.buffers:
            load = memref.LoadOp.get(self.buffers[v], [vmap[self.j]])
            load.attributes[UNCHECKED_ATTR] = UnitAttr()
            load.location = self.loop.location
            blk.add_op(load)
            vmap[v] = load.res
            return load.res
        assert isinstance(v, OpResult)
        self.clone_into(v.op, blk, vmap)
        return vmap[v]

    def clone_into(self, op: Operation, blk: Block, vmap: dict[SSAValue, SSAValue]) -> None:
        if op.results and all(r in vmap for r in op.results):
            return
        for operand in op.operands:
            self.local(operand, blk, vmap)
        blk.add_op(op.clone(value_mapper=vmap))

    def store(self, v: SSAValue, buf: SSAValue, blk: Block, vmap: dict[SSAValue, SSAValue]) -> None:
        st = memref.StoreOp.get(self.local(v, blk, vmap), buf, [vmap[self.j]])
        st.attributes[UNCHECKED_ATTR] = UnitAttr()
        st.location = self.loop.location
        blk.add_op(st)

    def scalar_stage(self, ops: list[Operation]) -> None:
        """The stage's values that later stages read from arrays, stored per
        column (the rest is computed again where it is needed), and the
        checked accesses that no later stage repeats (an unused, out-of-bounds
        `X[k, j]` still raises), in the order written."""
        stored = [r for op in ops for r in op.results if r in self.buffers]
        body, own = self.loop.body.block, set(ops)
        checked = [op for op in ops if isinstance(op, BOUNDS_CHECKED_OPS) and UNCHECKED_ATTR not in op.attributes
                   and all(_stage_op(u.operation, body) in own for r in op.results for u in r.uses)]
        if not stored and not checked:
            return
        _, blk = self.column_loop([])
        vmap: dict[SSAValue, SSAValue] = {self.j: blk.args[0]}
        needed = set(checked) | {r.op for r in stored if isinstance(r, OpResult)}
        for op in ops:
            if op in needed:
                self.clone_into(op, blk, vmap)
        for r in stored:
            self.store(r, self.buffers[r], blk, vmap)
        blk.add_op(scf.YieldOp())

    def final_stage(self, ops: list[Operation]) -> None:
        body = self.loop.body.block
        new, blk = self.column_loop(list(self.loop.iter_args))
        vmap: dict[SSAValue, SSAValue] = {self.j: blk.args[0]}
        for old, arg in zip(body.args[1:], blk.args[1:]):
            arg.name_hint = old.name_hint
            vmap[old] = arg
        for op in ops:
            self.clone_into(op, blk, vmap)
        end = body.last_op
        assert isinstance(end, scf.YieldOp)
        yielded = [self.local(v, blk, vmap) for v in end.arguments]
        y = scf.YieldOp(*yielded)
        y.location = end.location
        blk.add_op(y)
        for old, res in zip(self.loop.results, new.results):
            res.name_hint = old.name_hint
            old.replace_all_uses_with(res)

    def loop_stage(self, inner: scf.ForOp) -> None:
        """Each column's carried values in their arrays; rows outside."""
        state = [self.buffers[r] for r in inner.results]
        inits = [(init, buf) for init, buf in zip(inner.iter_args, state) if init not in self.stored_as_state]
        if inits:
            _, blk = self.column_loop([])
            vmap: dict[SSAValue, SSAValue] = {self.j: blk.args[0]}
            for init, buf in inits:
                self.store(init, buf, blk, vmap)
            blk.add_op(scf.YieldOp())
        bounds = [self.plan.invariant.get(b, b) for b in (inner.lb, inner.ub, inner.step)]
        rows_blk = Block(arg_types=[IndexType()])
        rows_blk.args[0].name_hint = inner.body.block.args[0].name_hint
        rows = scf.ForOp(*bounds, [], Region(rows_blk))
        rows.location = inner.location
        self.before(rows)
        _, cols = self.column_loop([], rows_blk)
        rows_blk.add_op(scf.YieldOp())
        inner_body = inner.body.block
        vmap = {self.j: cols.args[0], inner_body.args[0]: rows_blk.args[0]}
        for arg, buf in zip(inner_body.args[1:], state):
            load = memref.LoadOp.get(buf, [cols.args[0]])
            load.attributes[UNCHECKED_ATTR] = UnitAttr()
            load.location = inner.location
            load.res.name_hint = arg.name_hint
            cols.add_op(load)
            vmap[arg] = load.res
        for op in list(inner_body.ops)[:-1]:
            self.clone_into(op, cols, vmap)
        end = inner_body.last_op
        assert isinstance(end, scf.YieldOp)
        for v, buf in zip(end.arguments, state):
            self.store(v, buf, cols, vmap)
        cols.add_op(scf.YieldOp())

    def finish(self) -> None:
        for buf in dict.fromkeys(self.buffers.values()):
            dealloc = memref.DeallocOp.get(buf)
            dealloc.location = self.loop.location
            self.block.insert_op_after(dealloc, self.loop)
        self.loop.detach()
        self.loop.erase(safe_erase=False)


def _rewrite(loop: scf.ForOp, plan: _Plan) -> None:
    rw = _Rewriter(loop, plan)
    final = len(plan.stages) - 1
    for k, stage in enumerate(plan.stages):
        if k == final:
            rw.final_stage(stage)
        elif k % 2 == 0:
            rw.scalar_stage(stage)
        else:
            assert isinstance(stage[0], scf.ForOp)
            rw.loop_stage(stage[0])
    rw.finish()


def _candidate(loop: scf.ForOp) -> bool:
    """Cheap: `loop` could be a column nest (from 0, step 1, an inner loop
    at its top level walking down a column)."""
    if _constant_index(loop.lb) != 0 or _constant_index(loop.step) != 1:
        return False
    return any(isinstance(op, scf.ForOp) and _walks_columns(op, loop) for op in loop.body.block.ops)


def with_rows_outside(module: ModuleOp, *, copy: bool = True) -> ModuleOp:
    """What the LLVM lowering compiles: `module` itself if no function has a
    column nest that qualifies, else a copy (`copy=False`: `module`, in
    place) in which each function that has one is replaced by its
    rewrite: small local arrays as SSA values first (`ad-scalar-replace`,
    which makes `np.max(X[:, j])`'s accumulator a carried value), then
    the nests as passes over rows. A function with no nest rewritten is
    left exactly as it was (scalar replacement included)."""
    rewritten: dict[str, func.FuncOp] = {}
    for function in module.ops:
        if not (isinstance(function, func.FuncOp) and function.body.blocks):
            continue
        if not any(isinstance(op, scf.ForOp) and _candidate(op) for op in function.walk()):
            continue
        trial = function.clone()
        scalar_replace(trial)
        if interchange_columns_in(trial):
            rewritten[function.sym_name.data] = trial
    if not rewritten:
        return module
    target = module.clone() if copy else module
    for function in list(target.ops):
        if isinstance(function, func.FuncOp) and function.sym_name.data in rewritten:
            target.body.block.insert_op_before(rewritten[function.sym_name.data], function)
            function.detach()
            function.erase()
    return target


@dataclass(frozen=True)
class InterchangeColumnsPass(ModulePass):
    name = "ad-interchange-columns"

    marked_only: bool = False
    """Only the functions being differentiated (`ad.gradient_of`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = (marked_functions(op) if self.marked_only else
                     [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks])
        for function in functions:
            interchange_columns_in(function)
