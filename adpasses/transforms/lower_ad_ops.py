"""`ad-lower-ad-ops` (`ad-opt --lower-ad-ops`): the `ad` ops left in a
differentiated module rewritten as func/arith/memref/scf/cf, so that
upstream MLIR (`mlir-opt`) reads, verifies and lowers our gradients.

- `ad.shadow_check %x, %dx`: per dimension whose sizes are not statically
  equal, `memref.dim` of both, `arith.cmpi eq` and `cf.assert` with the
  message adpasses raises (a statically different size asserts false);
- `ad.keep`: removed (it only kept values alive through our own passes);
- `ad.broadcast %a, %b`: `cf.assert` (equal, or one is 1) and `arith.select`;
- `ad.overlaps %a, %b`: the byte-range test of adpasses/lowering/overlaps.py
  in index arithmetic, from `memref.extract_aligned_pointer_as_index` and
  `memref.extract_strided_metadata` of each; `ad.self_overlaps %a`: its
  stride test (adpasses/lowering/overlaps.py) from a's metadata;
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
      func.func private @adpasses_tape_count_T(index) -> index

  (a C implementation: docs/mlir_interop.md);
- split mode's hand-over of such a tape (`ad.tape.export` in the forward
  half, `ad.tape.import` in the reverse half): the export pops the runtime
  tape into a fresh `memref.alloc` (oldest value first, at least one
  element) and frees the handle; the import reads that buffer from the top
  with a one-element counter, as a tape of known capacity does. So the
  tape crosses between the halves as a plain `memref<?xT>` and an `index`.

Any other `ad` op (an `ad.autodiff` or `ad.fwddiff` not yet differentiated)
is an error at its location: run `--reverse` / `--forward` first.
Discardable `ad.*` attributes (`ad.unchecked`, `ad.twin_id`, ...) stay:
upstream MLIR keeps attributes of unknown dialects as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, cf, func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, IntegerType, MemRefType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from adpasses.core.diagnostics import error_at
from adpasses.dialects.ad import (BroadcastOp, KeepOp, OverlapsOp, RaiseIfOp, SelfOverlapsOp, ShadowCheckOp, TapeCreateOp, TapeExportOp, TapeFreeOp,
                                  TapeImportOp, TapePopOp, TapePushOp, TapeReserveOp, TapeType)
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
        elif isinstance(op, OverlapsOp):
            _lower_overlaps(op)
        elif isinstance(op, SelfOverlapsOp):
            _lower_self_overlaps(op)
        elif isinstance(op, TapeCreateOp):
            runtime.lower_tape(op)
        elif isinstance(op, TapeImportOp):
            _lower_import(op)
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


def _lower_overlaps(op: OverlapsOp) -> None:
    """Whether the byte ranges of two memrefs intersect: each spans from
    its aligned pointer plus (offset + the sum of the negative `(n-1)*s`)
    elements to the positive sum's end; an empty one spans nothing."""
    index = IndexType()

    def c(v: int) -> SSAValue:
        return _emit(arith.ConstantOp(IntegerAttr(v, index)), op)  # type: ignore[return-value]

    def span(m: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
        mtype = m.type
        assert isinstance(mtype, MemRefType)
        element = mtype.element_type
        width = element.width.data if hasattr(element, "width") else 64  # type: ignore[attr-defined]
        size = c(max(1, (width + 7) // 8))
        zero, one = c(0), c(1)
        md = memref.ExtractStridedMetaDataOp(m)
        _emit(md, op)
        rank = len(mtype.get_shape())
        offset, sizes, strides = md.results[1], md.results[2:2 + rank], md.results[2 + rank:]
        base = _emit(memref.ExtractAlignedPointerAsIndexOp.create(operands=[m], result_types=[index]), op)
        low = high = offset
        empty: SSAValue | None = None
        for n, s in zip(sizes, strides):
            reach = _emit(arith.MuliOp(_emit(arith.SubiOp(n, one), op), s), op)
            negative = _emit(arith.CmpiOp(s, zero, "slt"), op)
            low = _emit(arith.AddiOp(low, _emit(arith.SelectOp(negative, reach, zero), op)), op)
            high = _emit(arith.AddiOp(high, _emit(arith.SelectOp(negative, zero, reach), op)), op)
            none = _emit(arith.CmpiOp(n, zero, "sle"), op)
            empty = none if empty is None else _emit(arith.OrIOp(empty, none), op)
        if empty is None:  # rank 0: one element
            empty = _emit(arith.ConstantOp(IntegerAttr(0, 1)), op)
        first = _emit(arith.AddiOp(base, _emit(arith.MuliOp(low, size), op)), op)
        end = _emit(arith.AddiOp(_emit(arith.AddiOp(base, _emit(arith.MuliOp(high, size), op)), op), size), op)
        return first, end, empty  # type: ignore[return-value]

    a_first, a_end, a_empty = span(op.lhs)
    b_first, b_end, b_empty = span(op.rhs)
    meet = _emit(arith.AndIOp(_emit(arith.CmpiOp(a_first, b_end, "ult"), op),
                              _emit(arith.CmpiOp(b_first, a_end, "ult"), op)), op)
    true = _emit(arith.ConstantOp(IntegerAttr(1, 1)), op)
    some = _emit(arith.XOrIOp(_emit(arith.OrIOp(a_empty, b_empty), op), true), op)
    result = _emit(arith.AndIOp(meet, some), op)
    op.result.replace_all_uses_with(result)  # type: ignore[arg-type]
    Rewriter.erase_op(op)


def _lower_self_overlaps(op: SelfOverlapsOp) -> None:
    """Not (empty, or distinct elements shown by the strides taken
    innermost-first or outermost-first)."""
    index = IndexType()

    def c(v: int, width: Attribute = index) -> SSAValue:
        return _emit(arith.ConstantOp(IntegerAttr(v, width)), op)  # type: ignore[return-value]

    def e(new: Operation) -> SSAValue:
        return _emit(new, op)  # type: ignore[return-value]

    mtype = op.source.type
    assert isinstance(mtype, MemRefType)
    rank = len(mtype.get_shape())
    md = memref.ExtractStridedMetaDataOp(op.source)
    _emit(md, op)
    sizes, strides = md.results[2:2 + rank], md.results[2 + rank:]
    zero, one, true = c(0), c(1), c(1, IntegerType(1))

    def distinct(order: list[int]) -> SSAValue:
        ok, reach = true, one
        for k in order:
            n, s = sizes[k], strides[k]
            big = e(arith.CmpiOp(n, one, "sgt"))
            step = e(arith.SelectOp(e(arith.CmpiOp(s, zero, "slt")), e(arith.SubiOp(zero, s)), s))
            fits = e(arith.OrIOp(e(arith.XOrIOp(big, true)), e(arith.CmpiOp(step, reach, "sge"))))
            ok = e(arith.AndIOp(ok, fits))
            reach = e(arith.AddiOp(reach, e(arith.SelectOp(big, e(arith.MuliOp(step, e(arith.SubiOp(n, one)))),
                                                           zero))))
        return ok

    fine = e(arith.OrIOp(distinct(list(reversed(range(rank)))), distinct(list(range(rank)))))
    for n in sizes:
        fine = e(arith.OrIOp(fine, e(arith.CmpiOp(n, zero, "sle"))))
    result = e(arith.XOrIOp(fine, true))
    op.result.replace_all_uses_with(result)
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
        names = [("create_", [], [index]), ("push_", [index, elem], []), ("pop_", [index], [elem]),
                 ("free_", [index], [])]
        if any(isinstance(use.operation, TapeExportOp) for use in create.tape.uses):
            names.append(("count_", [index], [index]))
        for name, inputs, outputs in names:
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
            elif isinstance(user, TapeExportOp):
                self.lower_export(user, handle, elem)
            else:
                raise error_at(user, f"uses the tape {create.tape.name_hint or ''} in a way "
                                     "ad-lower-ad-ops cannot lower (only push, reserve, pop, free and export)")
        Rewriter.erase_op(create)

    def lower_export(self, export: TapeExportOp, handle: SSAValue, elem: Attribute) -> None:
        """The runtime tape's values into a fresh buffer, oldest first (pops
        come newest first: value k of n goes to n - 1 - k), then the handle
        freed: the buffer owns the values from here on, as the op says."""
        index, suffix = IndexType(), str(elem)
        count = _emit(func.CallOp(self.function(RUNTIME_PREFIX + "count_" + suffix, [index], [index]), [handle],
                                  [index]), export)
        zero = _emit(arith.ConstantOp(IntegerAttr(0, index)), export)
        one = _emit(arith.ConstantOp(IntegerAttr(1, index)), export)
        assert count is not None and zero is not None and one is not None
        size = _emit(arith.MaxUIOp(count, one), export)  # the buffer owns an allocation even when empty
        assert size is not None
        buffer = _emit(memref.AllocOp.get(elem, shape=[DYNAMIC_INDEX], dynamic_sizes=[size]), export)
        assert buffer is not None
        body = Block(arg_types=[index])
        last = arith.SubiOp(count, one)
        slot = arith.SubiOp(last.result, body.args[0])
        value = func.CallOp(self.function(RUNTIME_PREFIX + "pop_" + suffix, [index], [elem]), [handle], [elem])
        body.add_ops([last, slot, value, memref.StoreOp.get(value.results[0], buffer, [slot.result]), scf.YieldOp()])
        _emit(scf.ForOp(zero, count, one, [], body), export)
        _emit(func.CallOp(self.function(RUNTIME_PREFIX + "free_" + suffix, [index], []), [handle], []), export)
        buffer.name_hint = export.buffer.name_hint
        Rewriter.replace_op(export, [], [buffer, count])


def _lower_import(op: TapeImportOp) -> None:
    """The handed-over buffer read from the top: a one-element counter
    starting at the count, each pop the element below it. The buffer stays
    the caller's (the reverse half frees it as before)."""
    index = IndexType()
    counter = _emit(memref.AllocaOp.get(index, shape=[1]), op)
    zero = _emit(arith.ConstantOp(IntegerAttr(0, index)), op)
    one = _emit(arith.ConstantOp(IntegerAttr(1, index)), op)
    assert counter is not None and zero is not None and one is not None
    _emit(memref.StoreOp.get(op.count, counter, [zero]), op)
    for use in list(op.tape.uses):
        user = use.operation
        if not isinstance(user, TapePopOp):
            raise error_at(user, "uses a tape handed over by split mode in a way ad-lower-ad-ops cannot lower "
                                 "(only pop)")
        n = _emit(memref.LoadOp.get(counter, [zero]), user)
        assert n is not None
        m = _emit(arith.SubiOp(n, one), user)
        assert m is not None
        _emit(memref.StoreOp.get(m, counter, [zero]), user)
        value = _emit(memref.LoadOp.get(op.buffer, [m]), user)
        assert value is not None
        Rewriter.replace_op(user, [], [value])
    Rewriter.erase_op(op)


@dataclass(frozen=True)
class LowerAdOpsPass(ModulePass):
    name = "ad-lower-ad-ops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_ad_ops(op)

