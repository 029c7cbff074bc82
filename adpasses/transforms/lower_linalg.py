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
its indexing maps name; except a reduction whose largest input's last
(contiguous) dimension is a parallel one (`np.sum(X, axis=0)`,
`np.max(X, axis=0)` of a row-major X): its loops follow that input's
dimensions (rows outside, columns inside: loop interchange), so the
inner loop walks memory contiguously and vectorises, the outputs
accumulating in memory. When every output's map uses only parallel
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
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, MemRefType, ModuleOp, NoneAttr
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


def _row_major_order(in_maps: list[AffineMap], inputs: list[SSAValue], parallel: list[int],
                     reduction: list[int]) -> tuple[list[int], int] | None:
    """The loop order of a reduction that walks its largest input row by
    row: that input's dimensions in its own order, when parallel-outside
    order would put a reduction loop outside the loop of the input's
    last dimension (`np.sum(X, axis=0)`: the sums of the columns,
    accumulated a row at a time), and that input's index. None: keep
    parallel outside. Whether the last dimension is the contiguous one is
    the layout's (`_Nest.walks_rows`)."""
    if not reduction:
        return None
    ranked = [(len(m.results), k) for k, (m, v) in enumerate(zip(in_maps, inputs))
              if isinstance(v.type, MemRefType)]
    if not ranked:
        return None
    k_input = max(ranked, key=lambda rk: (rk[0], -rk[1]))[1]  # the first of the highest rank
    amap = in_maps[k_input]
    dims = [e.position for e in amap.results if isinstance(e, AffineDimExpr)]
    if len(dims) != len(amap.results) or sorted(dims) != sorted(parallel + reduction):
        return None  # not a permutation of the loops
    if dims[-1] not in parallel or dims == parallel + reduction:
        return None  # the reduction already runs along the rows (or is innermost anyway)
    return dims, k_input


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
        n_in = len(op.inputs)
        out_maps = maps[n_in:]
        default = parallel + reduction
        carried = bool(reduction) and all(
            isinstance(e, AffineConstantExpr) or (isinstance(e, AffineDimExpr) and e.position in parallel)
            for m in out_maps for e in m.results)
        block = op.body.block

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

        def nest(order: list[int], carried: bool) -> None:
            def by_dim(ivs_in_order: list[SSAValue]) -> list[SSAValue]:
                ivs = [None] * len(kinds)
                for d, iv in zip(order, ivs_in_order):
                    ivs[d] = iv
                return ivs  # type: ignore[return-value]

            if not carried:
                def plain(ivs_in_order: list[SSAValue], _: list[SSAValue]) -> list[SSAValue]:
                    ivs = by_dim(ivs_in_order)
                    store(element(ivs, None), ivs)
                    return []

                self.loops([bounds[d] for d in order], [], plain)
                return

            def outer(outer_ivs: list[SSAValue], _: list[SSAValue]) -> list[SSAValue]:
                partial = by_dim(outer_ivs + [None] * len(reduction))  # type: ignore[list-item]
                initial = [self.emit(memref.LoadOp.get(o, self.indices(m, partial))).results[0]
                           for o, m in zip(op.outputs, out_maps)]

                def inner(inner_ivs: list[SSAValue], acc: list[SSAValue]) -> list[SSAValue]:
                    return element(by_dim(outer_ivs + inner_ivs), acc)

                store(self.loops([bounds[d] for d in reduction], initial, inner), partial)
                return []

            self.loops([bounds[d] for d in parallel], [], outer)

        row = _row_major_order(maps[:n_in], list(op.inputs), parallel, reduction)
        if row is None:
            nest(default, carried)
        else:
            order, k = row
            rowwise = self.walks_rows(op.inputs[k], maps[k], order)
            if rowwise is True:
                nest(order, False)
            elif rowwise is False:
                nest(default, carried)
            else:  # strides known only when the call runs: both nests, chosen then
                self.versioned(rowwise, lambda: nest(order, False), lambda: nest(default, carried))
        Rewriter.erase_op(op)

    def walks_rows(self, value: SSAValue, amap: AffineMap, order: list[int]) -> bool | SSAValue:
        """Whether the loop `order` (the dimensions of `value` in order)
        walks `value`'s memory in its order: its last dimension's stride
        (absolute) no larger than that of every dimension before it. True
        for the identity layout (row-major); decided from static strides;
        else an i1 computed from the strides when the call runs."""
        mtype = value.type
        assert isinstance(mtype, MemRefType)
        rank = len(mtype.get_shape())
        if rank < 2 or isinstance(mtype.layout, NoneAttr):
            return True
        strides = mtype.layout.get_strides()
        if strides is not None and all(st is not None for st in strides):
            return all(abs(strides[-1]) <= abs(st) for st in strides[:-1])
        meta = self.emit(memref.ExtractStridedMetaDataOp(value))
        dynamic = list(meta.results[2 + rank:2 + 2 * rank])
        zero = self.index(0)
        result: SSAValue | None = None
        for k in range(rank - 1):
            a, b = (self.magnitude(dynamic[i], zero) for i in (rank - 1, k))
            ok = self.emit(arith.CmpiOp(a, b, "ule")).results[0]
            result = ok if result is None else self.emit(arith.AndIOp(result, ok)).results[0]
        assert result is not None
        return result

    def magnitude(self, v: SSAValue, zero: SSAValue) -> SSAValue:
        negative = self.emit(arith.CmpiOp(v, zero, "slt")).results[0]
        return self.emit(arith.SelectOp(negative, self.emit(arith.SubiOp(zero, v)).results[0], v)).results[0]

    def versioned(self, cond: SSAValue, then, otherwise) -> None:  # type: ignore[no-untyped-def]
        """`scf.if cond { then() } else { otherwise() }`, each emitting ops."""
        branches = []
        for emit_branch in (then, otherwise):
            blk = Block()
            saved = self.builder.insertion_point
            self.builder.insertion_point = InsertPoint.at_end(blk)
            try:
                emit_branch()
                self.emit(scf.YieldOp())
            finally:
                self.builder.insertion_point = saved
            branches.append(Region(blk))
        self.emit(scf.IfOp(cond, [], branches[0], branches[1]))

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
