"""`ad-expand-upstream-ops`: upstream MLIR ops rewritten as the ops the
reverse pass and the LLVM lowering know.

- `math.sincos %x` -> `math.sin %x`, `math.cos %x`;
- `math.ipowi %x, %n` -> exponentiation by squaring (`scf.while`); for
  `%n < 0`, `1 / x^-n` in integer division (`1`, `+-1` or `0`; division
  by zero for `x = 0`, as upstream's expansion);
- `scf.parallel` -> a nest of `scf.for` (a sequential order is one of the
  orders a parallel loop allows); its `scf.reduce` regions combine each
  value into loop-carried accumulators;
- `linalg.matmul` on memrefs -> checked loops (`ad-lower-matmul`,
  adpasses/transforms/lower_matmul.py; BLAS only on the LLVM path), except,
  in the functions being differentiated (`marked-only`), the products the
  reverse sweep can differentiate as products (their operands are arrays
  it can name: `reverse/rules/linalg.py`) unless the gradient is asked
  with `strong_zero` (its scalar rules guard each term); forward mode keeps them all
  (`forward/rules/linalg.py`); they are lowered after differentiation;
- `func.call_indirect` of a `func.constant` -> `func.call` of that function
  (`resolve_indirect_calls`, also run by `ad-inline-calls` before
  inlining). A call of any other function value is an error at its
  location: neither differentiated nor lowered (call the function by name).

A step of the reverse pipeline (`marked-only=true`: the copies being
differentiated) after `ad-lower-affine`, and run on the whole module before
the LLVM lowering (`without_upstream_only_ops`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, math, scf
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from adpasses.core.diagnostics import error_at
from adpasses.dialects.upstream import CallIndirectOp, FuncConstantOp, SinCosOp
from adpasses.transforms.gradient_marks import marked_functions
from adpasses.transforms.lower_affine import lower_affine
from adpasses.transforms.lower_linalg import lower_linalg
from adpasses.transforms.lower_matmul import lower_matmuls

_EXPANDED = (SinCosOp, math.IPowIOp, scf.ParallelOp, CallIndirectOp, linalg.MatmulOp)


def has_upstream_only_ops(root: Operation) -> bool:
    return any(isinstance(op, _EXPANDED) for op in root.walk())


def without_upstream_only_ops(module: ModuleOp, blas: bool = False) -> ModuleOp:
    """`module` itself if it has no affine or linalg op and none of the ops above,
    else a rewritten copy (the caller's module is left as it was).
    `blas`: matrix products may call BLAS (`ad-lower-matmul{blas=true}`;
    the JIT sets it where adpasses.native.blas found one). The products'
    loop nests are unchecked (their size matches bound every index;
    nothing runs after this but the LLVM lowering)."""
    if not any(op.dialect_name() in ("affine", "linalg") or isinstance(op, _EXPANDED) for op in module.walk()):
        return module
    copy = module.clone()
    lower_affine(copy)
    lower_linalg(copy)
    lower_matmuls(copy, blas, unchecked=True)
    expand_upstream_ops(copy)
    return copy


def separate_outputs(function: func.FuncOp) -> set[Operation]:
    """The matrix products of `function` whose output shares no memory
    with their inputs (alias analysis): those the derivative rules of the
    product may keep; `C += A @ B` with a shared one reads what it wrote,
    and only its loop nest's rules follow that."""
    products = [o for o in function.walk() if isinstance(o, linalg.MatmulOp)]
    if not products:
        return set()
    from adpasses.analysis.alias import AliasAnalysis, AliasKind

    alias = AliasAnalysis(function)
    return {o for o in products if len(o.outputs) == 1 and all(
        alias.alias(o.outputs[0], v).kind is AliasKind.NO_ALIAS for v in o.inputs)}


def resolve_indirect_calls(root: Operation) -> None:
    """`func.call_indirect` of a `func.constant` becomes `func.call`."""
    for op in [op for op in root.walk() if isinstance(op, CallIndirectOp)]:
        callee = op.callee.owner
        if isinstance(callee, FuncConstantOp):
            call = func.CallOp(callee.value, list(op.callee_operands), [r.type for r in op.results])
            call.location = op.location
            Rewriter.replace_op(op, call)
            if not callee.result.uses:
                Rewriter.erase_op(callee)


def expand_upstream_ops(root: Operation, keep_matmul: Callable[[linalg.MatmulOp], bool] | None = None) -> None:
    """`keep_matmul(op)`: a matrix product that stays (a derivative rule of
    its own differentiates it); the others become checked loops."""
    resolve_indirect_calls(root)
    lower_matmuls(root, keep=keep_matmul)
    for op in list(root.walk()):
        if isinstance(op, CallIndirectOp):
            raise error_at(
                op,
                "calls a function value that is not a func.constant: adpasses can neither "
                "differentiate nor compile an indirect call; call the function by name with func.call",
            )
        if isinstance(op, SinCosOp):
            _expand_sincos(op)
        elif isinstance(op, math.IPowIOp):
            _expand_ipowi(op)
    # Outermost first: an inner scf.parallel moves with its parent's body.
    for op in [op for op in root.walk() if isinstance(op, scf.ParallelOp)]:
        _expand_parallel(op)


def _located(op: Operation, like: Operation) -> Operation:
    op.location = like.location
    return op


def _expand_sincos(op: SinCosOp) -> None:
    sin = _located(math.SinOp(op.operand, op.fastmath), op)
    cos = _located(math.CosOp(op.operand, op.fastmath), op)
    Rewriter.replace_op(op, [sin, cos], [sin.results[0], cos.results[0]])


def _expand_ipowi(op: math.IPowIOp) -> None:
    """x^n by squaring; n < 0: (1 / x) ^ (-n) in integers, i.e. q = 1 / x
    (+-1, 0, or division by zero) and q or q * q by the parity of n."""
    t = op.result.type
    new: list[Operation] = []

    def add(o: Operation) -> SSAValue:
        new.append(_located(o, op))
        return o.results[0]

    x, n = op.lhs, op.rhs
    zero = add(arith.ConstantOp(IntegerAttr(0, t)))
    one = add(arith.ConstantOp(IntegerAttr(1, t)))
    negative = add(arith.CmpiOp(n, zero, "slt"))
    # while e > 0: r *= b if e odd; b *= b; e >>= 1   (e = n, or 0 when n < 0)
    e0 = add(arith.SelectOp(negative, zero, n))
    before = Block(arg_types=[t, t, t])
    r, b, e = before.args
    go = arith.CmpiOp(e, zero, "sgt")
    before.add_ops([go, scf.ConditionOp(go, r, b, e)])
    after = Block(arg_types=[t, t, t])
    r, b, e = after.args
    bit = arith.AndIOp(e, one)
    odd = arith.CmpiOp(bit, one, "eq")
    times = arith.MuliOp(r, b)
    r2 = arith.SelectOp(odd, times, r)
    b2 = arith.MuliOp(b, b)
    e2 = arith.ShRSIOp(e, one)
    after.add_ops([bit, odd, times, r2, b2, e2, scf.YieldOp(r2, b2, e2)])
    loop = _located(scf.WhileOp([one, x, e0], [t, t, t], Region(before), Region(after)), op)
    new.append(loop)
    then_block = Block()
    q = arith.DivSIOp(one, x)
    q2 = arith.MuliOp(q, q)
    n_bit = arith.AndIOp(n, one)
    n_odd = arith.CmpiOp(n_bit, one, "eq")
    inverse = arith.SelectOp(n_odd, q, q2)
    then_block.add_ops([_located(o, op) for o in (q, q2, n_bit, n_odd, inverse)] + [scf.YieldOp(inverse)])
    else_block = Block()
    else_block.add_op(scf.YieldOp(loop.results[0]))
    result = add(scf.IfOp(negative, [t], Region(then_block), Region(else_block)))
    Rewriter.replace_op(op, new, [result])


def _expand_parallel(op: scf.ParallelOp) -> None:
    """scf.parallel -> scf.for nest; reductions become iter_args of every
    loop of the nest, combined by the scf.reduce regions (lhs: the
    accumulator, rhs: this iteration's value)."""
    if not op.lowerBound:
        raise error_at(op, "has no induction variable; write its body without the loop")
    body = op.body.block
    reduce = body.last_op
    assert isinstance(reduce, scf.ReduceOp)
    init = list(op.initVals)
    types = [v.type for v in init]
    ivs: list[SSAValue] = []
    loops: list[scf.ForOp] = []
    accs: list[SSAValue] = init
    insert_at = InsertPoint.before(op)
    for lb, ub, step in zip(op.lowerBound, op.upperBound, op.step):
        block = Block(arg_types=[lb.type, *types])
        loop = _located(scf.ForOp(lb, ub, step, accs, Region(block)), op)
        Rewriter.insert_op(loop, insert_at)
        loops.append(loop)
        ivs.append(block.args[0])
        accs = list(block.args[1:])
        insert_at = InsertPoint.at_end(block)
    inner = loops[-1].body.block
    for old, iv in zip(body.args, ivs):
        old.replace_all_uses_with(iv)
    for inner_op in list(body.ops):
        if inner_op is reduce:
            continue
        inner_op.detach()
        inner.add_op(inner_op)
    combined: list[SSAValue] = []
    for acc, value, region in zip(accs, reduce.args, reduce.reductions):
        rblock = region.block
        terminator = rblock.last_op
        assert terminator is not None
        rblock.args[0].replace_all_uses_with(acc)
        rblock.args[1].replace_all_uses_with(value)
        for rop in list(rblock.ops):
            if rop is terminator:
                continue
            rop.detach()
            inner.add_op(rop)
        combined.append(terminator.operands[0])
    inner.add_op(scf.YieldOp(*combined))
    for outer, nested in zip(loops[:-1], loops[1:]):
        outer.body.block.add_op(scf.YieldOp(*nested.results))
    Rewriter.replace_op(op, [], list(loops[0].results))


@dataclass(frozen=True)
class ExpandUpstreamOpsPass(ModulePass):
    """With `marked-only`, only the functions being differentiated (the
    reverse pipeline's step)."""

    name = "ad-expand-upstream-ops"

    marked_only: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.marked_only:
            from adpasses.reverse.rules.linalg import matmul_has_structured_reverse

            from adpasses.transforms.gradient_marks import GradientRequest

            for f in marked_functions(op):
                request = GradientRequest.of_function(f)
                if request is not None and request.strong_zero:
                    # Strong zero guards each product term's adjoint (0 * inf
                    # is 0): the loop nest's scalar rules do, BLAS would not.
                    expand_upstream_ops(f, keep_matmul=lambda m: False)
                    continue
                separate = separate_outputs(f)
                expand_upstream_ops(f, keep_matmul=lambda m, s=separate: matmul_has_structured_reverse(m, m in s))
        else:
            expand_upstream_ops(op)
