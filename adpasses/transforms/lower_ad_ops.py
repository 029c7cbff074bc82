"""`ad-lower-ad-ops` (`ad-opt --lower-ad-ops`): the `ad` ops left in a
differentiated module rewritten as func/arith/memref/scf/cf, so that
upstream MLIR (`mlir-opt`) reads, verifies and lowers our gradients.

- `ad.shadow_check %x, %dx`: per dimension whose sizes are not statically
  equal, `memref.dim` of both, `arith.cmpi eq` and `cf.assert` with the
  message adpasses raises (a statically different size asserts false);
- `ad.keep`: removed (it only kept values alive through our own passes);
- `ad.broadcast %a, %b`: `cf.assert` (equal, or one is 1) and `arith.select`;
- `ad.raise_if %bad {exception, message}`: `cf.assert` of the negated
  condition, message `Exception: message` (placeholders of run-time values
  stay as written: upstream's assert carries text only);
- tapes with a capacity: memref buffers, as `ad-lower-tapes` makes them;
- tapes without one (those of `scf.while` loops, which grow): calls to a
  small runtime, declared in the module (`T` is the element type: f64, f32,
  i64, index, ...; the handle is an `index`):

      func.func private @adpasses_tape_create_T() -> index
      func.func private @adpasses_tape_push_T(index, T)
      func.func private @adpasses_tape_pop_T(index) -> T
      func.func private @adpasses_tape_free_T(index)

  (a C implementation: docs/mlir_interop.md).

Any other `ad` op (an `ad.autodiff` or `ad.fwddiff` not yet differentiated)
is an error at its location: run `--reverse` / `--forward` first.
Discardable `ad.*` attributes (`ad.unchecked`, `ad.twin_id`, ...) stay:
upstream MLIR keeps attributes of unknown dialects as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, cf, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, MemRefType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from adpasses.core.diagnostics import error_at
from adpasses.dialects.ad import (BroadcastOp, KeepOp, RaiseIfOp, ShadowCheckOp, TapeCreateOp, TapeFreeOp, TapePopOp, TapePushOp,
                                  TapeReserveOp, TapeType)
from adpasses.transforms.lower_tapes import lower_tapes

RUNTIME_PREFIX = "adpasses_tape_"


def lower_ad_ops(module: ModuleOp) -> None:
    lower_tapes(module)  # tapes of known capacity: memref buffers
    runtime = _Runtime(module)
    for op in list(module.walk()):
        if isinstance(op, ShadowCheckOp):
            _lower_shadow_check(op)
        elif isinstance(op, KeepOp):
            Rewriter.erase_op(op)
        elif isinstance(op, BroadcastOp):
            _lower_broadcast(op)
        elif isinstance(op, RaiseIfOp):
            _lower_raise_if(op)
        elif isinstance(op, TapeCreateOp):
            runtime.lower_tape(op)
    for op in module.walk():
        if op.dialect_name() == "ad":
            raise error_at(op, "cannot be lowered to upstream MLIR ops before it is differentiated: "
                               "run ad-opt --reverse (or --forward) with --lower-ad-ops")


def _emit(op: Operation, at: Operation) -> SSAValue | None:
    op.location = at.location
    Rewriter.insert_op(op, InsertPoint.before(at))
    return op.results[0] if op.results else None


def _lower_shadow_check(op: ShadowCheckOp) -> None:
    ptype, stype = op.primal.type, op.shadow.type
    assert isinstance(ptype, MemRefType) and isinstance(stype, MemRefType)
    names = (f"%{op.shadow.name_hint}" if op.shadow.name_hint else "the shadow",
             f"%{op.primal.name_hint}" if op.primal.name_hint else "its primal")
    for d, (p, s) in enumerate(zip(ptype.get_shape(), stype.get_shape())):
        if p == s and p != DYNAMIC_INDEX:
            continue
        message = (f"shadow {names[0]} differs in size from {names[1]} in dimension {d}: a shadow "
                   "must have exactly its primal's shape")
        if p != DYNAMIC_INDEX and s != DYNAMIC_INDEX:  # statically different
            ok = _emit(arith.ConstantOp(IntegerAttr(0, 1)), op)
        else:
            dim = _emit(arith.ConstantOp(IntegerAttr(d, IndexType())), op)
            psize = _emit(memref.DimOp(op.primal, dim), op)
            ssize = _emit(memref.DimOp(op.shadow, dim), op)
            ok = _emit(arith.CmpiOp(psize, ssize, "eq"), op)
        assert ok is not None
        _emit(cf.AssertOp(ok, StringAttr(message)), op)
    Rewriter.erase_op(op)


def _lower_raise_if(op: RaiseIfOp) -> None:
    true = _emit(arith.ConstantOp(IntegerAttr(1, 1)), op)
    ok = _emit(arith.XOrIOp(op.cond, true), op)
    text = op.message.data.replace("{{", "{").replace("}}", "}")
    _emit(cf.AssertOp(ok, StringAttr(f"{op.exception.data}: {text}")), op)
    Rewriter.erase_op(op)


def _lower_broadcast(op: BroadcastOp) -> None:
    """`cf.assert` that the sizes broadcast (equal, or one of them 1, as
    the op's mode asks), then the size (`arith.select`)."""
    one = _emit(arith.ConstantOp(IntegerAttr(1, IndexType())), op)
    equal = _emit(arith.CmpiOp(op.lhs, op.rhs, "eq"), op)
    a_is_one = _emit(arith.CmpiOp(op.lhs, one, "eq"), op)
    mode = op.mode
    if mode == "equal":
        ok, size, message = equal, op.lhs, "shapes not aligned: the vectors' lengths differ"
    elif mode == "into":
        ok, size = _emit(arith.OrIOp(equal, a_is_one), op), op.rhs
        message = "non-broadcastable operand: its size cannot be broadcast into the array updated in place"
    else:
        b_is_one = _emit(arith.CmpiOp(op.rhs, one, "eq"), op)
        ok = _emit(arith.OrIOp(_emit(arith.OrIOp(equal, a_is_one), op), b_is_one), op)
        size = _emit(arith.SelectOp(a_is_one, op.rhs, op.lhs), op)
        message = "operands could not be broadcast together: sizes must be equal, or one of them 1"
    assert ok is not None and size is not None
    _emit(cf.AssertOp(ok, StringAttr(message)), op)
    op.size.replace_all_uses_with(size)
    Rewriter.erase_op(op)


@dataclass
class _Runtime:
    module: ModuleOp
    last: Operation | None = None  # the last declaration made: the next goes after it

    def function(self, name: str, inputs: list[Attribute], outputs: list[Attribute]) -> str:
        """`@name`, declared (private, no body) at the top of the module once."""
        if SymbolTable.lookup_symbol(self.module, name) is None:
            decl = func.FuncOp.external(name, inputs, outputs)
            block = self.module.body.block
            if self.last is not None:
                block.insert_op_after(decl, self.last)
            elif block.first_op is not None:
                block.insert_op_before(decl, block.first_op)
            else:
                block.add_op(decl)
            self.last = decl
        return name

    def lower_tape(self, create: TapeCreateOp) -> None:
        tape_type = create.tape.type
        assert isinstance(tape_type, TapeType)
        elem = tape_type.element_type
        suffix = str(elem)
        index = IndexType()
        for name, inputs, outputs in (("create_", [], [index]), ("push_", [index, elem], []),
                                      ("pop_", [index], [elem]), ("free_", [index], [])):
            self.function(RUNTIME_PREFIX + name + suffix, inputs, outputs)  # declared together
        handle = _emit(func.CallOp(self.function(RUNTIME_PREFIX + "create_" + suffix, [], [index]), [], [index]),
                       create)
        assert handle is not None
        for use in list(create.tape.uses):
            user = use.operation
            if isinstance(user, TapePushOp):
                _emit(func.CallOp(self.function(RUNTIME_PREFIX + "push_" + suffix, [index, elem], []),
                                  [handle, user.value], []), user)
                Rewriter.erase_op(user)
            elif isinstance(user, TapePopOp):
                value = _emit(func.CallOp(self.function(RUNTIME_PREFIX + "pop_" + suffix, [index], [elem]),
                                          [handle], [elem]), user)
                assert value is not None
                Rewriter.replace_op(user, [], [value])
            elif isinstance(user, TapeReserveOp):  # the runtime's tapes grow at each push
                Rewriter.erase_op(user)
            elif isinstance(user, TapeFreeOp):
                _emit(func.CallOp(self.function(RUNTIME_PREFIX + "free_" + suffix, [index], []), [handle], []),
                      user)
                Rewriter.erase_op(user)
            else:
                raise error_at(user, f"uses the tape {create.tape.name_hint or ''} in a way "
                                     "ad-lower-ad-ops cannot lower (only push, reserve, pop and free)")
        Rewriter.erase_op(create)


@dataclass(frozen=True)
class LowerAdOpsPass(ModulePass):
    name = "ad-lower-ad-ops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_ad_ops(op)

