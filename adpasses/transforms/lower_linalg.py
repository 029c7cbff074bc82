"""`ad-lower-linalg`: `linalg.generic` and `linalg.fill` on memrefs as
`scf.for` loop nests of `memref.load` / `memref.store`, so that the
reverse and forward engines and the LLVM lowering see only the ops they
know.

The frontend writes whole-array numpy expressions as these ops (a chain
of elementwise operators is one `linalg.generic`; a reduction is a
generic with `reduction` iterators); `ad-opt` users see them until this
pass runs: a step of the reverse pipeline (`marked-only=true`, after
`ad-lower-affine`), of forward mode, and of the LLVM path
(`without_upstream_only_ops`).

A generic becomes one loop per iterator, the `parallel` ones outside the
`reduction` ones, each from 0 to the size of the first operand dimension
its indexing maps name. When every output's map uses only parallel
dimensions (a sum, a row sum), the outputs are loaded once before the
reduction loops, carried through them as `iter_args` and stored after:
the accumulator is a loop-carried value, which LLVM keeps in a register
and the reverse pass differentiates without a tape of stores. Otherwise
each iteration loads the outputs it reads and stores what the body
yields. Map results are dimensions or constants; `linalg.index` becomes
the loop variable of its dimension. Every op made carries the location
of the linalg op (the Python line of the array expression).

(The derivative of a `linalg.generic` as a generic of its own is the
long-term design; until then, differentiation runs on these loops.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from adpasses.core.diagnostics import error_at
from adpasses.transforms.gradient_marks import marked_functions

LOWERED = (linalg.GenericOp, linalg.FillOp)


def has_linalg_ops(root: Operation) -> bool:
    return any(isinstance(op, LOWERED) for op in root.walk())


def lower_linalg(root: Operation) -> None:
    for op in [op for op in root.walk() if op.dialect_name() == "linalg" and not _in_linalg(op)]:
        if isinstance(op, linalg.GenericOp):
            _Nest(op).lower_generic()
        elif isinstance(op, linalg.FillOp):
            _Nest(op).lower_fill()
        elif isinstance(op, linalg.MatmulOp):
            continue  # ad-lower-matmul's (adpasses/transforms/lower_matmul.py)
        else:
            raise error_at(op, "is not supported: adpasses lowers linalg.generic, linalg.fill and "
                               "linalg.matmul on memrefs; write other linalg ops as linalg.generic")


def _in_linalg(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if parent.dialect_name() == "linalg":
            return True
        parent = parent.parent_op()
    return False


@dataclass
class _Nest:
    op: Operation

    def __post_init__(self) -> None:
        self.builder = Builder(InsertPoint.before(self.op))
        for v in self.op.operands:
            if not isinstance(v.type, MemRefType) and v in getattr(self.op, "outputs", ()):
                raise error_at(self.op, "has a tensor output: adpasses lowers linalg ops on memrefs only")

    def emit(self, new: Operation) -> Operation:
        new.location = self.op.location
        return self.builder.insert(new)

    def index(self, n: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(n, IndexType()))).results[0]

    def size(self, value: SSAValue, k: int) -> SSAValue:
        assert isinstance(value.type, MemRefType)
        static = value.type.get_shape()[k]
        if static != DYNAMIC_INDEX:
            return self.index(static)
        return self.emit(memref.DimOp(value, self.index(k))).results[0]

    def indices(self, amap: AffineMap, ivs: Sequence[SSAValue]) -> list[SSAValue]:
        out = []
        for e in amap.results:
            if isinstance(e, AffineDimExpr):
                out.append(ivs[e.position])
            elif isinstance(e, AffineConstantExpr):
                out.append(self.index(e.value))
            else:
                raise error_at(self.op, f"has an indexing map result {e} that is neither a dimension nor "
                                        "a constant: adpasses lowers only such maps")
        return out

    # -- linalg.fill ---------------------------------------------------------

    def lower_fill(self) -> None:
        op = self.op
        assert isinstance(op, linalg.FillOp)
        value, out = op.inputs[0], op.outputs[0]
        assert isinstance(out.type, MemRefType)
        bounds = [self.size(out, k) for k in range(len(out.type.get_shape()))]

        def body(ivs: list[SSAValue], carried: list[SSAValue]) -> list[SSAValue]:
            self.emit(memref.StoreOp.get(value, out, ivs))
            return []

        self.loops(bounds, [], body)
        Rewriter.erase_op(op)

    # -- linalg.generic --------------------------------------------------------

    def lower_generic(self) -> None:
        op = self.op
        assert isinstance(op, linalg.GenericOp)
        maps = [m.data for m in op.indexing_maps.data]
        kinds = [t.data.value for t in op.iterator_types.data]
        operands = list(op.inputs) + list(op.outputs)
        bounds = [self.bound(d, maps, operands) for d in range(len(kinds))]
        parallel = [d for d, k in enumerate(kinds) if k == "parallel"]
        reduction = [d for d, k in enumerate(kinds) if k != "parallel"]
        order = parallel + reduction
        n_in = len(op.inputs)
        out_maps = maps[n_in:]
        carried = bool(reduction) and all(
            isinstance(e, AffineConstantExpr) or (isinstance(e, AffineDimExpr) and e.position in parallel)
            for m in out_maps for e in m.results)
        block = op.body.block

        def by_dim(ivs_in_order: list[SSAValue]) -> list[SSAValue]:
            ivs = [None] * len(kinds)
            for d, iv in zip(order, ivs_in_order):
                ivs[d] = iv
            return ivs  # type: ignore[return-value]

        def element(ivs: list[SSAValue], outs: list[SSAValue] | None) -> list[SSAValue]:
            """The body at one point: the operands' elements in, the yielded values out."""
            vmap: dict[SSAValue, SSAValue] = {}
            for k, arg in enumerate(block.args):
                if not arg.uses:
                    continue
                if k >= n_in and outs is not None:
                    vmap[arg] = outs[k - n_in]
                elif isinstance(operands[k].type, MemRefType):
                    vmap[arg] = self.emit(memref.LoadOp.get(operands[k], self.indices(maps[k], ivs))).results[0]
                else:
                    vmap[arg] = operands[k]
            for inner in block.ops:
                if isinstance(inner, linalg.YieldOp):
                    return [vmap.get(v, v) for v in inner.operands]
                if isinstance(inner, linalg.IndexOp):
                    vmap[inner.result] = ivs[inner.dim.value.data]
                    continue
                self.emit(inner.clone(value_mapper=vmap))
            raise error_at(op, "has a body without linalg.yield")

        def store(values: list[SSAValue], ivs: list[SSAValue]) -> None:
            for k, v in enumerate(values):
                self.emit(memref.StoreOp.get(v, op.outputs[k], self.indices(out_maps[k], ivs)))

        outer_bounds = [bounds[d] for d in parallel]
        inner_bounds = [bounds[d] for d in reduction]
        if not carried:
            def plain(ivs_in_order: list[SSAValue], _: list[SSAValue]) -> list[SSAValue]:
                ivs = by_dim(ivs_in_order)
                store(element(ivs, None), ivs)
                return []

            self.loops(outer_bounds + inner_bounds, [], plain)
        else:
            def outer(outer_ivs: list[SSAValue], _: list[SSAValue]) -> list[SSAValue]:
                partial = by_dim(outer_ivs + [None] * len(reduction))  # type: ignore[list-item]
                initial = [self.emit(memref.LoadOp.get(o, self.indices(m, partial))).results[0]
                           for o, m in zip(op.outputs, out_maps)]

                def inner(inner_ivs: list[SSAValue], acc: list[SSAValue]) -> list[SSAValue]:
                    return element(by_dim(outer_ivs + inner_ivs), acc)

                store(self.loops(inner_bounds, initial, inner), partial)
                return []

            self.loops(outer_bounds, [], outer)
        Rewriter.erase_op(op)

    def bound(self, d: int, maps: list[AffineMap], operands: list[SSAValue]) -> SSAValue:
        for m, v in zip(maps, operands):
            if not isinstance(v.type, MemRefType):
                continue
            for k, e in enumerate(m.results):
                if isinstance(e, AffineDimExpr) and e.position == d:
                    return self.size(v, k)
        raise error_at(self.op, f"names loop dimension d{d} in no operand's indexing map: its trip count "
                                "is unknown")

    def loops(self, bounds: list[SSAValue], carried: list[SSAValue], body) -> list[SSAValue]:  # type: ignore[no-untyped-def]
        """A nest of scf.for from 0 to each bound, carrying `carried`;
        `body(ivs, carried)` emits the innermost body and returns the
        values carried to the next iteration. Returns the nest's results."""
        if not bounds:
            return body([], carried)
        zero, one = self.index(0), self.index(1)
        types = [v.type for v in carried]

        def nest(depth: int, ivs: list[SSAValue], values: list[SSAValue]) -> list[SSAValue]:
            blk = Block(arg_types=[IndexType(), *types])
            loop = self.emit(scf.ForOp(zero, bounds[depth], one, values, Region(blk)))
            saved = self.builder.insertion_point
            self.builder.insertion_point = InsertPoint.at_end(blk)
            try:
                inner_ivs = [*ivs, blk.args[0]]
                if depth + 1 == len(bounds):
                    results = body(inner_ivs, list(blk.args[1:]))
                else:
                    results = nest(depth + 1, inner_ivs, list(blk.args[1:]))
                self.emit(scf.YieldOp(*results))
            finally:
                self.builder.insertion_point = saved
            return list(loop.results)

        return nest(0, [], carried)


@dataclass(frozen=True)
class LowerLinalgPass(ModulePass):
    """With `marked-only`, only the functions being differentiated (the
    reverse pipeline's step)."""

    name = "ad-lower-linalg"

    marked_only: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.marked_only:
            for f in marked_functions(op):
                lower_linalg(f)
        else:
            lower_linalg(op)
