"""Reverse rule of a revolve call (`func.call` with `ad.checkpoint` and
`ad.revolve`, made by `ad-checkpoint-loops{schedule=revolve}`): a time
loop reversed by the binomial schedule (adpasses/cache/revolve.py).

The call runs steps [0, n) of a loop, n = N - 1 (the loop's last step
stays a plain, taped iteration after it). Operands: (snapshots, lo, hi,
step, used values..., carried values...); `ad.revolve` names the used
arrays the steps overwrite (`state`: snapshotted) and those each step
writes before reading (`scratch`: never snapshotted).

Forward sweep (`forward`, emitted before the call's clone): snapshot
buffers of c = min(snapshots, n + 1) states (each state array with a
leading dimension c, each carried value a vector of c, the positions);
slot 0 := the state at step 0; then revolve's first descent: while a slot
is free and the range left is longer than two steps, advance m =
first_advance(N - top, free) steps (the callee's primal, nothing taped)
and snapshot. The call's clone then runs from the last snapshot to n.

Reverse sweep (`reverse`): an `scf.while` over the schedule, carrying the
steps left (hi), the top slot k, the position of the working state and
the adjoints of the carried values and of the active used scalars:

    top = positions[k]; restore slot k into the working buffers unless they hold it
    if hi - top == 1 or no slot is free:
        advance top -> hi - 1; adjoint step hi - 1 (the callee's gradient on
        [hi - 1, hi): it reruns the step taping locally, then reverses it);
        hi -= 1; pop slot k when hi reaches it
    else:
        advance m = first_advance(hi - top, c - k) steps; snapshot in slot k + 1

Memory: c states, one step's tape (inside the gradient call) and the
working buffers (one state); the adjoint of each state array accumulates
in its shadow, in place, step after step. Arrays the steps only read are
handled as a checkpointed call's are (snapshotted by the cache plan if
later code overwrites them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, DictionaryAttr, IndexType, IntegerAttr, MemRefType, UnitAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from adpasses.core.diagnostics import error_at
from adpasses.core.types import is_float_type, is_memref_type
from adpasses.dialects.ad import WORKSPACE_ATTR

FIRST_USED = 4  # operands: snapshots, lo, hi, step, used..., carried...


def is_revolve_call(op: Operation) -> bool:
    from adpasses.dialects.ad import REVOLVE_ATTR

    return isinstance(op, func.CallOp) and REVOLVE_ATTR in op.attributes


@dataclass
class RevolveCall:
    """The layout of a revolve call's operands."""

    op: func.CallOp
    state: list[int]
    scratch: list[int]
    carried: int

    @staticmethod
    def of(op: func.CallOp) -> RevolveCall:
        from adpasses.dialects.ad import REVOLVE_ATTR

        attr = op.attributes[REVOLVE_ATTR]
        assert isinstance(attr, DictionaryAttr)
        d = attr.data
        return RevolveCall(op, list(d["state"].get_values()), list(d["scratch"].get_values()),  # type: ignore[attr-defined]
                           d["carried"].value.data)  # type: ignore[attr-defined]

    @property
    def carried_first(self) -> int:
        return len(self.op.operands) - self.carried

    @property
    def used(self) -> range:
        return range(FIRST_USED, self.carried_first)


@dataclass
class ForwardState:
    """What the forward sweep leaves for the reverse: the snapshot buffers
    (in the gradient's top block) and the descent's last slot."""

    snapshots: SSAValue
    positions: SSAValue
    arrays: dict[int, SSAValue]
    carried: list[SSAValue]
    top_slot: SSAValue
    steps: SSAValue
    buffers: list[SSAValue] = field(default_factory=list)


class _Emit:
    """Builds index arithmetic at one insertion point."""

    def __init__(self, b: Builder, loc: Attribute):
        self.b, self.loc = b, loc

    def __call__(self, op: Operation) -> SSAValue:
        op.location = self.loc
        return self.b.insert(op).results[0]

    def op(self, op: Operation) -> Operation:
        op.location = self.loc
        return self.b.insert(op)

    def buffer(self, alloc: memref.AllocOp) -> SSAValue:
        """A buffer of the gradient's own (snapshots, working state): kept
        across calls (`ad.workspace`), so a call after the first allocates
        nothing."""
        alloc.attributes[WORKSPACE_ATTR] = UnitAttr()
        return self(alloc)

    def free(self, buffer: SSAValue) -> None:
        self.op(memref.DeallocOp.get(buffer)).attributes[WORKSPACE_ATTR] = UnitAttr()

    def index(self, k: int) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr(k, IndexType())))

    def add(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self(arith.AddiOp(x, y))

    def sub(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self(arith.SubiOp(x, y))

    def mul(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self(arith.MuliOp(x, y))

    def cmp(self, x: SSAValue, y: SSAValue, how: str) -> SSAValue:
        return self(arith.CmpiOp(x, y, how))

    def select(self, c: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return self(arith.SelectOp(c, x, y))

    def load(self, mem: SSAValue, idx: Sequence[SSAValue]) -> SSAValue:
        return self(memref.LoadOp.get(mem, idx))

    def store(self, v: SSAValue, mem: SSAValue, idx: Sequence[SSAValue]) -> None:
        self.op(memref.StoreOp.get(v, mem, idx))

    def position(self, lo: SSAValue, step: SSAValue, p: SSAValue) -> SSAValue:
        """The loop's induction value at relative step p."""
        return self.add(lo, self.mul(p, step))

    def if_(self, cond: SSAValue, types: Sequence[Attribute],
            then: Callable[[_Emit], Sequence[SSAValue]],
            other: Callable[[_Emit], Sequence[SSAValue]]) -> list[SSAValue]:
        blocks = []
        for body in (then, other):
            block = Block()
            e = _Emit(Builder(InsertPoint.at_end(block)), self.loc)
            e.op(scf.YieldOp(*body(e)))
            blocks.append(block)
        op = self.op(scf.IfOp(cond, list(types), Region(blocks[0]), Region(blocks[1])))
        return list(op.results)

    def loop_nest(self, sizes: Sequence[SSAValue], body: Callable[[_Emit, list[SSAValue]], None]) -> None:
        def nest(e: _Emit, rest: Sequence[SSAValue], idx: list[SSAValue]) -> None:
            if not rest:
                body(e, idx)
                return
            inner = Block(arg_types=[IndexType()])
            ie = _Emit(Builder(InsertPoint.at_end(inner)), self.loc)
            nest(ie, rest[1:], [*idx, inner.args[0]])
            ie.op(scf.YieldOp())
            e.op(scf.ForOp(e.index(0), rest[0], e.index(1), [], Region(inner)))

        nest(self, sizes, [])


def sizes_of(e: _Emit, mem: SSAValue) -> list[SSAValue]:
    mtype = mem.type
    assert isinstance(mtype, MemRefType)
    return [e.index(n) if n >= 0 else e(memref.DimOp(mem, e.index(d))) for d, n in enumerate(mtype.get_shape())]


def first_advance(e: _Emit, steps: SSAValue, snaps: SSAValue) -> SSAValue:
    """Revolve's first advance over `steps` >= 2 steps with `snaps` >= 2
    snapshots (adpasses/cache/revolve.py `first_advance`, the same
    integers): r, the least with beta(snaps, r) >= steps, found by the
    recurrence beta(c, r) = beta(c, r - 1) * (c + r) / r; then
    m = max(1, min(beta(c, r - 1), steps - beta(c - 1, r - 1)))."""
    idx = IndexType()
    before = Block(arg_types=[idx, idx])
    r, reach = before.args
    be = _Emit(Builder(InsertPoint.at_end(before)), e.loc)
    be.op(scf.ConditionOp(be.cmp(reach, steps, "ult"), r, reach))
    after = Block(arg_types=[idx, idx])
    r, reach = after.args
    ae = _Emit(Builder(InsertPoint.at_end(after)), e.loc)
    r1 = ae.add(r, ae.index(1))
    ae.op(scf.YieldOp(r1, ae(arith.DivUIOp(ae.mul(reach, ae.add(snaps, r1)), r1))))
    loop = e.op(scf.WhileOp([e.index(0), e.index(1)], [idx, idx], Region(before), Region(after)))
    r, reach = loop.results
    one = e.index(1)
    b1 = e(arith.DivUIOp(e.mul(reach, r), e.add(snaps, r)))                 # beta(c, r - 1)
    b2 = e(arith.DivUIOp(e.mul(b1, snaps), e.sub(e.add(snaps, r), one)))    # beta(c - 1, r - 1)
    m = e(arith.MaxUIOp(e(arith.MinUIOp(b1, e.sub(steps, b2))), one))
    m.name_hint = "advance"
    return m


class RevolveCallRule:
    def needs(self, op: func.CallOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        return list(op.operands)

    def memory_needs(self, op: func.CallOp, activity) -> Sequence[SSAValue]:  # type: ignore[no-untyped-def]
        """The arrays the steps only read (the state arrays are the rule's own
        business: it snapshots them itself)."""
        call = RevolveCall.of(op)
        own = set(call.state) | set(call.scratch)
        return [v for k, v in enumerate(op.operands) if is_memref_type(v.type) and k not in own
                and v not in {op.operands[j] for j in own}]

    # -- forward sweep ---------------------------------------------------------

    def forward(self, sweep, op: func.CallOp, clone: func.CallOp) -> ForwardState:  # type: ignore[no-untyped-def]
        """Snapshot buffers, slot 0 and the first descent, before `clone`;
        `clone` then runs from the descent's last snapshot to the end."""
        call = RevolveCall.of(op)
        e = _Emit(Builder(InsertPoint.before(clone)), op.location)
        operands = list(clone.operands)
        asked, lo, hi, step = operands[:4]
        carried_types = [v.type for v in operands[call.carried_first:]]
        from adpasses.core.index_arith import trip_count

        n = trip_count(e.b, lo, hi, step)
        whole = e.add(n, e.index(1))  # revolve's range: these steps and the loop's last, taped one
        # No step (the whole tape fits a budget, or the sqrt segments were
        # chosen): no slot, nothing copied, empty buffers.
        live = e.cmp(n, e.index(0), "ugt")
        c = e.select(live, e(arith.MaxUIOp(e(arith.MinUIOp(asked, whole)), e.index(1))), e.index(0))
        c.name_hint = "slots"
        positions = e.buffer(memref.AllocOp.get(IndexType(), shape=[DYNAMIC_INDEX], dynamic_sizes=[c]))
        positions.name_hint = "revolve_positions"
        arrays: dict[int, SSAValue] = {}
        for k in call.state:
            mem = operands[k]
            mtype = mem.type
            assert isinstance(mtype, MemRefType)
            dims = sizes_of(e, mem)
            shape = [DYNAMIC_INDEX, *mtype.get_shape()]
            dynamic = [c, *(s for s, x in zip(dims, mtype.get_shape()) if x < 0)]
            buf = e.buffer(memref.AllocOp.get(mtype.element_type, shape=shape, dynamic_sizes=dynamic))
            buf.name_hint = f"revolve_{mem.name_hint}" if mem.name_hint else "revolve_state"
            arrays[k] = buf
        carried = []
        for t in carried_types:
            buf = e.buffer(memref.AllocOp.get(t, shape=[DYNAMIC_INDEX], dynamic_sizes=[c]))
            buf.name_hint = "revolve_carried"
            carried.append(buf)
        st = ForwardState(c, positions, arrays, carried, e.index(0), n,
                          buffers=[positions, *arrays.values(), *carried])
        zero = e.index(0)

        def first_slot(te: _Emit) -> list[SSAValue]:
            te.store(zero, positions, [zero])
            save(te, call, st, zero, {k: operands[k] for k in call.state}, operands[call.carried_first:])
            return []

        e.if_(live, [], first_slot, lambda te: [])
        # The descent: for slot in [1, c): if N - top > 1, advance and snapshot.
        idx = IndexType()
        body = Block(arg_types=[idx, idx, idx, *carried_types])
        slot, top, k_top, *values = body.args
        slot.name_hint, top.name_hint = "slot", "top"
        be = _Emit(Builder(InsertPoint.at_end(body)), op.location)
        # (a snapshot at N - 1 would be of no use: the state is there when
        # the loop's last step runs, taped)
        go = be.cmp(be.sub(whole, top), be.index(2), "ugt")

        def advance(te: _Emit) -> list[SSAValue]:
            m = first_advance(te, te.sub(whole, top), te.sub(c, k_top))
            stop = te.add(top, m)
            r = te.op(func.CallOp(op.callee, [asked, te.position(lo, step, top), te.position(lo, step, stop), step,
                                              *operands[FIRST_USED:call.carried_first], *values], carried_types))
            te.store(stop, positions, [slot])
            save(te, call, st, slot, {k: operands[k] for k in call.state}, list(r.results))
            return [stop, slot, *r.results]

        out = be.if_(go, [idx, idx, *carried_types], advance, lambda ee: [top, k_top, *values])
        be.op(scf.YieldOp(*out))
        descent = e.op(scf.ForOp(e.index(1), c, e.index(1), [zero, zero, *operands[call.carried_first:]],
                                 Region(body)))
        top_pos, top_slot, *last = descent.results
        st.top_slot = top_slot
        clone.operands = [asked, e.position(lo, step, top_pos), hi, step,  # type: ignore[assignment]
                          *operands[FIRST_USED:call.carried_first], *last]
        return st

    # -- reverse sweep ---------------------------------------------------------

    def reverse(self, rc, op: func.CallOp) -> None:  # type: ignore[no-untyped-def]
        sweep = rc.sweep
        if sweep.callee_gradient is None:
            raise error_at(op, "is a checkpointed loop, but no gradient of its loop body can be built here")
        call = RevolveCall.of(op)
        st: ForwardState = sweep.forward_state[op]
        activity = rc.activity
        asked, lo, hi, step = (rc.primal(v) for v in op.operands[:4])
        cf = call.carried_first
        carried_ops = list(op.operands[cf:])
        carried_types = [v.type for v in carried_ops]
        # A carried value is active through the steps if it is at either end.
        carried_active = [is_float_type(v.type) and (activity.is_active(v) or activity.is_active(r))
                          for v, r in zip(carried_ops, op.results)]
        e = _Emit(rc.builder, rc.loc)
        # Operands of the steps: working buffers for the arrays they write.
        working: dict[int, SSAValue] = {}
        own_buffers: list[SSAValue] = []
        live = e.cmp(st.steps, e.index(0), "ugt")  # no step: empty working buffers
        for k in [*call.state, *call.scratch]:
            mem = rc.primal(op.operands[k])
            mtype = mem.type
            assert isinstance(mtype, MemRefType)
            dims = [e.select(live, d, e.index(0)) if x < 0 else d for d, x in zip(sizes_of(e, mem), mtype.get_shape())]
            buf = e.buffer(memref.AllocOp.get(mtype.element_type, shape=mtype.get_shape(),
                                       dynamic_sizes=[s for s, x in zip(dims, mtype.get_shape()) if x < 0]))
            buf.name_hint = f"{op.operands[k].name_hint}_working" if op.operands[k].name_hint else "working"
            working[k] = buf if MemRefType(mtype.element_type, mtype.get_shape()) == mtype else \
                e(memref.CastOp.get(buf, mtype))
            own_buffers.append(buf)
        used_args: list[SSAValue] = []       # the primal operands for advancing
        grad_args: list[SSAValue] = []       # the gradient's operands before the carried values
        acts: list[str] = ["const"] * 4
        active_used: list[SSAValue] = []
        restored: list[SSAValue] = []
        for k in call.used:
            v = op.operands[k]
            if k in working:
                arg = working[k]
            elif is_memref_type(v.type):
                kind = sweep.plan.memory_kind(op, v)
                if kind == "snapshot":
                    arg = sweep.restore_snapshot(rc, op, v)
                    restored.append(arg)
                elif kind == "scratch":
                    arg = sweep.scratch_buffer(rc, v)
                    restored.append(arg)
                else:
                    arg = rc.primal(v)
            else:
                arg = rc.primal(v)
            used_args.append(arg)
            grad_args.append(arg)
            if is_memref_type(v.type):
                if activity.is_active_memory(v):
                    acts.append("dup")
                    grad_args.append(rc.shadow(v))
                else:
                    acts.append("const")
            elif is_float_type(v.type) and activity.is_active(v):
                acts.append("active")
                active_used.append(v)
            else:
                acts.append("const")
        acts += ["active" if a else "const" for a in carried_active]
        rets = ["active" if a else "const" for a in carried_active]
        name = sweep.callee_gradient(op.callee.root_reference.data, acts, rets)
        sweep.checkpointed_calls.append((op, name))
        adjoint_types = [v.type for v in active_used] + [t for t, a in zip(carried_types, carried_active) if a]
        seeds = [rc.adjoint_or_zero(r) for r, a in zip(op.results, carried_active) if a]
        sums = [rc.zero(v.type) for v in active_used]
        idx = IndexType()
        c = st.snapshots
        minus_one = e.index(-1)
        state_types = [idx, idx, idx, *carried_types, *(v.type for v in seeds), *(v.type for v in sums)]
        before = Block(arg_types=state_types)
        be = _Emit(Builder(InsertPoint.at_end(before)), rc.loc)
        be.op(scf.ConditionOp(be.cmp(before.args[0], be.index(0), "ugt"), *before.args))
        after = Block(arg_types=state_types)
        left, k, current = after.args[:3]
        left.name_hint, k.name_hint, current.name_hint = "steps_left", "slot", "working_at"
        nc = len(carried_types)
        values = list(after.args[3:3 + nc])
        adj = list(after.args[3 + nc:3 + nc + len(seeds)])
        acc = list(after.args[3 + nc + len(seeds):])
        ae = _Emit(Builder(InsertPoint.at_end(after)), rc.loc)
        top = ae.load(st.positions, [k])
        top.name_hint = "top"

        def restore(te: _Emit) -> list[SSAValue]:
            for j, buf in st.arrays.items():
                dst = working[j]

                def copy(le: _Emit, i: list[SSAValue], buf: SSAValue = buf, dst: SSAValue = dst) -> None:
                    le.store(le.load(buf, [k, *i]), dst, i)

                te.loop_nest(sizes_of(te, dst), copy)
            return [te.load(buf, [k]) for buf in st.carried]

        values = ae.if_(ae.cmp(current, top, "ne"), carried_types, restore, lambda te: values)
        one = ae.index(1)
        last_one = ae.cmp(ae.sub(left, top), one, "eq")
        full = ae.cmp(ae.add(k, one), c, "eq")

        def adjoint_step(te: _Emit) -> list[SSAValue]:
            target = te.sub(left, te.index(1))
            r = te.op(func.CallOp(op.callee, [asked, te.position(lo, step, top), te.position(lo, step, target),
                                              step, *used_args, *values], carried_types))
            args = [asked, te.position(lo, step, target), te.position(lo, step, left), step, *grad_args]
            args += [*r.results, *adj]
            g = te.op(func.CallOp(name, args, adjoint_types))
            grads = list(g.results)
            new_acc = [te(arith.AddfOp(s, x)) for s, x in zip(acc, grads[:len(acc)])]
            popped = te(arith.AndIOp(te.cmp(target, top, "eq"), te.cmp(k, te.index(0), "ugt")))
            new_k = te.select(popped, te.sub(k, te.index(1)), k)
            return [target, new_k, te.index(-1), *r.results, *grads[len(acc):], *new_acc]

        def snapshot(te: _Emit) -> list[SSAValue]:
            m = first_advance(te, te.sub(left, top), te.sub(c, k))
            stop = te.add(top, m)
            r = te.op(func.CallOp(op.callee, [asked, te.position(lo, step, top), te.position(lo, step, stop), step,
                                              *used_args, *values], carried_types))
            slot = te.add(k, te.index(1))
            te.store(stop, st.positions, [slot])
            save(te, call, st, slot, {j: working[j] for j in call.state}, list(r.results))
            return [left, slot, stop, *r.results, *adj, *acc]

        out = ae.if_(ae(arith.OrIOp(last_one, full)), state_types, adjoint_step, snapshot)
        ae.op(scf.YieldOp(*out))
        init = [st.steps, st.top_slot, minus_one, *(rc.primal(v) for v in carried_ops), *seeds, *sums]
        loop = e.op(scf.WhileOp(init, state_types, Region(before), Region(after)))
        results = list(loop.results)
        adj_out = results[3 + nc:3 + nc + len(seeds)]
        acc_out = results[3 + nc + len(seeds):]
        for v, g in zip(active_used, acc_out):
            rc.add_adjoint(v, g)
        carried_adj = iter(adj_out)
        for v, a in zip(carried_ops, carried_active):
            if a:
                g = next(carried_adj)
                if activity.is_active(v):
                    rc.add_adjoint(v, g)
        for buf in [*own_buffers, *st.buffers]:
            e.free(buf)
        for buf in restored:
            sweep.release_scratch(rc, buf)


def save(e: _Emit, call: RevolveCall, st: ForwardState, slot: SSAValue, arrays: dict[int, SSAValue],
         carried: Sequence[SSAValue]) -> None:
    """Snapshot slot `slot` := the state (`arrays`, by operand index; the
    carried values)."""
    for k, src in arrays.items():
        buf = st.arrays[k]

        def copy(le: _Emit, i: list[SSAValue], src: SSAValue = src, buf: SSAValue = buf) -> None:
            le.store(le.load(src, i), buf, [slot, *i])

        e.loop_nest(sizes_of(e, src), copy)
    for v, buf in zip(carried, st.carried):
        e.store(v, buf, [slot])


REVOLVE = RevolveCallRule()
