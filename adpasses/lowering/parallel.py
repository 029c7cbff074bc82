"""ad.parallel_for -> LLVM: a loop's chunks on the runtime's worker pool.

`ad-parallelize` (adpasses/transforms/parallelize.py) outlined the loop
into a function `callee(lo, hi, step, captured..., accumulators...)`. Here:

- the chunk count T: the thread count (adpasses_num_threads), but no more
  chunks than the trip count n allows with at least
  `adpasses_parallel_min_work` estimated operations each (`body_work`, the
  outlined body's cost, fixed when compiling): a loop too small to repay
  waking a thread is one chunk, run on the calling thread with no
  synchronisation. T depends on n, the thread count and the setting only;
- one record per chunk {lo, hi, step, stopped, stop[4], captured parts...,
  accumulators...} on the caller's stack; chunk t of T runs the
  iterations `t*n/T .. (t+1)*n/T`: fixed chunks, so sums are the same on
  every run with T chunks, whichever thread runs a chunk;
- a worker function per op (`(record, pooled) -> callee(...)`) that stores
  the accumulators back and takes a stop of its thread into its record
  (adpasses.lowering.thread_state: each thread has its own error slot);
- `adpasses_parallel_run` (the thread-state runtime) runs the records on
  the pool's threads and the calling thread, and returns when all are done;
- then the first chunk that stopped (the lowest iterations: the stop a
  serial loop would have reported) is recorded in the caller's slot and
  the call stops; else each sum is init + the chunks' sums, in chunk
  order (a kept value: its init).
"""

from __future__ import annotations

from llvmlite import ir

from xdsl.dialects import func, math, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation

from adpasses.core.llvm_loops import counted_loop
from adpasses.dialects.ad import ParallelForOp
from adpasses.lowering.core import I32, I64, PTR, FunctionTranslator, ModuleTranslator, const_i64, opaque, scalar_type
from adpasses.lowering.thread_state import ERROR_SLOT, MIN_WORK, NUM_THREADS, SLOT_TYPE, entry_slot, own_slot, \
    runtime_function, take_stop

_LO, _HI, _STEP, _STOPPED, _STOP, _FIRST_VALUE = range(6)
_STOP_TYPE = ir.ArrayType(I64, 4)


def _record_type(captured: list[ir.Type], accumulators: list[ir.Type]) -> ir.LiteralStructType:
    return ir.LiteralStructType([I64, I64, I64, I64, _STOP_TYPE, *captured, *accumulators])


# -- how much work an iteration is --------------------------------------------------

_CALL_WORK = 32  # a call (its body unknown here)
_MATH_WORK = 16  # sin, exp, pow, ...: tens of cycles
_UNKNOWN_TRIPS = 16  # an inner loop whose trip count is not a constant
MAX_WORK = 1 << 40


def _constant(value) -> int | None:  # type: ignore[no-untyped-def]
    from xdsl.dialects import arith

    owner = getattr(value, "owner", None)
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def block_work(ops, calling: tuple[str, ...] = ()) -> int:  # type: ignore[no-untyped-def]
    """Estimated operations of running `ops` once: one per op, a math
    function more, an inner loop its body times its trip count (a
    constant, else `_UNKNOWN_TRIPS`), a call of a function of the module
    its body's work plus `_CALL_WORK` (a vmap's loop over the batch calls
    the per-element function), of any other function `_CALL_WORK`.
    `calling`: the functions being estimated (a recursive call counts
    `_CALL_WORK`)."""
    work = 0
    for op in ops:
        work += _op_work(op, calling)
    return min(work, MAX_WORK)


def _op_work(op: Operation, calling: tuple[str, ...]) -> int:
    if isinstance(op, scf.ForOp):
        lb, ub, step = (_constant(v) for v in (op.lb, op.ub, op.step))
        trips = (max(0, -(-(ub - lb) // step)) if None not in (lb, ub, step) and step > 0  # type: ignore[operator]
                 else _UNKNOWN_TRIPS)
        return min(1 + trips * block_work(op.body.block.ops, calling), MAX_WORK)
    if isinstance(op, func.CallOp):
        name = op.callee.root_reference.data
        callee = _function(op, name) if name not in calling else None
        if callee is None or not callee.body.blocks:
            return _CALL_WORK
        return _CALL_WORK + sum(block_work(block.ops, (*calling, name)) for block in callee.body.blocks)
    if op.dialect_name() == math.Math.name:
        return _MATH_WORK
    nested = sum(block_work(block.ops, calling) for region in op.regions for block in region.blocks)
    return 1 + nested


def _function(op: Operation, name: str) -> func.FuncOp | None:
    """The function `name` of the module around `op`, if any."""
    module = op.parent_op()
    while module is not None and not isinstance(module, ModuleOp):
        module = module.parent_op()
    if module is None:
        return None
    return next((f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name), None)


def body_work(op: ParallelForOp) -> int:
    """Estimated operations of one iteration of the loop `op` runs (its
    outlined function's loop body); at least 1."""
    callee = _function(op, op.callee.root_reference.data)
    if callee is None or not callee.body.blocks:
        return 1
    loop = next((o for o in callee.body.block.ops if isinstance(o, scf.ForOp)), None)
    return max(1, block_work(loop.body.block.ops) if loop is not None else 1)


def _field(b: ir.IRBuilder, record_type: ir.Type, record: ir.Value, k: int) -> ir.Value:
    return b.gep(record, [const_i64(0), ir.Constant(I32, k)], inbounds=True, source_etype=record_type)


def _worker(mt: ModuleTranslator, callee: ir.Function, record_type: ir.LiteralStructType,
            n_captured: int, accumulators: list[ir.Type]) -> ir.Function:
    """`ptr worker(ptr record, i64 pooled)`: run the record's chunk; keep
    its sums and its stop in the record. `pooled`: on a pool thread (else
    on the thread that runs the loop)."""
    fn = ir.Function(mt.llvm, ir.FunctionType(PTR, [PTR, I64]), f"{callee.name}.worker")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    record, pooled = fn.args

    def load(k: int) -> ir.Value:
        return b.load(_field(b, record_type, record, k), typ=record_type.elements[k])

    args = [load(k) for k in (_LO, _HI, _STEP)]
    args += [load(_FIRST_VALUE + j) for j in range(n_captured + len(accumulators))]
    # A pool thread has its error slot (made on its first chunk); the
    # calling thread keeps the slot it has (or the process-wide one).
    is_worker = b.icmp_unsigned("!=", pooled, const_i64(0))
    with b.if_else(is_worker) as (then, otherwise):
        with then:
            made = b.call(entry_slot(mt), [])
            from_worker = b.block
        with otherwise:
            mine = own_slot(mt, b)
            from_caller = b.block
    slot = b.phi(PTR)
    slot.add_incoming(made, from_worker)
    slot.add_incoming(mine, from_caller)
    shared = mt.global_ref(ERROR_SLOT, SLOT_TYPE)
    slot = b.select(b.icmp_unsigned("!=", slot, ir.Constant(PTR, None)), slot, shared)
    result = b.call(callee, args)
    first_acc = _FIRST_VALUE + n_captured
    if len(accumulators) == 1:
        b.store(result, _field(b, record_type, record, first_acc))
    for j in range(len(accumulators) if len(accumulators) > 1 else 0):
        b.store(b.extract_value(result, j), _field(b, record_type, record, first_acc + j))
    stopped = take_stop(mt, b, slot, _field(b, record_type, record, _STOP))
    b.store(b.zext(stopped, I64), _field(b, record_type, record, _STOPPED))
    b.ret(ir.Constant(PTR, None))
    return fn


def _parallel_for(ft: FunctionTranslator, op: ParallelForOp) -> None:
    mt, b = ft.mt, ft.b
    name = op.callee.root_reference.data
    callee = mt.functions[name]
    captured = [part for v in op.captured for part in ft.flatten(v)]
    accumulators = [scalar_type(v.type) for v in op.inits]
    record_type = _record_type([p.type for p in captured], accumulators)
    worker = _worker(mt, callee, record_type, len(captured), accumulators)
    kinds = op.kinds.data

    lb, ub, step = ft.get(op.lb), ft.get(op.ub), ft.get(op.step)
    zero, one = const_i64(0), const_i64(1)
    positive = b.icmp_signed(">", step, zero)
    divisor = b.select(positive, step, one)
    n = b.select(b.icmp_signed(">", ub, lb), b.add(b.udiv(b.sub(b.sub(ub, lb), one), divisor), one), zero)
    wanted = b.load(mt.global_ref(NUM_THREADS, I64), typ=I64)
    wanted = b.select(b.icmp_signed("<", wanted, one), one, wanted)
    # At least min_work estimated operations per chunk: ceil(min_work / work)
    # iterations (work: one iteration's, fixed at compile time).
    work = const_i64(body_work(op))
    min_work = b.load(mt.global_ref(MIN_WORK, I64), typ=I64)
    min_work = b.select(b.icmp_signed("<", min_work, one), one, min_work)
    least = b.udiv(b.add(min_work, b.sub(work, one)), work)
    chunks = b.udiv(n, least)
    threads = b.select(b.icmp_unsigned("<", chunks, wanted), chunks, wanted)
    # One chunk when the step is not positive (the outlined loop stops on it).
    threads = b.select(b.and_(positive, b.icmp_unsigned(">", threads, zero)), threads, one)
    saved = b.call(mt.declare("llvm.stacksave.p0", PTR, []), [])
    records = opaque(b.alloca(record_type, size=threads))
    per_chunk, extra = b.udiv(n, threads), b.urem(n, threads)
    last = b.sub(threads, one)

    with counted_loop(b, threads, "par.fill") as loop:
        t = loop.index
        record = b.gep(records, [t], inbounds=True, source_etype=record_type)
        k0 = b.add(b.mul(t, per_chunk), b.select(b.icmp_unsigned("<", t, extra), t, extra))
        k1 = b.add(b.add(k0, per_chunk), b.zext(b.icmp_unsigned("<", t, extra), I64))
        lo = b.add(lb, b.mul(k0, step))
        hi = b.select(b.icmp_unsigned("==", t, last), ub, b.add(lb, b.mul(k1, step)))
        first = b.icmp_unsigned("==", t, zero)
        for k, v in ((_LO, lo), (_HI, hi), (_STEP, step), (_STOPPED, zero)):
            b.store(v, _field(b, record_type, record, k))
        for j, part in enumerate(captured):
            b.store(part, _field(b, record_type, record, _FIRST_VALUE + j))
        for j, (init, ty, kind) in enumerate(zip(op.inits, accumulators, kinds)):
            start = ft.get(init) if kind == "k" else b.select(first, ft.get(init), ir.Constant(ty, 0))
            b.store(start, _field(b, record_type, record, _FIRST_VALUE + len(captured) + j))
    size = b.ptrtoint(b.gep(ir.Constant(PTR, None), [one], source_etype=record_type), I64)
    b.call(runtime_function(mt, "adpasses_parallel_run"), [worker, records, size, threads])

    with counted_loop(b, threads, "par.stops", carried=[const_i64(-1)]) as loop:
        record = b.gep(records, [loop.index], inbounds=True, source_etype=record_type)
        stopped = b.icmp_unsigned("!=", b.load(_field(b, record_type, record, _STOPPED), typ=I64), zero)
        none_yet = b.icmp_signed("<", loop.carried[0], zero)
        loop.next([b.select(b.and_(stopped, none_yet), loop.index, loop.carried[0])])
    [first] = loop.carried
    with b.if_then(b.icmp_signed(">=", first, zero), likely=False):
        record = b.gep(records, [first], inbounds=True, source_etype=record_type)
        stop = _field(b, record_type, record, _STOP)
        fields = [b.load(b.gep(stop, [zero, const_i64(k)], inbounds=True, source_etype=_STOP_TYPE), typ=I64)
                  for k in range(4)]
        b.call(mt.declare("llvm.stackrestore.p0", ir.VoidType(), [PTR]), [saved])
        ft.fail(*fields)  # the one stop of generated code, with the worker's values

    starts = [b.load(_field(b, record_type, records, _FIRST_VALUE + len(captured) + j), typ=ty)
              for j, ty in enumerate(accumulators)]
    with counted_loop(b, threads, "par.sum", start=one, carried=starts) as loop:
        record = b.gep(records, [loop.index], inbounds=True, source_etype=record_type)
        out = []
        for j, (s, ty) in enumerate(zip(loop.carried, accumulators)):
            part = b.load(_field(b, record_type, record, _FIRST_VALUE + len(captured) + j), typ=ty)
            out.append(b.fadd(s, part, flags=mt.fastmath) if isinstance(ty, (ir.DoubleType, ir.FloatType,
                                                                               ir.HalfType)) else b.add(s, part))
        loop.next(out)
    sums = loop.carried
    b.call(mt.declare("llvm.stackrestore.p0", ir.VoidType(), [PTR]), [saved])
    for r, s, init, kind in zip(op.res, sums, op.inits, kinds):
        ft.set(r, ft.get(init) if kind == "k" else s)


LOWERINGS = {ParallelForOp: _parallel_for}
