"""scf -> LLVM: loops and branches as basic blocks with phis.

Values carried through control flow (iter_args, if results, while
arguments) are flattened into their LLVM parts, one phi per part.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import scf
from xdsl.ir import Block

from adpasses.core import stop_codes
from adpasses.core.diagnostics import error_at
from adpasses.lowering.core import FunctionTranslator, flat_types


def _phis(ft: FunctionTranslator, types) -> list[list[ir.PhiInstr]]:  # type: ignore[no-untyped-def]
    return [[ft.b.phi(t) for t in flat_types(ty)] for ty in types]


def _bind(ft: FunctionTranslator, values, phis) -> None:  # type: ignore[no-untyped-def]
    for v, ps in zip(values, phis):
        ft.set(v, ft.unflatten(v.type, ps))


def _incoming(ft: FunctionTranslator, phis, values, block: ir.Block) -> None:  # type: ignore[no-untyped-def]
    for ps, v in zip(phis, values):
        for p, part in zip(ps, ft.flatten(v)):
            p.add_incoming(part, block)


def _body(ft: FunctionTranslator, block: Block) -> list:  # type: ignore[type-arg]
    """Translate a region's ops except its terminator; return its operands."""
    for op in block.ops:
        if op is block.last_op and isinstance(op, (scf.YieldOp, scf.ConditionOp)):
            break
        ft.translate_op(op)
    return list(block.last_op.operands) if block.last_op is not None else []


def _for(ft: FunctionTranslator, op: scf.ForOp) -> None:
    b = ft.b
    lb, ub, step = ft.get(op.lb), ft.get(op.ub), ft.get(op.step)
    unit = isinstance(step, ir.Constant) and step.constant == 1
    if not unit:
        # iv += step can wrap past ub (ub near 2**63 - 1) and loop forever:
        # count iterations instead, k = 0 .. n (exact, unsigned), with
        # iv = lb + k * step. For step 1, iv < ub <= 2**63 - 1 never wraps.
        if not isinstance(step, ir.Constant):
            # A step <= 0 never ends a loop that runs (and udiv by 0 traps).
            site = ft.mt.check_site(op)
            endless = b.and_(b.icmp_signed("<=", step, ir.Constant(step.type, 0)), b.icmp_signed(">", ub, lb))
            wide = step if step.type.width == 64 else b.sext(step, ir.IntType(64))
            ft.stop_if(endless, site, wide, stop_codes.LOOP_STEP, ir.Constant(ir.IntType(64), 0))
        elif step.constant <= 0:
            raise error_at(op, f"has step {step.constant}; the step of a loop must be positive")
        n = _trip_count(b, lb, ub, step)
    pre = b.block
    header = ft.fn.append_basic_block("for.header")
    body = ft.fn.append_basic_block("for.body")
    exit_ = ft.fn.append_basic_block("for.exit")
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(lb.type)
    iv.add_incoming(lb if unit else ir.Constant(lb.type, 0), pre)
    block = op.body.block
    carried = _phis(ft, [a.type for a in block.args[1:]])
    _incoming(ft, carried, op.iter_args, pre)
    if unit:
        b.cbranch(b.icmp_signed("<", iv, ub), body, exit_)
    else:
        b.cbranch(b.icmp_unsigned("<", iv, n), body, exit_)
    b.position_at_end(body)
    ft.set(block.args[0], iv if unit else b.add(lb, b.mul(iv, step)))
    _bind(ft, block.args[1:], carried)
    yielded = _body(ft, block)
    latch = b.block
    iv.add_incoming(b.add(iv, step if unit else ir.Constant(lb.type, 1)), latch)
    _incoming(ft, carried, yielded, latch)
    b.branch(header)
    b.position_at_end(exit_)
    _bind(ft, op.results, carried)


def _trip_count(b: ir.IRBuilder, lb: ir.Value, ub: ir.Value, step: ir.Value) -> ir.Value:
    """Iterations of lb, lb + step, ... < ub (step > 0), as an unsigned
    number: ub - lb is exact as unsigned when ub > lb."""
    zero, one = ir.Constant(lb.type, 0), ir.Constant(lb.type, 1)
    divisor = step if isinstance(step, ir.Constant) else b.select(b.icmp_signed(">", step, zero), step, one)
    count = b.add(b.udiv(b.sub(b.sub(ub, lb), one), divisor), one)
    return b.select(b.icmp_signed(">", ub, lb), count, zero)


def _if(ft: FunctionTranslator, op: scf.IfOp) -> None:
    b = ft.b
    then_bb = ft.fn.append_basic_block("if.then")
    else_bb = ft.fn.append_basic_block("if.else")
    merge = ft.fn.append_basic_block("if.end")
    b.cbranch(ft.get(op.cond), then_bb, else_bb)
    ends = []
    for region, bb in ((op.true_region, then_bb), (op.false_region, else_bb)):
        b.position_at_end(bb)
        yielded = _body(ft, region.block) if region.blocks else []
        ends.append((b.block, yielded))
        b.branch(merge)
    b.position_at_end(merge)
    if op.output:
        phis = _phis(ft, [r.type for r in op.output])
        for block, yielded in ends:
            _incoming(ft, phis, yielded, block)
        _bind(ft, op.output, phis)


def _while(ft: FunctionTranslator, op: scf.WhileOp) -> None:
    b = ft.b
    pre = b.block
    before_bb = ft.fn.append_basic_block("while.before")
    after_bb = ft.fn.append_basic_block("while.after")
    exit_ = ft.fn.append_basic_block("while.exit")
    b.branch(before_bb)
    b.position_at_end(before_bb)
    before, after = op.before_region.block, op.after_region.block
    carried = _phis(ft, [a.type for a in before.args])
    _incoming(ft, carried, op.arguments, pre)
    _bind(ft, before.args, carried)
    condition = before.last_op
    assert isinstance(condition, scf.ConditionOp)
    _body(ft, before)
    passed = list(condition.args)
    b.cbranch(ft.get(condition.condition), after_bb, exit_)
    # `after` and the exit are reached only from the end of `before`, whose
    # values dominate them: no phis needed.
    for arg, value in zip(after.args, passed):
        ft.set(arg, ft.get(value))
    for res, value in zip(op.res, passed):
        ft.set(res, ft.get(value))
    b.position_at_end(after_bb)
    yielded = _body(ft, after)
    _incoming(ft, carried, yielded, b.block)
    b.branch(before_bb)
    b.position_at_end(exit_)


def _index_switch(ft: FunctionTranslator, op: scf.IndexSwitchOp) -> None:
    b = ft.b
    merge = ft.fn.append_basic_block("switch.end")
    default_bb = ft.fn.append_basic_block("switch.default")
    switch = b.switch(ft.get(op.arg), default_bb)
    ends = []
    cases = list(op.cases.get_values())
    for value, region in zip(cases, op.case_regions):
        bb = ft.fn.append_basic_block("switch.case")
        switch.add_case(ir.Constant(ft.get(op.arg).type, value), bb)
        b.position_at_end(bb)
        ends.append((None, _body(ft, region.block)))
        ends[-1] = (b.block, ends[-1][1])
        b.branch(merge)
    b.position_at_end(default_bb)
    ends.append((None, _body(ft, op.default_region.block)))
    ends[-1] = (b.block, ends[-1][1])
    b.branch(merge)
    b.position_at_end(merge)
    if op.output:
        phis = _phis(ft, [r.type for r in op.output])
        for block, yielded in ends:
            _incoming(ft, phis, yielded, block)
        _bind(ft, op.output, phis)


def _execute_region(ft: FunctionTranslator, op: scf.ExecuteRegionOp) -> None:
    if len(op.region.blocks) != 1:
        raise error_at(op, "with several blocks is not supported by the LLVM lowering; "
                           "use scf.if / scf.index_switch inside one block")
    for res, value in zip(op.results, _body(ft, op.region.block)):
        ft.set(res, ft.get(value))


LOWERINGS = {
    scf.ForOp: _for,
    scf.IfOp: _if,
    scf.WhileOp: _while,
    scf.IndexSwitchOp: _index_switch,
    scf.ExecuteRegionOp: _execute_region,
}
