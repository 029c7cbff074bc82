"""`ad-lower-matmul`: `linalg.matmul` on memrefs as a loop nest, or a BLAS
call with the loop nest as its fallback.

`linalg.matmul ins(%A, %B) outs(%C)` on memrefs adds `A @ B` to `C`
(A: m x k, B: k x n, C: m x n). It becomes

    ad.size_match %A[1], %B[0]      // k of A == k of B, else ValueError
    ad.size_match %A[0], %C[0]      // m
    ad.size_match %B[1], %C[1]      // n
    %done = ad.gemm %A, %B, %C      // with blas=true only
    scf.if !%done {
      for i < m: for p < k: a = A[i, p]; for j < n: C[i, j] += a * B[p, j]
    }

The sizes are checked first, always (`boundscheck=False` too): the loops
and BLAS then never read past an operand, and a product of mismatched
shapes is a ValueError naming them, at the matmul's location, never a
partial sum. The loop nest's innermost loop runs along rows of B and C, so
LLVM vectorises it (unit stride for row-major operands), and each C[i, j]
receives its terms in the order p = 0, 1, ... as linalg's definition
says. `ad.gemm` (lowering/blas.py) calls BLAS only above a size threshold
and for layouts BLAS takes; it answers false otherwise and the loops run.

Where it runs: before the LLVM lowering (`blas` set from
`adpasses.native.blas.available()` by the JIT), on the primal's products
and on those the derivative rules of the product emit
(`reverse/rules/linalg.py`: dA += dC @ B^T, dB += A^T @ dC;
`forward/rules/linalg.py`: dC += dA @ B + A @ dB); and before
differentiation (`expand_upstream_ops`) on the products the reverse sweep
cannot differentiate as products (an operand allocated inside a loop or a
branch), whose loops the scalar rules then differentiate. Every op made
has the matmul's location.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import Float32Type, Float64Type, IndexType, IntegerAttr, MemRefType, ModuleOp, UnitAttr
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from adpasses.core.diagnostics import error_at
from adpasses.core.types import is_float_type
from adpasses.dialects.ad import UNCHECKED_ATTR, GemmOp, SizeMatchOp
from adpasses.transforms.gradient_marks import marked_functions

BLAS_TYPES = (Float64Type, Float32Type)


def has_matmuls(root: Operation) -> bool:
    return any(isinstance(op, linalg.MatmulOp) for op in root.walk())


def lower_matmuls(root: Operation, blas: bool = False,
                  keep: Callable[[linalg.MatmulOp], bool] | None = None,
                  unchecked: bool = False) -> None:
    """Every `linalg.matmul` in `root` as the ops above (but those for
    which `keep(op)` is true). `unchecked`: the loop nest's loads and
    stores are `ad.unchecked` (see `_Emitter.loop_nest`); only where no
    transformation follows that could separate them from their size
    matches (right before the LLVM lowering)."""
    for op in [op for op in root.walk() if isinstance(op, linalg.MatmulOp)]:
        if keep is None or not keep(op):
            _lower(op, blas, unchecked)


def _operands(op: linalg.MatmulOp) -> tuple[SSAValue, SSAValue, SSAValue]:
    if len(op.inputs) != 2 or len(op.outputs) != 1 or op.results:
        raise error_at(op, "is supported on memrefs only (two inputs, one output, no results): "
                           "write `linalg.matmul ins(%A, %B : ...) outs(%C : ...)` with memref operands")
    a, b, c = op.inputs[0], op.inputs[1], op.outputs[0]
    for v in (a, b, c):
        t = v.type
        if not isinstance(t, MemRefType) or len(t.get_shape()) != 2 or not is_float_type(t.element_type):
            raise error_at(op, f"operand of type {t}: adpasses lowers matrix products of 2-d float "
                               "memrefs")
    if not a.type.element_type == b.type.element_type == c.type.element_type:
        raise error_at(op, "operands of different element types: convert them to one float type first")
    return a, b, c


def _lower(op: linalg.MatmulOp, blas: bool, unchecked: bool) -> None:
    a, b, c = _operands(op)
    emit = _Emitter(Builder(InsertPoint.before(op)), op, unchecked)
    what = "linalg.matmul (C += A @ B)"
    emit.op(SizeMatchOp(a, 1, b, 0, what))
    emit.op(SizeMatchOp(a, 0, c, 0, what))
    emit.op(SizeMatchOp(b, 1, c, 1, what))
    if blas and isinstance(c.type.element_type, BLAS_TYPES):
        done = emit.op(GemmOp(a, b, c)).results[0]
        true = emit.op(arith.ConstantOp(IntegerAttr(1, 1))).results[0]
        todo = emit.op(arith.XOrIOp(done, true)).results[0]
        body = Block()
        emit.op(scf.IfOp(todo, [], Region([body]), Region([Block()])))
        _Emitter(Builder(InsertPoint.at_end(body)), op, unchecked).loop_nest(a, b, c)
        _Emitter(Builder(InsertPoint.at_end(body)), op).op(scf.YieldOp())
        else_block = body.parent_op().regions[1].blocks[0]
        _Emitter(Builder(InsertPoint.at_end(else_block)), op).op(scf.YieldOp())
    else:
        emit.loop_nest(a, b, c)
    Rewriter.erase_op(op)


@dataclass
class _Emitter:
    builder: Builder
    anchor: Operation
    unchecked: bool = False

    def op(self, new: Operation) -> Operation:
        new.location = self.anchor.location
        return self.builder.insert(new)

    def index(self, n: int) -> SSAValue:
        return self.op(arith.ConstantOp(IntegerAttr(n, IndexType()))).results[0]

    def loop(self, bounds: tuple[SSAValue, SSAValue, SSAValue], body) -> None:  # type: ignore[no-untyped-def]
        block = Block(arg_types=[IndexType()])
        self.op(scf.ForOp(*bounds, [], Region([block])))
        inner = _Emitter(Builder(InsertPoint.at_end(block)), self.anchor, self.unchecked)
        body(inner, block.args[0])
        inner.op(scf.YieldOp())

    def access(self, new: Operation) -> Operation:
        """A load or store of the loop nest. Every index is in bounds by
        construction: i < dim(A, 0) = dim(C, 0), p < dim(A, 1) = dim(B, 0),
        j < dim(B, 1) = dim(C, 1), the equalities being the size matches
        emitted before the nest (with bounds checks off too). Unchecked,
        the nest has no stop inside: each bounds check was a branch out of
        three loops that LLVM's O3 loop unswitching cloned the nests over
        (a forward-over-reverse Hessian with 84 products did not finish
        compiling)."""
        if self.unchecked:
            new.attributes[UNCHECKED_ATTR] = UnitAttr()
        return self.op(new)

    def loop_nest(self, a: SSAValue, b: SSAValue, c: SSAValue) -> None:
        zero, one = self.index(0), self.index(1)
        m, k, n = ((zero, self.op(memref.DimOp(v, d)).results[0], one)
                   for v, d in ((a, zero), (a, one), (b, one)))

        def over_i(e: _Emitter, i: SSAValue) -> None:
            def over_p(e: _Emitter, p: SSAValue) -> None:
                a_ip = e.access(memref.LoadOp.get(a, [i, p])).results[0]

                def over_j(e: _Emitter, j: SSAValue) -> None:
                    c_ij = e.access(memref.LoadOp.get(c, [i, j])).results[0]
                    b_pj = e.access(memref.LoadOp.get(b, [p, j])).results[0]
                    term = e.op(arith.MulfOp(a_ip, b_pj)).results[0]
                    e.access(memref.StoreOp.get(e.op(arith.AddfOp(c_ij, term)).results[0], c, [i, j]))

                e.loop(n, over_j)

            e.loop(k, over_p)

        self.loop(m, over_i)


@dataclass(frozen=True)
class LowerMatmulPass(ModulePass):
    """`linalg.matmul` as checked loops (`blas=true`: BLAS above a size
    threshold, loops otherwise); `marked-only`: only in functions marked
    `ad.gradient_of`; `unchecked`: the loop nest's accesses are
    `ad.unchecked` (what the JIT lowers: no pass after it)."""

    name = "ad-lower-matmul"

    blas: bool = False
    marked_only: bool = False
    unchecked: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        roots = marked_functions(op) if self.marked_only else [op]
        for root in roots:
            lower_matmuls(root, self.blas, unchecked=self.unchecked)
