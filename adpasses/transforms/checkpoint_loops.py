"""`ad-checkpoint-loops{tape-limit=BYTES}`: automatic checkpointing of time
loops under a memory budget (the two-level, sqrt(steps) scheme).

A step of the reverse pipeline, before `ad-build-gradients`, on the copies
it is differentiating. With `tape-limit` >= 0, each `scf.for` of a copy's
top block (index induction variable) that the cache plan would tape
values in (a trial plan: activity, needs, minimum cut) is split into
segments of k iterations, and each segment becomes a call, marked
`ad.checkpoint`, of a new function running those iterations:

    %segments = ceildiv(N, k) > 1 ? ceildiv(N, k) : 0
    %c = scf.for %s = 0 to %segments iter_args(%c = inits) {
      %lo = lb + s*k*step ; %hi = min(ub, lo + k*step)
      %r = func.call @f_segment_0(%lo, %hi, step, <used values>, %c) {ad.checkpoint}
      scf.yield %r
    }
    scf.for %t = lb + segments*k*step to ub iter_args(%c) { the original body }

(the original loop, after the segments, runs no iteration when there are
several, and all of them when there is one: a loop whose tape fits the
limit is differentiated as without checkpointing)

Checkpointed calls do the rest (rules/checkpoint.py): the forward sweep
runs segments without taping, the plan tapes each segment's carried
scalars and snapshots the arrays the loop overwrites (one state per
segment), and the reverse sweep, segment by segment from the last, restores
the snapshot, reruns the segment taping it (k steps) and reverses it.

k is chosen when the gradient runs, from the state S a snapshot holds
(bytes of the memrefs the loop may write, except those each step writes
before reading; plus 8 per carried value) and T, what one step tapes
(the trial plan's taped values times the trip counts of their loops
inside the step; S where those are not known before the loop): if
N*T <= tape-limit, k = N (one segment: the loop runs as without
checkpointing); else k = ceil(sqrt(N*S/T)), which minimises (N/k)*S + k*T:
for T = S about 2*sqrt(N) states are held (sqrt(N) snapshots, one
segment's tape), and the loop runs forward twice (the recompute factor 2).
"""

from __future__ import annotations

from collections.abc import Sequence

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from adpasses.core.index_arith import saturating_add, saturating_mul, trip_count
from adpasses.core.ir_facts import home_block
from adpasses.core.ir_facts import is_constant
from adpasses.core.types import byte_size, is_float_type, is_int_like, is_memref_type
from adpasses.dialects.ad import CHECKPOINT_ATTR, CHECKPOINT_BUDGET_ATTR, NOALIAS_ATTR
from adpasses.transforms.gradient_marks import GradientRequest, marked_functions

SEGMENT_SUFFIX = "_segment"


def _passable(value: SSAValue) -> bool:
    return is_memref_type(value.type) or is_float_type(value.type) or is_int_like(value.type)


def used_from_outside(loop: scf.ForOp) -> list[SSAValue]:
    """Values defined outside `loop` that ops inside it use, in first use order."""
    inside: set[SSAValue] = set()
    for op in loop.walk():
        if op is not loop:
            inside.update(op.results)
        for region in op.regions:
            for block in region.blocks:
                inside.update(block.args)
    seen: dict[SSAValue, None] = {}
    for op in loop.walk():
        if op is loop:
            continue
        for v in op.operands:
            if v not in inside and not is_constant(v):
                seen.setdefault(v, None)
    return list(seen)


def _constants_used(loop: scf.ForOp, views: Sequence[Operation] = ()) -> list[Operation]:
    ops: dict[Operation, None] = {}
    for op in [*views, *loop.walk()]:
        if op is loop:
            continue  # its bounds and inits become parameters
        for v in op.operands:
            if is_constant(v) and home_block(v) is loop.parent_block():
                ops.setdefault(v.owner, None)  # type: ignore[arg-type]
    return list(ops)


def _views_recomputed_inside(used: list[SSAValue]) -> tuple[list[SSAValue], list[Operation]]:
    """The segment's parameters, and the view ops (of the loop's block) it
    recomputes: a view the loop uses (`h[:]` beside `h`) is made again
    inside the segment from its source and sizes, so the checkpointed call
    takes each array once, and two of its arrays share memory only where
    the program's arrays do (its recomputation copies each separately)."""
    from adpasses.analysis.memref_views import is_view_result

    params: dict[SSAValue, None] = {}
    views: list[Operation] = []

    def take(v: SSAValue) -> None:
        op = v.owner if is_view_result(v) else None
        if op is None or len(op.results) != 1 or op.regions:
            params.setdefault(v, None)
            return
        if op in views:
            return
        for operand in op.operands:
            if not is_constant(operand):
                take(operand)
        views.append(op)  # after the views it reads

    for v in used:
        take(v)
    return list(params), views


def loops_to_checkpoint(function: func.FuncOp,
                        request: GradientRequest) -> list[tuple[scf.ForOp, list[SSAValue]]]:
    """The top-level scf.for loops of the copy that a trial cache plan tapes
    values in (or snapshots memory in), each with the values it would tape."""
    from adpasses.analysis.activity import ActivityAnalysis
    from adpasses.cache.planner import plan_cache
    from adpasses.transforms.build_gradients import collect_memory_needs, collect_needs

    top = function.body.block
    loops = [op for op in top.ops if isinstance(op, scf.ForOp) and isinstance(op.body.block.args[0].type, IndexType)]
    if not loops:
        return []
    activity = ActivityAnalysis(function, list(request.activity), list(request.ret_activity))
    plan = plan_cache(function, collect_needs(function, activity), activity,
                      memory_needs=collect_memory_needs(function, activity))
    taped_in: dict[Operation, list[SSAValue]] = {}
    for v in plan.taped():
        op = home_block(v).parent_op()
        while op is not None and op.parent_block() is not top:
            op = op.parent_op()
        if op is not None:
            taped_in.setdefault(op, []).append(v)
    for need in plan.snapshots():
        op = need.op
        while op.parent_block() is not top:
            op = op.parent_op()  # type: ignore[assignment]
        taped_in.setdefault(op, [])
    return [(loop, taped_in[loop]) for loop in loops
            if loop in taped_in and all(_passable(v) for v in used_from_outside(loop))]


def outline_segment(loop: scf.ForOp, module: ModuleOp, name: str,
                    leading: int = 0) -> tuple[func.FuncOp, list[SSAValue]]:
    """A function running the iterations [lo, hi) of `loop` (same step) from
    the carried values given: (lo, hi, step, used values..., carried...) ->
    carried values; after `leading` index parameters it does not use (the
    revolve segment's snapshot count, which its reverse rule reads)."""
    used, views = _views_recomputed_inside(used_from_outside(loop))
    inits = list(loop.iter_args)
    params = [*([IndexType()] * leading), IndexType(), IndexType(), IndexType(),
              *(v.type for v in used), *(v.type for v in inits)]
    results = [v.type for v in inits]
    body = Block(arg_types=params)
    for a in body.args[:leading]:
        a.name_hint = "snapshots"
    lo, hi, st = body.args[leading], body.args[leading + 1], body.args[leading + 2]
    lo.name_hint, hi.name_hint = "lo", "hi"
    st.name_hint = "step"  # the loop's step (the cache report's counts divide by it)
    first = leading + 3
    mapping: dict[SSAValue, SSAValue] = {}
    for v, a in zip(used, body.args[first : first + len(used)]):
        mapping[v] = a
        a.name_hint = v.name_hint
    carried = list(body.args[first + len(used):])
    for v, a in zip(loop.body.block.args[1:], carried):
        a.name_hint = v.name_hint
    for constant in _constants_used(loop, views):
        copy = constant.clone()
        body.add_op(copy)
        mapping.update(zip(constant.results, copy.results))
    for view in views:
        copy = view.clone(value_mapper=mapping)
        body.add_op(copy)
        mapping.update(zip(view.results, copy.results))
    new_loop = loop.clone(value_mapper=mapping)
    # The clone keeps the original's bounds and inits: point them at the parameters.
    new_loop.operands = [lo, hi, st, *carried]  # type: ignore[assignment]
    body.add_op(new_loop)
    ret = func.ReturnOp(*new_loop.results)
    ret.location = loop.location
    body.add_op(ret)
    function = func.FuncOp(name, (params, results), Region(body), visibility="private",
                           arg_attrs=_separate_arrays(loop, [*([None] * (leading + 3)), *used, *inits]))
    function.location = loop.location
    return function, used


def _separate_arrays(loop: scf.ForOp, operands: Sequence[SSAValue | None]) -> ArrayAttr:
    """The outlined function's argument attributes: `ad.noalias` on each
    array that, in the function the loop comes from, overlaps none of the
    other arrays it passes (distinct allocations, an allocation and an
    argument, views of those: the caller's alias analysis proves it), so
    the outlined body knows what its caller knew (a checkpointed call in
    the loop is given two fresh local arrays: they are not `may share
    memory`)."""
    from adpasses.analysis.alias import AliasAnalysis

    caller = loop.parent_op()
    while not isinstance(caller, func.FuncOp):
        assert caller is not None
        caller = caller.parent_op()
    values = [v for v in operands if v is not None]
    separate = dict(zip(values, AliasAnalysis(caller).separate(values)))
    return ArrayAttr([DictionaryAttr({NOALIAS_ATTR: UnitAttr()} if v is not None and separate[v] else {})
                      for v in operands])


def _segment_length(b: Builder, n: SSAValue, state_bytes: SSAValue, step_bytes: SSAValue,
                    limit: int) -> SSAValue:
    """k = n if n*T <= limit (T: one step's tape), else ceil(sqrt(n*S/T))
    (S: the state a snapshot holds), which minimises (n/k)*S + k*T, the
    snapshots plus one segment's tape; at least 1, at most n."""
    def emit(op: Operation) -> SSAValue:
        return b.insert(op).results[0]

    one = emit(arith.ConstantOp(IntegerAttr(1, IndexType())))
    i64, f64 = IntegerType(64), Float64Type()

    def to_float(v: SSAValue) -> SSAValue:
        return emit(arith.SIToFPOp(emit(arith.IndexCastOp(v, i64)), f64))

    ratio = emit(arith.DivfOp(emit(arith.MulfOp(to_float(n), to_float(state_bytes))),
                              to_float(emit(arith.MaxSIOp(step_bytes, one)))))
    root = emit(math.CeilOp(emit(math.SqrtOp(ratio))))
    sqrt_k = emit(arith.MinSIOp(emit(arith.IndexCastOp(emit(arith.FPToSIOp(root, i64)), IndexType())), n))
    total = saturating_mul(b, n, step_bytes)
    fits = emit(arith.CmpiOp(total, emit(arith.ConstantOp(IntegerAttr(limit, IndexType()))), "ule"))
    k = emit(arith.SelectOp(fits, n, sqrt_k))
    return emit(arith.MaxSIOp(k, one))


def _state_bytes(b: Builder, loop: scf.ForOp, used: list[SSAValue], module: ModuleOp,
                 segment: func.FuncOp, first: int = 3) -> SSAValue:
    """Bytes of what the loop carries and the memory it may write."""
    from adpasses.analysis.memory_writes import WriteEffects, written_arguments, written_before_read

    def emit(op: Operation) -> SSAValue:
        return b.insert(op).results[0]

    written = written_arguments(WriteEffects(module), segment)
    total = emit(arith.ConstantOp(IntegerAttr(8 * len(loop.iter_args), IndexType())))
    for k, v in enumerate(used):
        if not is_memref_type(v.type) or (written is not None and first + k not in written):
            continue
        if written_before_read(segment, first + k):
            continue  # scratch of each step: nothing to snapshot
        mtype = v.type
        assert isinstance(mtype, MemRefType)
        size = emit(arith.ConstantOp(IntegerAttr(byte_size(mtype.element_type), IndexType())))
        for d, extent in enumerate(mtype.get_shape()):
            dim = (emit(arith.ConstantOp(IntegerAttr(extent, IndexType()))) if extent >= 0 else
                   emit(memref.DimOp(v, emit(arith.ConstantOp(IntegerAttr(d, IndexType()))))))
            size = saturating_mul(b, size, dim)
        total = emit(arith.AddiOp(total, size))
    return total


def _step_tape_bytes(b: Builder, loop: scf.ForOp, taped: list[SSAValue]) -> SSAValue | None:
    """The bytes one iteration of `loop` tapes (the trial plan's values, each
    times the trip counts of the loops between it and `loop`), computed
    before `loop`; None where a trip count is not known there (bounds
    computed inside the loop, a while loop)."""
    from adpasses.core.region_flow import runs_at_most_once, trip_bounds

    def hoist(v: SSAValue) -> SSAValue | None:
        if home_block(v) is not loop.parent_block() or v.owner is loop:
            return None
        return v  # defined before the loop, in the function's top block

    total = b.insert(arith.ConstantOp(IntegerAttr(0, IndexType()))).results[0]
    for v in taped:
        count = b.insert(arith.ConstantOp(IntegerAttr(byte_size(v.type), IndexType()))).results[0]
        op = home_block(v).parent_op()
        while op is not None and op is not loop:
            bounds = trip_bounds(op)
            if bounds is not None:
                hoisted = [hoist(x) if not is_constant(x) else
                           b.insert(x.owner.clone()).results[0] for x in bounds]  # type: ignore[union-attr]
                if any(h is None for h in hoisted):
                    return None
                trips = trip_count(b, *hoisted)  # type: ignore[arg-type]
                if not isinstance(trips.type, IndexType):
                    return None
                count = saturating_mul(b, count, trips)
            elif not runs_at_most_once(op):
                return None
            op = op.parent_op()
        total = b.insert(arith.AddiOp(total, count)).results[0]
    return total


def _fresh_segment_name(module: ModuleOp, function: func.FuncOp) -> str:
    request = GradientRequest.of_function(function)
    base = f"{request.primal if request else function.sym_name.data}{SEGMENT_SUFFIX}"
    name, k = f"{base}_0", 0
    while SymbolTable.lookup_symbol(module, name) is not None:
        k += 1
        name = f"{base}_{k}"
    return name


def _segment_loop(loop: scf.ForOp, name: str, leading: list[SSAValue], used: list[SSAValue],
                  stride: SSAValue, segments: SSAValue, zero: SSAValue, one: SSAValue) -> scf.ForOp:
    """`scf.for %segment = 0 to segments` of checkpointed calls of `name`
    on the iterations [lb + segment*stride, min(ub, that + stride)) of
    `loop` (stride: k iterations' worth of its step), carrying the loop's
    values; not inserted."""
    body = Block(arg_types=[IndexType(), *(v.type for v in loop.iter_args)])
    ob = Builder(InsertPoint.at_end(body))

    def inner(op: Operation) -> SSAValue:
        op.location = loop.location
        return ob.insert(op).results[0]

    s = body.args[0]
    s.name_hint = "segment"
    # The carried values keep the loop's names (the cache report shows them).
    for v, a in zip(loop.body.block.args[1:], body.args[1:]):
        a.name_hint = v.name_hint
    offset = inner(arith.MuliOp(s, stride))
    lo = inner(arith.AddiOp(loop.lb, offset))
    end = inner(arith.AddiOp(lo, stride))
    hi = inner(arith.MinSIOp(loop.ub, end))
    # Named for the cache report (what the reverse sweep recomputes).
    offset.name_hint, lo.name_hint, end.name_hint, hi.name_hint = (
        "segment_offset", "segment_lo", "segment_end", "segment_hi")
    call = func.CallOp(name, [*leading, lo, hi, loop.step, *used, *body.args[1:]],
                       [v.type for v in loop.iter_args])
    call.attributes[CHECKPOINT_ATTR] = UnitAttr()
    call.location = loop.location
    ob.insert(call)
    ob.insert(scf.YieldOp(*call.results))
    new = scf.ForOp(zero, segments, one, list(loop.iter_args), Region(body))
    new.location = loop.location
    for v, r in zip(loop.body.block.args[1:], new.results):
        r.name_hint = v.name_hint
    return new


def checkpoint_loop(loop: scf.ForOp, module: ModuleOp, function: func.FuncOp, limit: int,
                    taped: list[SSAValue] = ()) -> func.FuncOp:  # type: ignore[assignment]
    """Replace `loop` by segments, each a checkpointed call of a new function."""
    name = _fresh_segment_name(module, function)
    segment, used = outline_segment(loop, module, name)
    Rewriter.insert_op(segment, InsertPoint.before(function))
    b = Builder(InsertPoint.before(loop))

    def emit(op: Operation) -> SSAValue:
        op.location = loop.location
        return b.insert(op).results[0]

    n = trip_count(b, loop.lb, loop.ub, loop.step)
    n.name_hint = n.name_hint or "trips"
    state = _state_bytes(b, loop, used, module, segment)
    step_bytes = _step_tape_bytes(b, loop, taped) if taped else None
    seg_len = _segment_length(b, n, state, step_bytes or state, limit)
    seg_len.name_hint = "segment_length"  # named in the cache report's counts
    one = emit(arith.ConstantOp(IntegerAttr(1, IndexType())))
    zero = emit(arith.ConstantOp(IntegerAttr(0, IndexType())))
    count = emit(arith.DivUIOp(emit(arith.SubiOp(emit(arith.AddiOp(n, seg_len)), one)), seg_len))
    # One segment (the tape fits the limit): no checkpointed call at all;
    # the original loop, kept after the segments, runs every iteration and
    # is taped as usual. Several: it runs none.
    several = emit(arith.CmpiOp(count, one, "ugt"))
    segments = emit(arith.SelectOp(several, count, zero))
    segments.name_hint = "segments"
    stride = emit(arith.MuliOp(seg_len, loop.step))
    stride.name_hint = "segment_stride"
    new = _segment_loop(loop, name, [], used, stride, segments, zero, one)
    Rewriter.insert_op(new, InsertPoint.before(loop))
    b = Builder(InsertPoint.before(loop))
    rest = emit(arith.AddiOp(loop.lb, emit(arith.MuliOp(segments, stride))))
    rest.name_hint = "after_segments"
    loop.operands = [rest, loop.ub, loop.step, *new.results]  # type: ignore[assignment]
    return segment


def _revolve_attribute(module: ModuleOp, segment: func.FuncOp, used: list[SSAValue], carried: int,
                       limit: int | None = None) -> DictionaryAttr:
    """`ad.revolve` of a call of `segment`: the used arrays its steps
    overwrite (`state`, snapshotted), those each step writes before reading
    (`scratch`), the number of carried values, and the byte budget the
    snapshot count comes from (`limit`, when it does)."""
    from adpasses.analysis.memory_writes import WriteEffects, written_arguments, written_before_read
    from xdsl.dialects.builtin import DenseArrayBase, i64

    written = written_arguments(WriteEffects(module), segment)
    state_args: list[int] = []
    scratch_args: list[int] = []
    for k, v in enumerate(used):
        if is_memref_type(v.type) and (written is None or REVOLVE_FIRST_USED + k in written):
            (scratch_args if written_before_read(segment, REVOLVE_FIRST_USED + k) else state_args).append(
                REVOLVE_FIRST_USED + k)
    entries: dict[str, Attribute] = {
        "state": DenseArrayBase.from_list(i64, state_args),
        "scratch": DenseArrayBase.from_list(i64, scratch_args),
        "carried": IntegerAttr(carried, i64),
    }
    if limit is not None:
        entries["limit"] = IntegerAttr(limit, i64)
    return DictionaryAttr(entries)


REVOLVE_FIRST_USED = 4  # a revolve call's operands: snapshots, lo, hi, step, used..., carried...

def _revolve_budget(b: Builder, emit, index, limit: int, state: SSAValue,  # type: ignore[no-untyped-def]
                    step_bytes: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(snapshots, least): as many snapshots of S bytes as fit in the
    limit beside two steps' tapes (the last step's, taped by the forward
    sweep, and the one a step's gradient holds): (limit - 2T) / S, 0 when
    none fits; and the least budget revolve needs, S + 2T."""
    two_steps = saturating_add(b, step_bytes, step_bytes)
    least = saturating_add(b, state, two_steps)
    least.name_hint = "least_budget"
    spare = emit(arith.SubiOp(index(limit), emit(arith.MinUIOp(two_steps, index(limit)))))
    count = emit(arith.DivUIOp(spare, emit(arith.MaxUIOp(state, index(1)))))
    count.name_hint = "snapshots"
    return count, least


def _raise_if_over_budget(b: Builder, loop: scf.ForOp, cond: SSAValue, limit: int,
                          values: Sequence[SSAValue], sqrt: bool) -> None:
    """Stop the gradient with a MemoryError when `cond`: the budget is
    below the least revolve needs (value 0)."""
    from adpasses.dialects.ad import RaiseIfOp

    message = (f"a memory limit (memory_limit, tape_limit, --tape-limit) of {limit} bytes is too small "
               "for this time loop: checkpointing it needs at least {0} bytes (one snapshot of the "
               "loop's state and two steps' tapes, by the binomial schedule"
               + ("; sqrt segments would hold {1} bytes" if sqrt else "")
               + "); give a limit of at least {0} bytes")
    check = RaiseIfOp(cond, "MemoryError", message, list(values))
    check.attributes[CHECKPOINT_BUDGET_ATTR] = IntegerAttr(limit, IntegerType(64))
    check.location = loop.location
    b.insert(check)


def _outline_for_revolve(loop: scf.ForOp, module: ModuleOp, function: func.FuncOp):  # type: ignore[no-untyped-def]
    """What revolve_loop and auto_loop start from: the loop body outlined
    in revolve's layout (a leading snapshot count) before `function`, a
    builder before the loop with `emit` (an op at the loop's location, its
    result) and `index` (an index constant), and the loop's trip count."""
    name = _fresh_segment_name(module, function)
    segment, used = outline_segment(loop, module, name, leading=1)
    Rewriter.insert_op(segment, InsertPoint.before(function))
    b = Builder(InsertPoint.before(loop))

    def emit(op: Operation) -> SSAValue:
        op.location = loop.location
        return b.insert(op).results[0]

    def index(k: int) -> SSAValue:
        return emit(arith.ConstantOp(IntegerAttr(k, IndexType())))

    n = trip_count(b, loop.lb, loop.ub, loop.step)
    n.name_hint = n.name_hint or "trips"
    return name, segment, used, b, emit, index, n


def revolve_loop(loop: scf.ForOp, module: ModuleOp, function: func.FuncOp, limit: int, snapshots: int,
                 taped: list[SSAValue] = ()) -> func.FuncOp:  # type: ignore[assignment]
    """Replace `loop` by a revolve call over its first N - 1 iterations
    (`ad.checkpoint` + `ad.revolve`) and the loop over the last one:

        %c = snapshots (or (limit - 2T) / S from the limit; a MemoryError
             when that is 0 and the whole tape does not fit)
        %mid = lb + (fits ? 0 : max(N - 1, 0)) * step
        %r = func.call @f_segment_0(%c, lb, %mid, step, <used>, inits) {ad.checkpoint, ad.revolve = ...}
        scf.for %t = %mid to ub iter_args(%r) { the original body }

    The last iteration stays a plain, taped loop iteration: revolve's
    first reversed step, whose state the forward sweep has in hand. Where
    the whole loop's tape fits the limit (N*T <= limit; never with an
    explicit snapshot count), the call runs no step."""
    from adpasses.dialects.ad import REVOLVE_ATTR

    name, segment, used, b, emit, index, n = _outline_for_revolve(loop, module, function)
    zero, one = index(0), index(1)
    if snapshots > 0:
        count = index(snapshots)
        count.name_hint = "snapshots"
    else:
        state = _state_bytes(b, loop, used, module, segment, REVOLVE_FIRST_USED)
        step_bytes = (_step_tape_bytes(b, loop, taped) if taped else None) or state
        count, least = _revolve_budget(b, emit, index, limit, state, step_bytes)
    before_last = emit(arith.SelectOp(emit(arith.CmpiOp(n, zero, "ugt")), emit(arith.SubiOp(n, one)), zero))
    if snapshots <= 0:
        fits = emit(arith.CmpiOp(saturating_mul(b, n, step_bytes), index(limit), "ule"))
        before_last = emit(arith.SelectOp(fits, zero, before_last))
        too_small = emit(arith.AndIOp(emit(arith.CmpiOp(before_last, zero, "ugt")),
                                      emit(arith.CmpiOp(least, index(limit), "ugt"))))
        _raise_if_over_budget(b, loop, too_small, limit, [least], sqrt=False)
    before_last.name_hint = "revolve_steps"  # named in the cache report's counts
    mid = emit(arith.AddiOp(loop.lb, emit(arith.MuliOp(before_last, loop.step))))
    mid.name_hint = "revolve_end"
    inits = list(loop.iter_args)
    call = func.CallOp(name, [count, loop.lb, mid, loop.step, *used, *inits], [v.type for v in inits])
    call.attributes[CHECKPOINT_ATTR] = UnitAttr()
    call.attributes[REVOLVE_ATTR] = _revolve_attribute(module, segment, used, len(inits),
                                                       None if snapshots > 0 else limit)
    call.location = loop.location
    Rewriter.insert_op(call, InsertPoint.before(loop))
    loop.operands = [mid, loop.ub, loop.step, *call.results]  # type: ignore[assignment]
    return segment


def auto_loop(loop: scf.ForOp, module: ModuleOp, function: func.FuncOp, limit: int,
              taped: list[SSAValue] = ()) -> func.FuncOp:  # type: ignore[assignment]
    """The schedule that fits the limit, chosen when the gradient runs:
    no checkpointing when the whole tape fits (N*T <= limit); else sqrt
    segments when they fit (ceildiv(N, k)*S + k*T <= limit, k the segment
    length); else the binomial schedule with (limit - 2T) / S snapshots;
    else (limit < S + 2T) a MemoryError naming the least. Both schedules
    call one outlined function (revolve's layout: a leading snapshot count,
    which the segments pass and the body ignores), and at most one of them
    runs any step:

        %k = segment length; %count = ceildiv(N, k)
        %sqrt_peak = count*S + k*T
        %use_revolve = N*T > limit and sqrt_peak > limit
        ad.raise_if (use_revolve and S + 2T > limit) {ad.checkpoint_budget}
        %segments = use_revolve or count <= 1 ? 0 : count
        %c = scf.for %segment = 0 to %segments (checkpointed calls of k steps)
        %mid = lb + (use_revolve ? N - 1 : segments*k)*step
        %r = func.call @f_segment_0(%snapshots, lb + segments*k*step, %mid, ...) {ad.checkpoint, ad.revolve}
        scf.for %t = %mid to ub iter_args(%r) { the original body }"""
    from adpasses.dialects.ad import REVOLVE_ATTR

    name, segment, used, b, emit, index, n = _outline_for_revolve(loop, module, function)
    zero, one = index(0), index(1)
    state = _state_bytes(b, loop, used, module, segment, REVOLVE_FIRST_USED)
    step_bytes = (_step_tape_bytes(b, loop, taped) if taped else None) or state
    seg_len = _segment_length(b, n, state, step_bytes, limit)
    seg_len.name_hint = "segment_length"
    count = emit(arith.DivUIOp(emit(arith.SubiOp(emit(arith.AddiOp(n, seg_len)), one)), seg_len))
    sqrt_peak = saturating_add(b, saturating_mul(b, count, state), saturating_mul(b, seg_len, step_bytes))
    sqrt_peak.name_hint = "sqrt_peak"
    limit_v = index(limit)
    whole_over = emit(arith.CmpiOp(saturating_mul(b, n, step_bytes), limit_v, "ugt"))
    sqrt_over = emit(arith.CmpiOp(sqrt_peak, limit_v, "ugt"))
    use_revolve = emit(arith.AndIOp(whole_over, sqrt_over))
    use_revolve.name_hint = "use_revolve"
    snaps, least = _revolve_budget(b, emit, index, limit, state, step_bytes)
    too_small = emit(arith.AndIOp(use_revolve, emit(arith.CmpiOp(least, limit_v, "ugt"))))
    _raise_if_over_budget(b, loop, too_small, limit, [least, sqrt_peak], sqrt=True)
    several = emit(arith.CmpiOp(count, one, "ugt"))
    segments = emit(arith.SelectOp(use_revolve, zero, emit(arith.SelectOp(several, count, zero))))
    segments.name_hint = "segments"
    stride = emit(arith.MuliOp(seg_len, loop.step))
    stride.name_hint = "segment_stride"
    asked = emit(arith.MaxUIOp(snaps, one))
    asked.name_hint = "snapshots"
    seg_loop = _segment_loop(loop, name, [asked], used, stride, segments, zero, one)
    Rewriter.insert_op(seg_loop, InsertPoint.before(loop))
    b = Builder(InsertPoint.before(loop))
    rest = emit(arith.AddiOp(loop.lb, emit(arith.MuliOp(segments, stride))))
    rest.name_hint = "after_segments"
    before_last = emit(arith.SelectOp(emit(arith.CmpiOp(n, zero, "ugt")), emit(arith.SubiOp(n, one)), zero))
    before_last = emit(arith.SelectOp(use_revolve, before_last, zero))
    before_last.name_hint = "revolve_steps"  # named in the cache report's counts
    mid = emit(arith.AddiOp(rest, emit(arith.MuliOp(before_last, loop.step))))
    mid.name_hint = "revolve_end"
    inits = list(seg_loop.results)
    call = func.CallOp(name, [asked, rest, mid, loop.step, *used, *inits], [v.type for v in inits])
    call.attributes[CHECKPOINT_ATTR] = UnitAttr()
    call.attributes[REVOLVE_ATTR] = _revolve_attribute(module, segment, used, len(inits), limit)
    call.location = loop.location
    Rewriter.insert_op(call, InsertPoint.before(loop))
    loop.operands = [mid, loop.ub, loop.step, *call.results]  # type: ignore[assignment]
    return segment


SCHEDULES = ("auto", "sqrt", "revolve")


@dataclass(frozen=True)
class CheckpointLoopsPass(ModulePass):
    """Checkpoint the time loops of the copies being differentiated when
    `tape-limit` >= 0 (bytes; -1: off) or `snapshots` > 0. `schedule`:
    `auto` (default: no checkpointing when the tape fits, else sqrt
    segments when they fit the limit, else the binomial schedule with as
    many snapshots as fit, else a MemoryError naming the least limit),
    `sqrt` (segments of about sqrt(steps) iterations, each a checkpointed
    call, whatever they hold) or `revolve` (the binomial schedule with
    `snapshots` states, or as many as fit in `tape-limit` when `snapshots`
    is 0)."""

    name = "ad-checkpoint-loops"

    tape_limit: int = -1
    schedule: str = "auto"
    snapshots: int = 0

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"ad-checkpoint-loops: schedule must be one of {', '.join(SCHEDULES)}, "
                             f"got {self.schedule!r}")
        if self.snapshots < 0:
            raise ValueError(f"ad-checkpoint-loops: snapshots must be >= 1 (the loop's initial state "
                             f"is one), or 0 to fit them in tape-limit; got {self.snapshots}")
        if self.schedule == "revolve" and self.snapshots == 0 and self.tape_limit < 0:
            raise ValueError("ad-checkpoint-loops: schedule=revolve needs a budget: snapshots=S (states "
                             "held, S >= 1) or tape-limit=BYTES")
        if self.snapshots and self.schedule != "revolve":
            raise ValueError("ad-checkpoint-loops: snapshots needs schedule=revolve (the sqrt and auto "
                             "schedules choose from tape-limit)")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.tape_limit < 0 and self.snapshots == 0:
            return
        for function in marked_functions(op):
            request = GradientRequest.of_function(function)
            assert request is not None
            for loop, taped in loops_to_checkpoint(function, request):
                if self.schedule == "revolve":
                    revolve_loop(loop, op, function, self.tape_limit, self.snapshots, taped)
                elif self.schedule == "sqrt":
                    checkpoint_loop(loop, op, function, self.tape_limit, taped)
                else:
                    auto_loop(loop, op, function, self.tape_limit, taped)
