"""The driver of `adpasses.vmap`: one compiled loop over a batch axis
around a function (a primal, a gradient, a tangent function, a Hessian's
driver).

`add_batch_driver(module, entry, spec, name)` adds `@name`, whose loop
runs `entry` once per batch element `b`:

    func @name(%n: index, <per entry parameter, by its kind>, <per batched result: memref<?xT>>)
      scf.for %b = 0 to %n:
        <restore the RESTORE parameters, zero the SCRATCH ones>
        %r... = func.call @entry(<per parameter: its value for element b>)
        memref.store %r_i, %out_i[%b]            (each result marked in spec.results)

Per entry parameter (`BatchSpec.params`):
- BATCHED: the driver takes the batch, one dimension more, leading: for a
  memref parameter the batch's row `b` (a subview; cast to the parameter's
  identity layout when it has one: rows of a C-contiguous batch are
  contiguous, and the cast's lowering makes the row's first element the
  base); for a scalar, element `b` of a 1-D memref (an `index` is read from
  i64 and converted).
- SHARED: passed unchanged to every call.
- RESTORE: a memref the entry writes, which must start every call with the
  same contents: the driver takes it and a pristine copy, and copies the
  pristine into it before each call.
- SCRATCH: a memref the entry accumulates into (a shadow no one reads):
  zeroed before each call.
- RESTORE_ROWS, SCRATCH_ROWS: RESTORE and SCRATCH with one buffer per
  element rather than one for the batch: the driver takes a batch (its
  rows of the parameter's shape; RESTORE_ROWS also the pristine) and
  passes row `b`, copied from the pristine / zeroed before the call. No
  two elements then write the same memory, so the loop can be proven
  parallel (vmap uses them with `parallel=True`: B times the memory of
  one buffer, like an output).
- ZEROED: BATCHED, for an output the entry accumulates into (a
  gradient's shadow): the caller passes uninitialised memory (C-contiguous)
  and the driver zero-fills it before the loop over the batch, in a loop
  of its own over all its elements (a flat view), marked parallel with the
  batch loop: each thread of the pool zeroes its chunk (one memset) and no
  serial memset of the whole output precedes the call.
- CONST: a float fixed in the driver (`spec.constants`: a gradient's seed).
- LOCAL: a buffer of any contents the entry uses as its workspace (a
  Hessian driver's lanes and shadows): a stack array of the parameter's
  constant shape (`spec.shapes`), allocated once by the driver. Kept on
  the stack, it is the entry's own memory to LLVM: once the entry is
  inlined and its loops over elements unrolled, SROA keeps it in
  registers (no stores, loads or zeroing through memory per element).

With `spec.parallel` the loop is marked `ad.parallel = "vmap"` (like a
loop of `jit(parallel=True)`, "auto"; at the mapped function's location): `ad-parallelize` runs it on the worker
pool when it proves the elements independent (each writes its own rows
and outputs; SHARED memrefs read only; RESTORE and SCRATCH parameters,
one buffer written by every element, keep it serial: the _ROWS kinds are
their parallel form), else it stays a serial loop.

The batch sizes of the memrefs are read by the subviews and loads, which
keep their bounds checks: a batch shorter than `%n` stops the call with an
IndexError rather than read past it (the API checks the sizes first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from adpasses.dialects.ad import NOALIAS_ATTR, PARALLEL_ATTR, UNCHECKED_ATTR, ZERO_FILL_MARK
from adpasses.transforms.seed_loops import _dims, _flat_view, _index, fill

VMAP_MARK = "vmap"
"""The `ad.parallel` mark of a parallel batch loop: not `prange` (a loop
not proven independent runs serially, no error), named in reports."""

BATCHED, SHARED, RESTORE, SCRATCH, CONST, LOCAL = "batched", "shared", "restore", "scratch", "const", "local"
RESTORE_ROWS, SCRATCH_ROWS, ZEROED = "restore_rows", "scratch_rows", "zeroed"
KINDS = (BATCHED, SHARED, RESTORE, SCRATCH, CONST, LOCAL, RESTORE_ROWS, SCRATCH_ROWS, ZEROED)


@dataclass(frozen=True)
class BatchSpec:
    """How the driver passes each parameter of the entry, and which of its
    results it stores per batch element."""

    params: tuple[str, ...]                        # per entry parameter: one of KINDS
    results: tuple[bool, ...]                      # per entry result: stored into an output
    constants: tuple[tuple[int, float], ...] = ()  # CONST parameters: (position, value)
    shapes: tuple[tuple[int, ...] | None, ...] = ()
    """Per parameter (or empty: none): the element shape the driver is
    compiled for, or None. A BATCHED or SHARED memref parameter with a
    shape is passed as a view of those constant sizes (bounds-checked
    against the caller's array), so LLVM sees every size of the entry
    once it is inlined: loops over elements unroll, size checks fold."""
    noalias: bool = False
    """The caller passes distinct, non-overlapping memory for every memref
    parameter of the driver (vmap checks its arguments and allocates the
    rest): they are marked `ad.noalias`, which the independence proof of
    a parallel loop needs and LLVM uses."""
    parallel: bool = False
    """Mark the loop over the batch `ad.parallel = "auto"` (module doc)."""

    def __post_init__(self) -> None:
        bad = [k for k in self.params if k not in KINDS]
        if bad:
            raise ValueError(f"BatchSpec: unknown parameter kinds {bad}; expected one of {KINDS}")
        fixed = {p for p, _ in self.constants}
        if fixed != {p for p, k in enumerate(self.params) if k == CONST}:
            raise ValueError("BatchSpec: every CONST parameter needs exactly one constant")
        if self.shapes and len(self.shapes) != len(self.params):
            raise ValueError(f"BatchSpec: {len(self.shapes)} shapes for {len(self.params)} parameters; "
                             "give one per parameter (None: dynamic) or none")
        if any(k == LOCAL and (not self.shapes or self.shapes[p] is None) for p, k in enumerate(self.params)):
            raise ValueError("BatchSpec: a LOCAL parameter needs its shape (spec.shapes)")


def batch_type(t: Attribute) -> MemRefType:
    """The type of the driver's batch parameter for an entry parameter of
    type `t`: one leading dynamic dimension more (an index is stored as i64)."""
    if isinstance(t, MemRefType):
        shape = [DYNAMIC_INDEX] * (len(t.get_shape()) + 1)
        if isinstance(t.layout, StridedLayoutAttr):
            return MemRefType(t.element_type, shape, StridedLayoutAttr([NoneAttr()] * len(shape), NoneAttr()))
        return MemRefType(t.element_type, shape)
    return MemRefType(IntegerType(64) if isinstance(t, IndexType) else t, [DYNAMIC_INDEX])


def driver_inputs(entry: func.FuncOp, spec: BatchSpec) -> list[Attribute]:
    """The driver's parameter types, in order."""
    inputs = list(entry.function_type.inputs.data)
    types: list[Attribute] = [IndexType()]
    for t, kind in zip(inputs, spec.params):
        if kind in (BATCHED, SCRATCH_ROWS, ZEROED):
            types.append(batch_type(t))
        elif kind == RESTORE:
            types += [t, t]
        elif kind == RESTORE_ROWS:
            types += [batch_type(t), t]
        elif kind not in (CONST, LOCAL):
            types.append(t)
    outputs = list(entry.function_type.outputs.data)
    types += [MemRefType(t, [DYNAMIC_INDEX]) for t, kept in zip(outputs, spec.results) if kept]
    return types


def row_view(b: Builder, batch: SSAValue, at: SSAValue, t: MemRefType,
         shape: tuple[int, ...] | None = None) -> SSAValue:
    """batch[at, :, ..., :] as a value of the entry's parameter type `t`
    (with `shape`: batch[at, :shape[0], ...], constant sizes)."""
    rank = len(t.get_shape())
    zero, one = _index(b, 0), _index(b, 1)
    sizes = _dims(b, batch)[1:] if shape is None else [_index(b, s) for s in shape]
    strided = MemRefType(t.element_type, [DYNAMIC_INDEX] * rank,
                         StridedLayoutAttr([NoneAttr()] * rank, NoneAttr()))
    view = b.insert(memref.SubviewOp(
        batch, [at] + [zero] * rank, sizes, [one] * (rank + 1),
        [DYNAMIC_INDEX] * (rank + 1), [1] + [DYNAMIC_INDEX] * rank, [DYNAMIC_INDEX] * (rank + 1),
        strided)).results[0]
    return view if strided == t else b.insert(memref.CastOp.get(view, t)).results[0]


def _sized(b: Builder, m: SSAValue, shape: tuple[int, ...]) -> SSAValue:
    """m[:shape[0], ..., :shape[-1]] (bounds-checked) as a value of m's type:
    the same memory, with constant sizes."""
    t = m.type
    rank = len(shape)
    zero, one = _index(b, 0), _index(b, 1)
    strided = MemRefType(t.element_type, [DYNAMIC_INDEX] * rank,  # type: ignore[attr-defined]
                         StridedLayoutAttr([NoneAttr()] * rank, NoneAttr()))
    view = b.insert(memref.SubviewOp(
        m, [zero] * rank, [_index(b, s) for s in shape], [one] * rank,
        [DYNAMIC_INDEX] * rank, [DYNAMIC_INDEX] * rank, [DYNAMIC_INDEX] * rank, strided)).results[0]
    return view if strided == t else b.insert(memref.CastOp.get(view, t)).results[0]


def _element(b: Builder, batch: SSAValue, at: SSAValue, t: Attribute) -> SSAValue:
    v = b.insert(memref.LoadOp.get(batch, [at])).res
    if isinstance(t, IndexType):
        v = b.insert(arith.IndexCastOp(v, IndexType())).result
    return v


def _local(b: Builder, t: MemRefType, shape: tuple[int, ...]) -> SSAValue:
    """A stack buffer of the constant `shape`, as a value of type `t`."""
    own = MemRefType(t.element_type, list(shape))
    buf = b.insert(memref.AllocaOp.get(t.element_type, shape=list(shape))).memref
    return buf if own == t else b.insert(memref.CastOp.get(buf, t)).results[0]


def _zero_fill(b: Builder, m: SSAValue, parallel: bool, entry: func.FuncOp) -> None:
    """m (C-contiguous) = 0, by a loop over its elements (a flat view):
    a loop of the pool when `parallel` (each chunk one memset)."""
    flat = _flat_view(b, m)
    zero, one = _index(b, 0), _index(b, 1)
    c = b.insert(arith.ConstantOp(FloatAttr(0.0, m.type.element_type))).result  # type: ignore[attr-defined]
    body = Block(arg_types=[IndexType()])
    store = memref.StoreOp.get(c, flat, [body.args[0]])
    store.attributes[UNCHECKED_ATTR] = UnitAttr()  # below the flat view's size
    body.add_op(store)
    body.add_op(scf.YieldOp())
    loop = b.insert(scf.ForOp(zero, b.insert(memref.DimOp(flat, zero)).result, one, [], Region(body)))
    if parallel:
        loop.attributes[PARALLEL_ATTR] = StringAttr(ZERO_FILL_MARK)
        loop.location = entry.location


def add_batch_driver(module: ModuleOp, entry: func.FuncOp, spec: BatchSpec, name: str) -> func.FuncOp:
    """Add `@name`, the loop over a batch described in the module
    docstring, calling `entry`."""
    inputs = list(entry.function_type.inputs.data)
    outputs = list(entry.function_type.outputs.data)
    if len(spec.params) != len(inputs) or len(spec.results) != len(outputs):
        raise ValueError(f"BatchSpec for @{entry.sym_name.data}: {len(spec.params)} parameter kinds and "
                         f"{len(spec.results)} result flags for {len(inputs)} parameters and "
                         f"{len(outputs)} results")
    driver = func.FuncOp(name, (driver_inputs(entry, spec), []))
    if spec.noalias:
        driver.arg_attrs = ArrayAttr([
            DictionaryAttr({NOALIAS_ATTR: UnitAttr()} if isinstance(t, MemRefType) else {})
            for t in driver.function_type.inputs.data])
    args = iter(driver.body.block.args)
    n = next(args)
    taken: list[tuple[str, SSAValue, SSAValue | None]] = []
    for kind in spec.params:
        if kind in (CONST, LOCAL):
            taken.append((kind, n, None))  # placeholder: the constant or buffer is made below
        elif kind in (RESTORE, RESTORE_ROWS):
            work = next(args)
            taken.append((kind, work, next(args)))
        else:
            taken.append((kind, next(args), None))
    stores = list(args)
    b = Builder(InsertPoint.at_end(driver.body.block))
    constants = dict(spec.constants)
    fixed = {p: b.insert(arith.ConstantOp(FloatAttr(v, inputs[p]))).result for p, v in constants.items()}
    shapes = spec.shapes or (None,) * len(inputs)
    for p, ((kind, value, pristine), t) in enumerate(zip(taken, inputs)):
        if kind == SHARED and shapes[p] is not None and isinstance(t, MemRefType):
            taken[p] = (kind, _sized(b, value, shapes[p]), pristine)  # type: ignore[arg-type]
        elif kind == LOCAL and not spec.parallel:
            taken[p] = (SHARED, _local(b, t, shapes[p]), None)  # type: ignore[arg-type]
    for p, (kind, value, _) in enumerate(taken):
        if kind == ZEROED:
            _zero_fill(b, value, spec.parallel, entry)
            taken[p] = (BATCHED, value, None)
    zero, one = _index(b, 0), _index(b, 1)
    block = Block(arg_types=[IndexType()])
    loop = b.insert(scf.ForOp(zero, n, one, [], Region(block)))
    if spec.parallel:
        loop.attributes[PARALLEL_ATTR] = StringAttr(VMAP_MARK)
        loop.location = entry.location
    at = block.args[0]
    inner = Builder(InsertPoint.at_end(block))
    for p, ((kind, value, pristine), t) in enumerate(zip(taken, inputs)):
        if kind == LOCAL:  # parallel: each element's own (the lowering hoists it: one per thread)
            taken[p] = (SHARED, _local(inner, t, shapes[p]), None)  # type: ignore[arg-type]
    operands: list[SSAValue] = []
    for p, ((kind, value, pristine), t) in enumerate(zip(taken, inputs)):
        if kind == CONST:
            operands.append(fixed[p])
        elif kind == BATCHED:
            operands.append(row_view(inner, value, at, t, shapes[p]) if isinstance(t, MemRefType)
                            else _element(inner, value, at, t))
        elif kind == RESTORE:
            inner.insert(memref.CopyOp(pristine, value))
            operands.append(value)
        elif kind == SCRATCH:
            fill(inner, value, 0.0)
            operands.append(value)
        elif kind == RESTORE_ROWS:
            row = row_view(inner, value, at, t, shapes[p])
            inner.insert(memref.CopyOp(pristine, row))
            operands.append(row)
        elif kind == SCRATCH_ROWS:
            row = row_view(inner, value, at, t, shapes[p])
            fill(inner, row, 0.0)
            operands.append(row)
        else:
            operands.append(value)
    call = inner.insert(func.CallOp(entry.sym_name.data, operands, outputs))
    kept = iter(stores)
    for r, stored in zip(call.results, spec.results):
        if stored:
            inner.insert(memref.StoreOp.get(r, next(kept), [at]))
    inner.insert(scf.YieldOp())
    b.insert(func.ReturnOp())
    module.body.block.add_op(driver)
    return driver


def stored_result_types(entry: func.FuncOp, spec: BatchSpec) -> Sequence[Attribute]:
    """The element types of the driver's result outputs, in order."""
    return [t for t, kept in zip(entry.function_type.outputs.data, spec.results) if kept]
