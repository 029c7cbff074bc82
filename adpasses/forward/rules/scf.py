"""Forward rules of the scf dialect: the regions carry tangents.

The op is rebuilt with, after its own values, the tangents of the values
it carries that carry derivatives (`width` lanes each): an scf.for's
iter_args and results, an scf.while's `before` arguments and its
condition's values (the `after` arguments and the results), an scf.if's
results. The terminators yield the primal values, then those tangents
(zeros for a value without one: a loop-carried value reset to a constant).
A region op with nothing that carries derivatives inside is cloned.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.ir import Block, Operation, Region, SSAValue

from adpasses.dialects.ad import COUNTED_ATTR


def _tangent_types(values: Sequence[SSAValue], carried: Sequence[int], width: int) -> list:
    return [values[j].type for j in carried for _ in range(width)]


def _tangents_of(fb, values: Sequence[SSAValue], carried: Sequence[int]) -> list[SSAValue]:  # type: ignore[no-untyped-def]
    return [t for j in carried for t in fb.tangent_or_zero(values[j])]


def _bind(fb, olds: Sequence[SSAValue], news: Sequence[SSAValue], carried: Sequence[int]) -> None:  # type: ignore[no-untyped-def]
    """`news` are the primal values of `olds`, then the tangents of the carried ones."""
    for old, new in zip(olds, news):
        new.name_hint = old.name_hint
        fb.vmap[old] = new
    rest = list(news[len(olds):])
    for idx, j in enumerate(carried):
        fb.set_tangent(olds[j], rest[idx * fb.width:(idx + 1) * fb.width])


def _copy_attributes(old: Operation, new: Operation) -> None:
    for key, attr in old.attributes.items():
        # ad.counted says the *last* result counts iterations: tangents now follow it
        if key != COUNTED_ATTR:
            new.attributes[key] = attr


class ForRule:
    def forward(self, fb, op: scf.ForOp) -> None:  # type: ignore[no-untyped-def]
        if not fb.carries_derivatives(op):
            fb.clone(op)
            return
        body = op.body.block
        iv, iter_args = body.args[0], list(body.args[1:])
        results = list(op.results)
        carried = [j for j in range(len(results))
                   if fb.is_active(iter_args[j]) or fb.is_active(results[j])]
        inits = [fb.primal_value(v) for v in op.iter_args] + _tangents_of(fb, list(op.iter_args), carried)
        block = Block(arg_types=[iv.type, *(a.type for a in iter_args),
                                 *_tangent_types(iter_args, carried, fb.width)])
        loop = scf.ForOp(fb.primal_value(op.lb), fb.primal_value(op.ub), fb.primal_value(op.step),
                         inits, [block])
        loop.location = op.location
        _copy_attributes(op, loop)
        fb.insert(loop)
        block.args[0].name_hint = iv.name_hint
        fb.vmap[iv] = block.args[0]
        _bind(fb, iter_args, list(block.args[1:]), carried)
        with fb.at_end(block):
            term = fb.emit_ops(body)
            assert isinstance(term, scf.YieldOp)
            yielded = list(term.arguments)
            y = fb.insert(scf.YieldOp(*[fb.primal_value(v) for v in yielded],
                                      *_tangents_of(fb, yielded, carried)))
            y.location = term.location
        _bind(fb, results, list(loop.results), carried)


class IfRule:
    def forward(self, fb, op: scf.IfOp) -> None:  # type: ignore[no-untyped-def]
        if not fb.carries_derivatives(op):
            fb.clone(op)
            return
        results = list(op.results)
        carried = [j for j in range(len(results)) if fb.is_active(results[j])]
        types = [r.type for r in results] + _tangent_types(results, carried, fb.width)
        regions = []
        for region in (op.true_region, op.false_region):
            if not region.blocks:
                regions.append(Region())
                continue
            block = Block()
            with fb.at_end(block):
                term = fb.emit_ops(region.block)
                assert isinstance(term, scf.YieldOp)
                yielded = list(term.arguments)
                y = fb.insert(scf.YieldOp(*[fb.primal_value(v) for v in yielded],
                                          *_tangents_of(fb, yielded, carried)))
                y.location = term.location
            regions.append(Region(block))
        new = scf.IfOp(fb.primal_value(op.cond), types, regions[0], regions[1])
        new.location = op.location
        _copy_attributes(op, new)
        fb.insert(new)
        _bind(fb, results, list(new.results), carried)


class WhileRule:
    def forward(self, fb, op: scf.WhileOp) -> None:  # type: ignore[no-untyped-def]
        if not fb.carries_derivatives(op):
            fb.clone(op)
            return
        before, after = op.before_region.block, op.after_region.block
        before_args, after_args, results = list(before.args), list(after.args), list(op.results)
        carried_b = [j for j in range(len(before_args)) if fb.is_active(before_args[j])]
        carried_c = [k for k in range(len(results))
                     if fb.is_active(after_args[k]) or fb.is_active(results[k])]
        inits = list(op.arguments)
        new_inits = [fb.primal_value(v) for v in inits] + _tangents_of(fb, inits, carried_b)
        new_before = Block(arg_types=[a.type for a in before_args]
                           + _tangent_types(before_args, carried_b, fb.width))
        new_after = Block(arg_types=[a.type for a in after_args]
                          + _tangent_types(after_args, carried_c, fb.width))
        _bind(fb, before_args, list(new_before.args), carried_b)
        with fb.at_end(new_before):
            cond = fb.emit_ops(before)
            assert isinstance(cond, scf.ConditionOp)
            passed = list(cond.args)
            c = fb.insert(scf.ConditionOp(fb.primal_value(cond.condition),
                                          *[fb.primal_value(v) for v in passed],
                                          *_tangents_of(fb, passed, carried_c)))
            c.location = cond.location
        _bind(fb, after_args, list(new_after.args), carried_c)
        with fb.at_end(new_after):
            term = fb.emit_ops(after)
            assert isinstance(term, scf.YieldOp)
            yielded = list(term.arguments)
            y = fb.insert(scf.YieldOp(*[fb.primal_value(v) for v in yielded],
                                      *_tangents_of(fb, yielded, carried_b)))
            y.location = term.location
        types = [r.type for r in results] + _tangent_types(results, carried_c, fb.width)
        loop = scf.WhileOp(new_inits, types, Region(new_before), Region(new_after))
        loop.location = op.location
        _copy_attributes(op, loop)
        fb.insert(loop)
        _bind(fb, results, list(loop.results), carried_c)


RULES: dict[type[Operation], object] = {
    scf.ForOp: ForRule(),
    scf.IfOp: IfRule(),
    scf.WhileOp: WhileRule(),
}
