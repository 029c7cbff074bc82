"""`ad-lower-affine`: the affine dialect rewritten as scf + arith + memref.

The reverse pass and the LLVM lowering understand scf/arith/memref; affine
code is lowered first (by the reverse pipeline on its copies of the primals,
`ad-lower-affine{marked-only=true}`; by `compile_module` and `ad-run` on the
module), so affine loops are differentiated and run like
the scf loops they mean, instead of being opaque to the analyses.

xDSL 0.74's own `lower-affine` ignores bound and map operands (it fails
with "list index out of range" on `affine.for %i = 0 to %n`) and handles
neither min/max bounds nor `affine.min`/`affine.if`/`affine.parallel`; this one does:

- `affine.for`: `scf.for` from max(lower bound results) to min(upper bound
  results) with the constant step; bound maps take their operands (dims,
  then symbols).
- `affine.load`/`affine.store`: `memref.load`/`store` at the map's results.
- `affine.apply`, `affine.min`, `affine.max`: the expression(s), `arith.minsi`
  / `arith.maxsi` over results.
- `affine.parallel` (without reductions): `scf.parallel`, each bound the
  max/min of its group (then `ad-expand-upstream-ops` makes it `scf.for`).
- `affine.if`: `scf.if` on the conjunction of the set's constraints
  (`e >= 0` / `e == 0`).
- `affine.yield`: `scf.yield`.

Expressions follow MLIR's semantics: `mod` is non-negative for a positive
divisor, `floordiv`/`ceildiv` round toward -inf/+inf. Any other affine op
(`affine.vector_load`, ...) is an error at its location.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine, arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from adpasses.core.diagnostics import error_at
from adpasses.dialects.upstream import AffineMaxOp
from adpasses.transforms.gradient_marks import marked_functions


def has_affine_ops(root: Operation) -> bool:
    return any(op.dialect_name() == "affine" for op in root.walk())


def without_affine(module: ModuleOp) -> ModuleOp:
    """`module` itself if it has no affine op, else a lowered copy (the
    caller's module is left as it was)."""
    if not has_affine_ops(module):
        return module
    copy = module.clone()
    lower_affine(copy)
    return copy


def lower_affine(root: Operation) -> None:
    """Rewrite every affine op inside `root` in place (no-op without any)."""
    ops = [op for op in root.walk() if op.dialect_name() == "affine"]
    for op in ops:
        if type(op) not in _LOWERED:
            raise error_at(
                op,
                "is not supported by adpasses (only affine.for/parallel/if/load/store/apply/min/max/"
                "yield "
                "are lowered to scf); rewrite it with scf.for and memref.load/store",
            )
    # Terminators last: a loop's body moves into the new scf op first.
    for op in sorted(ops, key=lambda o: isinstance(o, affine.YieldOp)):
        _LOWERED[type(op)](op)


class _Emitter:
    """Builds index arithmetic before `anchor`, at its location."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor

    def emit(self, op: Operation) -> SSAValue:
        op.location = self.anchor.location
        Rewriter.insert_op(op, InsertPoint.before(self.anchor))
        return op.results[0]

    def const(self, value: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def expr(self, e: AffineExpr, dims: Sequence[SSAValue], syms: Sequence[SSAValue]) -> SSAValue:
        if isinstance(e, AffineConstantExpr):
            return self.const(e.value)
        if isinstance(e, AffineDimExpr):
            return dims[e.position]
        if isinstance(e, AffineSymExpr):
            return syms[e.position]
        assert isinstance(e, AffineBinaryOpExpr)
        lhs, rhs = self.expr(e.lhs, dims, syms), self.expr(e.rhs, dims, syms)
        kind = e.kind
        if kind is AffineBinaryOpKind.Add:
            return self.emit(arith.AddiOp(lhs, rhs))
        if kind is AffineBinaryOpKind.Mul:
            return self.emit(arith.MuliOp(lhs, rhs))
        if kind is AffineBinaryOpKind.FloorDiv:
            return self.emit(arith.FloorDivSIOp(lhs, rhs))
        if kind is AffineBinaryOpKind.CeilDiv:
            return self.emit(arith.CeilDivSIOp(lhs, rhs))
        # mod: remsi has the dividend's sign; affine's result is in [0, rhs).
        rem = self.emit(arith.RemSIOp(lhs, rhs))
        negative = self.emit(arith.CmpiOp(rem, self.const(0), "slt"))
        shifted = self.emit(arith.AddiOp(rem, rhs))
        return self.emit(arith.SelectOp(negative, shifted, rem))

    def results(self, m: AffineMap, operands: Sequence[SSAValue]) -> list[SSAValue]:
        dims, syms = list(operands[: m.num_dims]), list(operands[m.num_dims:])
        return [self.expr(e, dims, syms) for e in m.results]

    def fold(self, values: list[SSAValue], op_class: type[Operation]) -> SSAValue:
        result = values[0]
        for v in values[1:]:
            result = self.emit(op_class(result, v))
        return result


def _replace(op: Operation, new: Operation) -> None:
    new.location = op.location
    new.attributes.update(op.attributes)
    Rewriter.replace_op(op, new)


def _for(op: affine.ForOp) -> None:
    em = _Emitter(op)
    lower = em.results(op.lowerBoundMap.data, op.lowerBoundOperands)
    upper = em.results(op.upperBoundMap.data, op.upperBoundOperands)
    if not lower or not upper:
        raise error_at(op, "has a bound map without results")
    lb = em.fold(lower, arith.MaxSIOp)
    ub = em.fold(upper, arith.MinSIOp)
    step = em.const(op.step.value.data)
    body = op.detach_region(op.body)
    new = scf.ForOp(lb, ub, step, list(op.inits), body)
    for old, res in zip(op.results, new.results):
        res.name_hint = old.name_hint
    _replace(op, new)


def _load(op: affine.LoadOp) -> None:
    indices = _Emitter(op).results(op.map.data, op.indices)
    new = memref.LoadOp.get(op.memref, indices)
    new.results[0].name_hint = op.results[0].name_hint
    _replace(op, new)


def _store(op: affine.StoreOp) -> None:
    indices = _Emitter(op).results(op.map.data, op.indices)
    _replace(op, memref.StoreOp.get(op.value, op.memref, indices))


def _apply(op: affine.ApplyOp) -> None:
    (value,) = _Emitter(op).results(op.map.data, op.mapOperands)
    op.result.replace_all_uses_with(value)
    Rewriter.erase_op(op)


def _min(op: affine.MinOp) -> None:
    em = _Emitter(op)
    value = em.fold(em.results(op.map.data, op.arguments), arith.MinSIOp)
    op.result.replace_all_uses_with(value)
    Rewriter.erase_op(op)


def _max(op: AffineMaxOp) -> None:
    em = _Emitter(op)
    value = em.fold(em.results(op.map.data, op.arguments), arith.MaxSIOp)
    op.result.replace_all_uses_with(value)
    Rewriter.erase_op(op)


def _parallel(op: affine.ParallelOp) -> None:
    """affine.parallel -> scf.parallel: each lower bound the max of its
    group of results, each upper bound the min of its group."""
    if op.results:
        raise error_at(op, "has reductions, which adpasses does not lower; write affine.for "
                           "with iter_args")
    em = _Emitter(op)
    lb_map, ub_map = op.lowerBoundsMap.data, op.upperBoundsMap.data
    n_lb = lb_map.num_dims + lb_map.num_symbols
    lower = em.results(lb_map, op.map_operands[:n_lb])
    upper = em.results(ub_map, op.map_operands[n_lb:])

    def grouped(values: list[SSAValue], sizes: Sequence[int], combine: type[Operation]) -> list[SSAValue]:
        out, k = [], 0
        for size in sizes:
            out.append(em.fold(values[k:k + size], combine))
            k += size
        return out

    lbs = grouped(lower, op.lowerBoundsGroups.get_values(), arith.MaxSIOp)
    ubs = grouped(upper, op.upperBoundsGroups.get_values(), arith.MinSIOp)
    steps = [em.const(s.value.data) for s in op.steps.data]
    body = op.detach_region(op.body)
    _replace(op, scf.ParallelOp(lbs, ubs, steps, body))


@dataclass
class _Condition:
    em: _Emitter

    def of(self, op: affine.IfOp) -> SSAValue:
        s = op.condition.data
        dims, syms = list(op.args[: s.num_dims]), list(op.args[s.num_dims:])
        zero = self.em.const(0)
        cond: SSAValue | None = None
        for c in s.constraints:
            diff = self.em.expr(c.lhs - c.rhs, dims, syms)
            kind = c.kind.value
            if kind == "==":
                holds = self.em.emit(arith.CmpiOp(diff, zero, "eq"))
            elif kind == ">=":
                holds = self.em.emit(arith.CmpiOp(diff, zero, "sge"))
            else:
                holds = self.em.emit(arith.CmpiOp(diff, zero, "sle"))
            cond = holds if cond is None else self.em.emit(arith.AndIOp(cond, holds))
        if cond is None:  # an empty set of constraints always holds
            cond = self.em.emit(arith.ConstantOp(IntegerAttr(1, 1)))
        return cond


def _if(op: affine.IfOp) -> None:
    cond = _Condition(_Emitter(op)).of(op)
    then_region, else_region = op.detach_region(0), op.detach_region(0)
    if not else_region.blocks and op.results:
        raise error_at(op, "has results but no else region")
    new = scf.IfOp(cond, list(op.result_types), then_region, else_region)
    for old, res in zip(op.results, new.results):
        res.name_hint = old.name_hint
    _replace(op, new)


def _yield(op: affine.YieldOp) -> None:
    if isinstance(op.parent_op(), scf.ParallelOp):  # the body of an affine.parallel
        _replace(op, scf.ReduceOp())
        return
    _replace(op, scf.YieldOp(*op.arguments))


_LOWERED = {
    affine.ForOp: _for,
    affine.LoadOp: _load,
    affine.StoreOp: _store,
    affine.ApplyOp: _apply,
    affine.MinOp: _min,
    AffineMaxOp: _max,
    affine.ParallelOp: _parallel,
    affine.IfOp: _if,
    affine.YieldOp: _yield,
}


@dataclass(frozen=True)
class LowerAffinePass(ModulePass):
    name = "ad-lower-affine"

    marked_only: bool = False
    """Lower only the functions the reverse pipeline is working on (marked
    `ad.gradient_of`: its copies of the primals), as its step does."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.marked_only:
            lower_affine(op)
            return
        for function in marked_functions(op):
            lower_affine(function)
