"""`ad-parallelize`: loops marked `ad.parallel` whose iterations are proven
independent run on several threads (docs/parallel.md).

A loop marked `ad.parallel` (by `adpasses.prange`, or every top-level loop
of a `jit(parallel=True)` function) runs in parallel when

1. **memory**: the alias analysis proves its iterations independent
   (`AliasAnalysis.iteration_conflict`: no iteration writes memory another
   iteration reads or writes, through views and calls included);
2. **scalars**: every loop-carried value is a sum (through adds and
   subtractions, inner loops and ifs: `if c: s += e`; no partial sum read)
   or kept (yielded unchanged: the adjoint of a sum in the reverse of its
   loop): `transforms/carried_values.py`. Each chunk of iterations sums
   its own part, and the parts are added in chunk order; every chunk reads
   a kept value's initial value;
3. **effects**: nothing in it prints (the output's order would depend on
   the threads), and it uses no tape made before it (a tape of known
   capacity given a fixed layout, a row per iteration, is memory like any
   other: transforms/tape_layout.py; one lowered as a stack is refused
   with the reason it has no fixed layout);
4. **values**: what it uses from outside is numbers and arrays.

Such a loop is outlined into a private function
`callee(lo, hi, step, captured..., accumulators...) -> accumulators` (the
loop itself, over `lo .. hi`) and replaced by `ad.parallel_for`, which the
LLVM lowering runs on the runtime's threads (adpasses/lowering/parallel.py).
Any other marked loop stays a serial loop. Nested marked loops inside a
parallel one run serially inside its chunks.

Run by the LLVM lowering on every module it compiles (`with_parallel_loops`),
after differentiation: the gradient's loops are proven again. Before the
proof, accumulations into one element (`dw[0] += ...`) become sums
(`transforms/accumulators.py`), and accumulations at varying indices
(`dx[idx[i]] += ...`) go to private copies per chunk
(`transforms/privatize.py`).
`prange_problems` (the API's check, `strict=true` here) reports a prange
loop that is not parallel, with its reason, as an error at its line.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from adpasses.analysis.alias import AliasAnalysis
from adpasses.analysis.memref_access import ObjectKind, is_injective, object_of
from adpasses.core.diagnostics import error_at, op_location
from adpasses.core.effects import OUTPUT, effects_of
from adpasses.core.ir_walk import nested_ops
from adpasses.core.region_flow import counted_loop
from adpasses.core.types import is_float_type
from adpasses.dialects.ad import NOALIAS_ATTRS, PARALLEL_ATTR, ZERO_FILL_MARK, ParallelForOp, TapeType
from adpasses.transforms.accumulators import promote_accumulators
from adpasses.transforms.carried_values import carried_kinds
from adpasses.transforms.dead_carried import drop_dead_carried
from adpasses.transforms.privatize import privatize
from adpasses.transforms.tape_layout import STACK_ATTR


def marked_loops(function: func.FuncOp) -> list[scf.ForOp]:
    """The outermost loops of `function` marked `ad.parallel`."""
    found: list[scf.ForOp] = []

    def visit(block: Block) -> None:
        for op in block.ops:
            if isinstance(op, scf.ForOp) and PARALLEL_ATTR in op.attributes:
                found.append(op)
                continue
            for region in op.regions:
                for b in region.blocks:
                    visit(b)

    for block in function.body.blocks:
        visit(block)
    return found


def _inside(value: SSAValue, loop: Operation) -> bool:
    owner = value.block if isinstance(value, BlockArgument) else value.owner.parent_block()  # type: ignore[union-attr]
    while owner is not None:
        parent = owner.parent_op()
        if parent is loop:
            return True
        owner = parent.parent_block() if parent is not None else None
    return False


def _capturable(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, (IndexType, IntegerType, MemRefType)) or is_float_type(t)


def captured_values(loop: scf.ForOp) -> list[SSAValue]:
    """Values defined outside `loop` that ops inside it use (its own
    operands excluded), in order of first use."""
    seen: dict[SSAValue, None] = {}
    for op in nested_ops(loop)[1:]:
        for v in op.operands:
            if v not in seen and not _inside(v, loop):
                seen[v] = None
    return list(seen)


def parallel_problem(loop: scf.ForOp, alias: AliasAnalysis) -> str | None:
    """Why `loop` cannot run in parallel, or None (the module doc's rules)."""
    if counted_loop(loop) is None:
        return "it is not a counted loop"
    stack = _tape_stack(loop)
    if stack is not None:
        return stack
    conflict = alias.iteration_conflict(loop, per_thread=True)
    if conflict is not None:
        return f"its iterations may depend on each other: {conflict}"
    body = loop.body.block
    for k, (arg, kind) in enumerate(zip(body.args[1:], carried_kinds(loop))):
        if kind is None:
            return (f"the loop-carried value {alias.name(arg)} is not a sum reduction (s = s + e, s = s - e, "
                    "if c: s += e, or s += e in an inner loop; the partial sums read by nothing else): "
                    "each iteration needs the one before")
        if not (is_float_type(arg.type) or isinstance(arg.type, (IntegerType, IndexType))):
            return f"the loop-carried value {alias.name(arg)} is not a number"
    for op in nested_ops(loop)[1:]:
        shared_tape = next((v for v in op.operands if isinstance(v.type, TapeType) and not _inside(v, loop)), None)
        if shared_tape is not None:
            return (f"{op.name} at {op_location(op) or '?'} uses a tape made before the loop, one that grows "
                    "as it is pushed (how many values each iteration tapes is not known when the loop starts, "
                    "e.g. an inner loop whose trip count depends on the iteration), so it has no fixed place "
                    "per iteration: its iterations push and pop in one order")
        effects = effects_of(op)
        if effects and any(getattr(e, "resource", None) is OUTPUT for e in effects):
            return f"it prints ({op.name}): the output's order would depend on the threads"
    for v in captured_values(loop):
        if not _capturable(v):
            return f"it uses a value of type {v.type} defined before it"
    return None


def _tape_stack(loop: scf.ForOp) -> str | None:
    """Why the loop uses a tape lowered as a stack (one counter shared by
    its iterations: push order), when it does (transforms/tape_layout.py)."""
    for op in nested_ops(loop)[1:]:
        if isinstance(op, (memref.LoadOp, memref.StoreOp)) and isinstance(op.memref, OpResult):
            why = op.memref.op.attributes.get(STACK_ATTR)
            if isinstance(why, StringAttr):
                return (f"it pushes or pops a tape shared by its iterations in push order, with no fixed "
                        f"place per iteration: {why.data}")
    return None


def _clone_constants(captured: list[SSAValue]) -> tuple[list[SSAValue], list[Operation]]:
    """Captured constants are cloned into the outlined function (LLVM then
    sees them: vector widths, bounds); the rest become parameters."""
    kept, constants = [], []
    for v in captured:
        owner = v.owner
        if isinstance(owner, arith.ConstantOp):
            constants.append(owner)
        else:
            kept.append(v)
    return kept, constants


def distinct_memrefs(function: func.FuncOp, captured: list[SSAValue]) -> set[SSAValue]:
    """The captured memrefs the outlined body may mark noalias: each is
    (a view of) its own memory object, which no other captured memref
    reaches, and that object is a noalias argument of `function` or an
    allocation of it (a private copy, a workspace). Inside the outlined
    function each such object is then reached through that one parameter
    only, which is what LLVM's noalias asks, and it lets LLVM vectorise
    the chunk's loop (stores to one array, loads from another)."""
    arg_attrs = function.arg_attrs.data if function.arg_attrs is not None else ()
    entry_args = list(function.body.block.args)

    def own_memory(obj: SSAValue, kind: ObjectKind) -> bool:
        if kind is ObjectKind.ALLOCATION:
            return True
        if kind is ObjectKind.ARGUMENT and obj in entry_args:
            k = entry_args.index(obj)
            return k < len(arg_attrs) and any(n in arg_attrs[k].data for n in NOALIAS_ATTRS)
        return False

    memrefs = [v for v in captured if isinstance(v.type, MemRefType)]
    objects = [object_of(v) for v in memrefs]
    sharing: dict[SSAValue, int] = {}
    for obj in objects:
        sharing[obj.value] = sharing.get(obj.value, 0) + 1
    return {v for v, obj in zip(memrefs, objects)
            if sharing[obj.value] == 1 and own_memory(obj.value, obj.kind)}


def outline(loop: scf.ForOp, function: func.FuncOp, name: str) -> ParallelForOp:
    """Replace `loop` by an `ad.parallel_for` of a new private function
    `name` (inserted after `function`) that runs the loop over `lo .. hi`.
    Carried values nothing reads are dropped first (transforms/dead_carried.py):
    outlined, LLVM could no longer tell that the caller ignores them."""
    loop = drop_dead_carried(loop)
    params, constants = _clone_constants(captured_values(loop))
    inits = list(loop.iter_args)
    index = IndexType()
    types = [index, index, index, *(v.type for v in params), *(v.type for v in inits)]
    block = Block(arg_types=types)
    lo, hi, step = block.args[:3]
    lo.name_hint, hi.name_hint, step.name_hint = "lo", "hi", "step"
    mapper: dict[SSAValue, SSAValue] = {}
    for v, a in zip(params, block.args[3:3 + len(params)]):
        mapper[v] = a
        a.name_hint = v.name_hint
    for c in constants:
        copy = c.clone()
        block.add_op(copy)
        mapper[c.results[0]] = copy.results[0]
    body = loop.clone(value_mapper=mapper)
    # A zero-fill's constant step stays a constant in the chunk's loop (the
    # parameter, the same value, is then unused): LLVM sees that the chunk's
    # stores are contiguous and makes them one memset. (Not for other loops:
    # vectorised, a chunk's elements would be computed by vector or scalar
    # code depending on where the chunks start, and math functions' bits
    # would depend on the thread count.)
    inner_step: SSAValue = step
    mark = loop.attributes.get(PARALLEL_ATTR)
    if isinstance(mark, StringAttr) and mark.data == ZERO_FILL_MARK and isinstance(loop.step, OpResult) \
            and isinstance(loop.step.op, arith.ConstantOp):
        const = loop.step.op.clone()
        block.add_op(const)
        inner_step = const.results[0]
    body.operands = [lo, hi, inner_step, *block.args[3 + len(params):]]
    del body.attributes[PARALLEL_ATTR]
    block.add_op(body)
    block.add_op(func.ReturnOp(*body.results))
    outlined = func.FuncOp(name, FunctionType.from_lists(types, [v.type for v in inits]),
                           Region(block), visibility="private")
    outlined.location = loop.location
    distinct = distinct_memrefs(function, params)
    if distinct:
        outlined.arg_attrs = ArrayAttr([
            DictionaryAttr({NOALIAS_ATTRS[0]: UnitAttr()}) if v in distinct else DictionaryAttr({})
            for v in [lo, hi, step, *params, *inits]])
    module = function.parent_op()
    assert module is not None
    module.regions[0].block.insert_op_after(outlined, function)
    kinds = "".join(kind or "?" for kind in carried_kinds(loop))
    assert "?" not in kinds, "outline() of a loop parallel_problem rejected"
    par = ParallelForOp(name, loop.lb, loop.ub, loop.step, params, inits, kinds)
    par.location = loop.location
    parent = loop.parent_block()
    assert parent is not None
    parent.insert_op_before(par, loop)
    for old, new in zip(loop.results, par.res):
        old.replace_all_uses_with(new)
    parent.erase_op(loop)
    return par


def _fresh_name(module: ModuleOp, base: str) -> str:
    taken = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    k = 0
    while f"{base}.par{k}" in taken:
        k += 1
    return f"{base}.par{k}"


def parallelize_function(function: func.FuncOp, *, strict: bool = False) -> list[tuple[scf.ForOp, str | None]]:
    """Outline each marked loop of `function` that may run in parallel;
    unmark the others (and nested marks). Returns (loop, problem) per
    marked loop. `strict`: a prange loop with a problem is a CompileError."""
    decisions = _decide(function, strict)
    if not decisions:
        return []
    module = function.parent_op()
    assert isinstance(module, ModuleOp)
    for loop, problem in decisions:
        for inner in nested_ops(loop)[1:]:
            inner.attributes.pop(PARALLEL_ATTR, None)
        if problem is None:
            outline(loop, function, _fresh_name(module, function.sym_name.data))
        elif strided_only(loop, function):
            version_on_strides(loop, function, _fresh_name(module, function.sym_name.data))
        else:
            del loop.attributes[PARALLEL_ATTR]
    return decisions


def strided_arguments(loop: scf.ForOp, function: func.FuncOp) -> list[SSAValue]:
    """The arguments of `function` whose memory `loop` uses (through views
    too) and whose layout does not make distinct indices distinct elements
    (dynamic strides)."""
    entry_args = list(function.body.block.args)
    found: dict[SSAValue, None] = {}
    for v in captured_values(loop):
        if isinstance(v.type, MemRefType):
            obj = object_of(v)
            if obj.value in entry_args and not is_injective(obj.value.type):
                found[obj.value] = None
    return list(found)


def _distinct_elements(b: Builder, m: SSAValue) -> SSAValue:
    """i1: distinct in-bounds indices of `m` address distinct elements, by
    a sufficient test on its sizes n and strides s (read when the loop
    starts): in row-major order (each dimension of size > 1 has a stride
    >= 1 larger than the span sum (n_j - 1) s_j of the dimensions after
    it) or in column-major order (the same, with the dimensions before
    it). A stride 0 (np.broadcast_to) or a negative one fails it."""
    meta = b.insert(memref.ExtractStridedMetaDataOp(m))
    sizes, strides = list(meta.sizes), list(meta.strides)
    zero = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType())).result
    one = b.insert(arith.ConstantOp.from_int_and_width(1, IndexType())).result
    true = b.insert(arith.ConstantOp.from_int_and_width(1, 1)).result

    def nested(order: list[int]) -> SSAValue:
        ok, span = true, zero
        for at, k in enumerate(order):  # innermost first
            n, s = sizes[k], strides[k]
            trivial = b.insert(arith.CmpiOp(n, one, "ule")).result
            positive = b.insert(arith.CmpiOp(s, one, "sge")).result
            beyond = b.insert(arith.CmpiOp(s, span, "sgt")).result
            fine = b.insert(arith.AndIOp(positive, beyond)).result
            ok = b.insert(arith.AndIOp(ok, b.insert(arith.OrIOp(trivial, fine)).result)).result
            if at == len(order) - 1:
                break
            extent = b.insert(arith.SubiOp(b.insert(arith.MaxSIOp(n, one)).result, one)).result
            span = b.insert(arith.AddiOp(span, b.insert(arith.MuliOp(extent, s)).result)).result
        return ok

    rank = len(sizes)
    row_major = nested(list(reversed(range(rank))))
    if rank < 2:
        return row_major
    return b.insert(arith.OrIOp(row_major, nested(list(range(rank))))).result


def version_on_strides(loop: scf.ForOp, function: func.FuncOp, name: str) -> ParallelForOp:
    """`loop` is proven independent only if its strided array arguments
    have distinct elements (`strided_only`): run it in parallel when their
    sizes and strides show it (`_distinct_elements` of each, checked when
    the loop starts), else the serial loop, a copy without the mark:

        scf.if %distinct { ad.parallel_for @name } else { scf.for ... }"""
    b = Builder(InsertPoint.before(loop))
    checks = [_distinct_elements(b, m) for m in strided_arguments(loop, function)]
    cond = checks[0] if checks else b.insert(arith.ConstantOp.from_int_and_width(1, 1)).result
    for c in checks[1:]:
        cond = b.insert(arith.AndIOp(cond, c)).result
    serial = loop.clone()
    del serial.attributes[PARALLEL_ATTR]
    then_block, else_block = Block(), Block()
    branch = b.insert(scf.IfOp(cond, [r.type for r in loop.results], Region(then_block), Region(else_block)))
    for old, new in zip(loop.results, branch.results):
        old.replace_all_uses_with(new)
    loop.detach()
    then_block.add_op(loop)
    then_block.add_op(scf.YieldOp(*loop.results))
    else_block.add_op(serial)
    else_block.add_op(scf.YieldOp(*serial.results))
    return outline(loop, function, name)


def _decide(function: func.FuncOp, strict: bool,
            source_names: bool = False) -> list[tuple[scf.ForOp, str | None]]:
    """(loop, problem) per outermost marked loop, after carrying
    accumulations into one element as sums (changes `function`).
    `source_names`: problems name values as the Python source does."""
    loops = marked_loops(function)
    if not loops:
        return []
    alias = AliasAnalysis(function, source_names=source_names)
    if not strict and any(alias.iteration_conflict(loop, per_thread=True) is not None for loop in loops):
        # Accumulations into one element (a shared weight's shadow, an
        # adjoint slot) carried as sums instead (transforms/accumulators.py).
        loops = [promote_accumulators(loop, function)
                 if alias.iteration_conflict(loop, per_thread=True) is not None
                 else loop for loop in loops]
        alias = AliasAnalysis(function, source_names=source_names)
    decisions = []
    for loop in loops:
        problem = parallel_problem(loop, alias)
        if problem is not None and not strict and not strided_only(loop, function):
            # (a loop stopped only by its strided arguments' layout is
            # versioned on their strides instead: version_on_strides)
            # accumulations at varying indices (a gather's reverse) into
            # private copies (transforms/privatize.py): the loop over the
            # copies' chunks is independent by construction
            chunked = privatize(loop, function, parallel_problem)
            if chunked is not None:
                decisions.append((chunked, None))
                alias = AliasAnalysis(function, source_names=source_names)
                continue
        decisions.append((loop, problem))
    if strict:
        for loop, problem in decisions:
            if problem is not None and _is_prange(loop):
                raise error_at(loop, f"this prange loop cannot run in parallel: {problem}; "
                                     "use range, or make the iterations independent")
    return decisions


def _is_prange(loop: scf.ForOp) -> bool:
    mark = loop.attributes.get(PARALLEL_ATTR)
    return isinstance(mark, StringAttr) and mark.data == "prange"


def prange_problems(function: func.FuncOp) -> list[tuple[scf.ForOp, str]]:
    """Each prange loop of `function` that could not run in parallel, with
    why (the IR is not changed). A loop stopped only by the layout of this
    call's strided arrays (`strided_only`) is not one: the code is fine, it
    runs serially for them."""
    found = []
    if function.body.blocks:
        loops = [loop for loop in marked_loops(function) if _is_prange(loop)]
        if loops:
            alias = AliasAnalysis(function, source_names=True)  # the user's names: x[i - 1]
            for loop in loops:
                problem = parallel_problem(loop, alias)
                if problem is not None and not strided_only(loop, function):
                    found.append((loop, problem))
    return found


def strided_only(loop: scf.ForOp, function: func.FuncOp) -> bool:
    """Whether `loop` would be proven parallel if its strided array
    arguments had no two indices addressing one element. Their strides are
    not known when compiling: a stride of 0 (np.broadcast_to) or
    overlapping strides make different iterations write one element."""
    return parallel_problem(loop, AliasAnalysis(function, distinct_arguments=True)) is None


STRIDED_ONLY = ("; only because of the layout of the strided arrays it writes (compiled for any "
                "strides, and a stride of 0, as np.broadcast_to makes, would make iterations write one "
                "element): it runs in parallel for contiguous arrays and for strides that are positive "
                "and address distinct elements (checked when the loop starts), serially for others")


def parallel_report(function: func.FuncOp) -> list[tuple[str, str | None]]:
    """(location, why not parallel or None) per marked loop of `function`,
    as `ad-parallelize` will decide (the IR is not changed)."""

    if not marked_loops(function):
        return []
    # Decided as parallelize_function would, on a copy (of the module: the
    # analysis reads the callees' effects).
    module = function.parent_op()
    if isinstance(module, ModuleOp):
        index = list(module.ops).index(function)
        trial = list(module.clone().ops)[index]
    else:
        trial = function.clone()
    return [(op_location(loop) or loop.name,
             problem if problem is None or not strided_only(loop, trial) else problem + STRIDED_ONLY)
            for loop, problem in _decide(trial, strict=False, source_names=True)]


def check_prange_loops(function: func.FuncOp) -> None:
    """Raise the CompileError of the first prange loop of `function` that
    cannot run in parallel (at its line, with the reason)."""
    for loop, problem in prange_problems(function):
        raise error_at(loop, f"this prange loop cannot run in parallel: {problem}; "
                             "use range, or make the iterations independent")


def has_parallel_marks(module: ModuleOp) -> bool:
    return any(PARALLEL_ATTR in op.attributes for op in nested_ops(module) if isinstance(op, scf.ForOp))


def with_parallel_loops(module: ModuleOp, *, copy: bool = True) -> ModuleOp:
    """`module` itself if no loop is marked, else a copy (`copy=False`:
    `module`, in place) whose parallel loops are outlined."""
    if not has_parallel_marks(module):
        return module
    target = module.clone() if copy else module
    for function in [op for op in target.ops if isinstance(op, func.FuncOp) and op.body.blocks]:
        parallelize_function(function)
    return target


def mark_parallel(function: func.FuncOp) -> None:
    """`jit(parallel=True)`: mark every top-level loop of `function` (its
    body's scf.for ops, and those nested only in non-loop ops) "auto"."""
    def visit(block: Block) -> None:
        for op in block.ops:
            if isinstance(op, scf.ForOp):
                op.attributes.setdefault(PARALLEL_ATTR, StringAttr("auto"))
                continue
            if isinstance(op, scf.WhileOp):
                continue
            for region in op.regions:
                for b in region.blocks:
                    visit(b)

    for block in function.body.blocks:
        visit(block)


@dataclass(frozen=True)
class ParallelizePass(ModulePass):
    """`ad-parallelize{strict=false}`: outline the marked loops that may run
    in parallel into `ad.parallel_for`; `strict`: a prange loop that may
    not is an error."""

    name = "ad-parallelize"
    strict: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
            parallelize_function(function, strict=self.strict)


__all__ = ["ParallelizePass", "check_prange_loops", "mark_parallel", "parallel_problem", "parallel_report",
           "parallelize_function", "prange_problems", "with_parallel_loops"]
