"""The translator from func/arith/math/memref/scf/cf IR to `llvmlite.ir`.

`ModuleTranslator` walks the functions; `FunctionTranslator` walks one body
and dispatches every op to the translation function registered for its class
in the per-dialect tables (`arith.py`, `math.py`, `memref.py`, `scf.py`,
`cf.py`, `func.py`, `printf.py`, `tape.py`). A translation function reads its
operands with `ft.get(value)` and records its results with `ft.set(value, x)`.

Values: scalars are single LLVM values (index is i64). A memref is a
`MemRefValue`: data pointer, element offset, sizes and strides (in elements).
Where the memref type has static sizes, strides or offset, those fields are
LLVM constants, so LLVM sees unit strides and constant trip counts and can
vectorise; an identity layout has row-major strides computed from the sizes.
Values that cross control flow (phis) are flattened into their LLVM parts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from llvmlite import ir
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from adpasses.core.diagnostics import CompileError, error_at, op_location
from adpasses.dialects.ad import NOALIAS_ATTRS, UNCHECKED_ATTR, WORKSPACE_ATTR, TapeCreateOp
from adpasses.lowering.names import reserved, user_symbol
from adpasses.core.types import memref_strides

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
F64 = ir.DoubleType()
PTR = ir.PointerType()

# The stop codes of bounds and shadow checks (adpasses.core.stop_codes, the one table).
from adpasses.core.stop_codes import PY_INDEX_AXIS, SHADOW_AXIS  # noqa: E402


class UnsupportedType(TypeError):
    """A type the LLVM lowering has no representation for; reported as a
    CompileError at the op or function that has it."""


def scalar_type(t: Attribute) -> ir.Type:
    if isinstance(t, Float64Type):
        return ir.DoubleType()
    if isinstance(t, Float32Type):
        return ir.FloatType()
    if isinstance(t, Float16Type):
        return ir.HalfType()
    if isinstance(t, IndexType):
        return I64
    if isinstance(t, IntegerType):
        return ir.IntType(t.width.data)
    raise UnsupportedType(f"type {t} is not supported by the LLVM lowering (scalars must be f16, "
                          "f32, f64, an integer type or index)")


@dataclass
class MemRefValue:
    """A memref as LLVM values: address of element (i, j, ...) is
    ptr + offset + i*strides[0] + j*strides[1] + ..., in elements."""

    type: MemRefType
    ptr: ir.Value
    offset: ir.Value
    sizes: list[ir.Value]
    strides: list[ir.Value]

    @property
    def element(self) -> ir.Type:
        return scalar_type(self.type.element_type)


def memref_parts(t: MemRefType) -> list[ir.Type]:
    """The LLVM types a memref of type `t` flattens to (the call ABI)."""
    rank = len(t.get_shape())
    return [PTR, I64] + [I64] * (2 * rank)


def flat_types(t: Attribute) -> list[ir.Type]:
    return memref_parts(t) if isinstance(t, MemRefType) else [scalar_type(t)]


def packs_results(types: Sequence[Attribute]) -> bool:
    """Whether results travel as one LLVM struct of their flattened parts
    (several results, or a memref result) rather than as one LLVM value."""
    return len(types) > 1 or any(isinstance(t, MemRefType) for t in types)


def return_type(types: Sequence[Attribute]) -> ir.Type:
    """The LLVM return type for results of these types."""
    if not types:
        return ir.VoidType()
    if not packs_results(types):
        return scalar_type(types[0])
    return ir.LiteralStructType([p for t in types for p in flat_types(t)])


def is_public(f: func.FuncOp) -> bool:
    return f.sym_visibility is None or f.sym_visibility.data != "private"


def _part_names(t: Attribute) -> list[str]:
    if not isinstance(t, MemRefType):
        return [""]
    rank = len(t.get_shape())
    return ["", ".offset", *(f".size{k}" for k in range(rank)), *(f".stride{k}" for k in range(rank))]


def load_element(b: ir.IRBuilder, addr: ir.Value, element: ir.Type) -> ir.Value:
    """An element of memory: i1 (a bool array, a tape of choices) as the
    byte it is stored in, truncated. LLVM vectorises byte loads
    (`<4 x i8>`); `load i1` in a vectorised loop became one scalar load
    per element (an i1 vector is bit-packed, memory is not)."""
    if element == I1:
        return b.trunc(b.load(addr, typ=I8), I1)
    return b.load(addr, typ=element)


def store_element(b: ir.IRBuilder, value: ir.Value, addr: ir.Value) -> None:
    """`value` into memory; an i1 as its byte, 0 or 1 (`load_element`)."""
    if value.type == I1:
        b.store(b.zext(value, I8), addr)
    else:
        b.store(value, addr)


def const_i64(v: int) -> ir.Constant:
    return ir.Constant(I64, v)


def make_memref(
    b: ir.IRBuilder,
    t: MemRefType,
    ptr: ir.Value,
    offset: ir.Value,
    sizes: Sequence[ir.Value],
    strides: Sequence[ir.Value],
) -> MemRefValue:
    """A MemRefValue whose static fields (from the type) are constants."""
    shape = list(t.get_shape())
    static_strides, static_offset = memref_strides(t)
    sizes = [const_i64(s) if s != DYNAMIC_INDEX else v for s, v in zip(shape, sizes)]
    if not _is_strided(t):
        strides = identity_strides(b, sizes)
    else:
        strides = [
            const_i64(s) if s != DYNAMIC_INDEX else v for s, v in zip(static_strides, strides)
        ]
    if static_offset != DYNAMIC_INDEX:
        offset = const_i64(static_offset)
    return MemRefValue(t, ptr, offset, list(sizes), list(strides))


def _is_strided(t: MemRefType) -> bool:
    from xdsl.dialects.builtin import StridedLayoutAttr

    return isinstance(t.layout, StridedLayoutAttr)


def identity_strides(b: ir.IRBuilder, sizes: Sequence[ir.Value]) -> list[ir.Value]:
    strides: list[ir.Value] = []
    running: ir.Value = const_i64(1)
    for size in reversed(sizes):
        strides.append(running)
        running = _mul(b, running, size)
    strides.reverse()
    return strides


def wrap_i64(v: int) -> int:
    """`v` as the i64 LLVM computes: two's complement, 64 bits (constants
    folded here must be valid i64 literals, and wrap like the runtime)."""
    return ((v + (1 << 63)) % (1 << 64)) - (1 << 63)


def _mul(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    if isinstance(x, ir.Constant) and isinstance(y, ir.Constant):
        return const_i64(wrap_i64(x.constant * y.constant))
    if isinstance(x, ir.Constant) and x.constant == 1:
        return y
    if isinstance(y, ir.Constant) and y.constant == 1:
        return x
    return b.mul(x, y)


def _add(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    if isinstance(x, ir.Constant) and isinstance(y, ir.Constant):
        return const_i64(wrap_i64(x.constant + y.constant))
    if isinstance(x, ir.Constant) and x.constant == 0:
        return y
    if isinstance(y, ir.Constant) and y.constant == 0:
        return x
    return b.add(x, y)


Translation = Callable[["FunctionTranslator", Operation], None]


def op_table() -> dict[type[Operation], Translation]:
    from adpasses.lowering import (arith, blas, cf, func as func_rules, memref, overlaps, parallel, printf,
                                   scalar_ops, scf, stops, tape)

    table: dict[type[Operation], Translation] = {}
    for part in (scalar_ops, arith, memref, scf, cf, func_rules, printf, tape, blas, parallel, stops, overlaps):
        overlap = table.keys() & part.LOWERINGS.keys()
        # scalar_ops comes first: an op with an op-table entry is lowered from it.
        assert not overlap, (f"lowered twice: {sorted(c.name for c in overlap)} are also in "
                             f"{part.__name__}.LOWERINGS; an op of the op table (adpasses/ops/) is "
                             "lowered from its entry: remove it there")
        table.update(part.LOWERINGS)
    return table


def module_op_table() -> dict[type[Operation], Callable[["ModuleTranslator", Operation], None]]:
    """Translations of module-level ops other than functions (globals)."""
    from adpasses.lowering import memref

    return dict(memref.MODULE_LOWERINGS)


class ModuleTranslator:
    """Translates a module; holds what its functions share."""

    def __init__(self, module: ModuleOp, *, boundscheck: bool, fastmath: bool, workspace: bool = True):
        self.module = module
        self.workspace = workspace
        self.boundscheck = boundscheck
        self.fastmath = ("fast",) if fastmath else ()
        self.llvm = ir.Module(name="adpasses")
        self.table = op_table()
        self.functions: dict[str, ir.Function] = {}
        self.check_sites: list[str] = []
        self._declared: dict[str, ir.Function] = {}
        self._strings: dict[str, ir.GlobalVariable] = {}
        self.memref_globals: dict[str, ir.GlobalVariable] = {}
        self._user_declarations: dict[str, func.FuncOp] = {}  # external C functions, by name

    def translate(self) -> ir.Module:
        funcs = [op for op in self.module.ops if isinstance(op, func.FuncOp)]
        module_table = module_op_table()
        for op in self.module.ops:
            if isinstance(op, func.FuncOp):
                continue
            rule = module_table.get(type(op))
            if rule is None:
                raise error_at(op, "is not supported at module level by the LLVM lowering")
            rule(self, op)
        for f in funcs:
            self.functions[f.sym_name.data] = self._declare(f)
        for f in funcs:
            if f.body.blocks:
                FunctionTranslator(self, f, self.functions[f.sym_name.data]).translate()
        return self.llvm

    def _declare(self, f: func.FuncOp) -> ir.Function:
        ftype = f.function_type
        outputs = list(ftype.outputs.data)
        try:
            params = [p for t in ftype.inputs.data for p in flat_types(t)]
            ret = return_type(outputs)
        except UnsupportedType as err:
            raise error_at(f, str(err)) from None
        name = f.sym_name.data
        if f.body.blocks:
            llvm_name = user_symbol(name)
        else:  # an external C function, by its own name (adpasses.lowering.names)
            if reserved(name):
                raise error_at(f, f"declares '@{name}', a name reserved for adpasses' runtime and "
                                  f"generated code; rename the declaration")
            llvm_name = name
            self._user_declarations[name] = f
        fn = ir.Function(self.llvm, ir.FunctionType(ret, params), llvm_name)
        if f.sym_visibility is not None and f.sym_visibility.data == "private" and f.body.blocks:
            fn.linkage = "internal"
        # noalias on the data pointer of memref arguments that promise it.
        arg_attrs = f.arg_attrs.data if f.arg_attrs is not None else []
        k = 0
        for i, t in enumerate(ftype.inputs.data):
            if isinstance(t, MemRefType) and i < len(arg_attrs):
                if any(name in arg_attrs[i].data for name in NOALIAS_ATTRS):
                    fn.args[k].add_attribute("noalias")
            k += len(flat_types(t))
        return fn

    def may_stop(self, name: str) -> bool:
        """Whether a call of function `name` can stop through the error
        slot: with bounds checks on, any defined function; without, those
        with a stop that stays on (allocation sizes, loop steps) or that
        call one that may."""
        if self.boundscheck:
            return True
        if not hasattr(self, "_may_stop"):
            self._may_stop: dict[str, bool] = {}
        if name not in self._may_stop:
            self._may_stop[name] = True  # a recursive call may stop; settled below
            f = next((op for op in self.module.ops if isinstance(op, func.FuncOp)
                      and op.sym_name.data == name), None)
            self._may_stop[name] = f is not None and any(
                _stops_without_checks(op) or (isinstance(op, func.CallOp)
                                   and self.may_stop(op.callee.root_reference.data))
                for op in f.walk())
        return self._may_stop[name]

    # -- runtime and library functions --------------------------------------

    def declare(self, name: str, ret: ir.Type, params: Sequence[ir.Type], var_arg: bool = False) -> ir.Function:
        """The C (or CPython, runtime) function `name` the generated code
        calls. A user's external declaration of the same function is the
        same symbol, so it must have the same type."""
        fn = self._declared.get(name) or self.llvm.globals.get(name)
        ftype = ir.FunctionType(ret, list(params), var_arg=var_arg)
        if fn is None:
            fn = ir.Function(self.llvm, ftype, name)
        elif name in self._user_declarations and str(fn.function_type) != str(ftype):
            raise error_at(self._user_declarations[name],
                           f"declares '@{name}' with LLVM type {fn.function_type}, but the generated "
                           f"code calls the C function {name} with type {ftype}; rename the "
                           f"declaration or give it that type")
        self._declared[name] = fn
        return fn

    def intrinsic(self, name: str, ty: ir.Type, arity: int = 1) -> ir.Function:
        full = f"{name}.{_intrinsic_suffix(ty)}"
        return self.declare(full, ty, [ty] * arity)

    def global_ref(self, name: str, ty: ir.Type) -> ir.GlobalVariable:
        g = self.llvm.globals.get(name)
        if g is None:
            g = ir.GlobalVariable(self.llvm, ty, name)
            g.linkage = "external"
        return g

    def string(self, text: str) -> ir.GlobalVariable:
        g = self._strings.get(text)
        if g is None:
            data = bytearray(text.encode()) + b"\0"
            g = ir.GlobalVariable(self.llvm, ir.ArrayType(I8, len(data)), f".str{len(self._strings)}")
            g.initializer = ir.Constant(ir.ArrayType(I8, len(data)), data)
            g.global_constant = True
            g.linkage = "private"
            self._strings[text] = g
        return g

    def check_site(self, op: Operation, text: str | None = None) -> int:
        """A new error site: its text (by default the op's location) is
        what the Python error names (adpasses.native.pyentry.CallErrors.stopped)."""
        self.check_sites.append(text if text is not None else (op_location(op) or op.name))
        return len(self.check_sites) - 1


def _stops_without_checks(op: Operation) -> bool:
    """Ops whose stops `boundscheck=False` keeps: every `ad` op that may stop
    (the `MayStop` trait: ad.raise_if, ad.broadcast, ad.size_match, tapes,
    a parallel loop whose body may) but ad.shadow_check (a check), and
    upstream's allocations (their sizes), scf.for with a step not known
    here (a step <= 0) and cf.assert (the program's own check)."""
    from xdsl.dialects import arith, cf, memref, scf

    from adpasses.dialects.ad import MayStop, ShadowCheckOp

    if isinstance(op, scf.ForOp):
        step = op.step.owner
        return not isinstance(step, arith.ConstantOp)
    if isinstance(op, ShadowCheckOp):
        return False
    return isinstance(op, (memref.AllocOp, memref.AllocaOp, cf.AssertOp)) or op.has_trait(MayStop)


def _intrinsic_suffix(ty: ir.Type) -> str:
    if isinstance(ty, ir.DoubleType):
        return "f64"
    if isinstance(ty, ir.FloatType):
        return "f32"
    if isinstance(ty, ir.HalfType):
        return "f16"
    return f"i{ty.width}"


class FunctionTranslator:
    def __init__(self, mt: ModuleTranslator, f: func.FuncOp, fn: ir.Function):
        self.mt = mt
        self.func = f
        self.fn = fn
        self.values: dict[SSAValue, object] = {}
        entry = fn.append_basic_block("entry")
        self.alloca_builder = ir.IRBuilder(entry)
        body = fn.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        self._entry = entry
        self.blocks: dict[Block, ir.Block] = {}
        self._stack_used: ir.Value | None = None
        # Workspace buffers this call holds (adpasses.lowering.thread_state):
        # (pool, capacities, held record). Every stop leaves through one
        # early exit, which gives them back to their pools.
        self.workspaces: list[tuple[ir.Value, ir.Value, ir.Value]] = []
        self.holds_workspaces = mt.workspace and any(
            WORKSPACE_ATTR in op.attributes or (isinstance(op, TapeCreateOp) and op.capacity is None)
            for op in f.walk())
        self._early_exit: ir.Block | None = None
        self._current_op: Operation | None = None  # the op being lowered (a stop frees what it holds)
        self._buffers: dict[Block, tuple[dict[Operation, int], list[tuple[int, int, SSAValue]]]] = {}

    # -- values --------------------------------------------------------------

    def get(self, value: SSAValue):  # type: ignore[no-untyped-def]
        try:
            return self.values[value]
        except KeyError:
            owner = value.owner
            raise CompileError(
                "value used before its definition reached the LLVM lowering",
                op=owner if isinstance(owner, Operation) else None,
            ) from None

    def set(self, value: SSAValue, x: object) -> None:
        self.values[value] = x

    def flatten(self, value: SSAValue) -> list[ir.Value]:
        x = self.get(value)
        if isinstance(x, MemRefValue):
            return [x.ptr, x.offset, *x.sizes, *x.strides]
        return [x]  # type: ignore[list-item]

    def unflatten(self, t: Attribute, parts: Sequence[ir.Value]) -> object:
        if isinstance(t, MemRefType):
            rank = len(t.get_shape())
            return make_memref(self.b, t, parts[0], parts[1], parts[2 : 2 + rank], parts[2 + rank :])
        return parts[0]

    # -- translation ---------------------------------------------------------

    def translate(self) -> None:
        params = iter(self.fn.args)
        blocks = list(self.func.body.blocks)
        entry_block = blocks[0]
        for arg, t in zip(entry_block.args, self.func.function_type.inputs.data):
            parts = [next(params) for _ in flat_types(t)]
            for p, suffix in zip(parts, _part_names(t)):
                p.name = f"{arg.name_hint}{suffix}" if arg.name_hint else ""
            self.set(arg, self.unflatten(t, parts))
        if len(blocks) > 1:
            for block in blocks[1:]:
                self.blocks[block] = self.fn.append_basic_block("bb")
            for block in blocks[1:]:
                # Phis first: a branch earlier in the function adds incomings.
                with self.b.goto_block(self.blocks[block]):
                    self._phis_for_block(block)
            self.translate_ops(entry_block)
            for block in blocks[1:]:
                self.b.position_at_end(self.blocks[block])
                self.translate_ops(block)
        else:
            self.translate_ops(entry_block)
        self.alloca_builder.branch(self.fn.blocks[1])
        if self._early_exit is not None:
            self._define_early_exit()

    def _phis_for_block(self, block: Block) -> None:
        # Every phi first: rebuilding a memref from its parts may emit
        # instructions (identity strides), and LLVM wants phis grouped on top.
        all_phis = [[self.b.phi(t) for t in flat_types(arg.type)] for arg in block.args]
        self.block_phis[block] = all_phis
        for arg, phis in zip(block.args, all_phis):
            self.set(arg, self.unflatten(arg.type, phis))

    @property
    def block_phis(self) -> dict[Block, list[list[ir.PhiInstr]]]:
        if not hasattr(self, "_block_phis"):
            self._block_phis: dict[Block, list[list[ir.PhiInstr]]] = {}
        return self._block_phis

    def translate_ops(self, block: Block) -> None:
        for op in block.ops:
            self.translate_op(op)

    def translate_op(self, op: Operation) -> None:
        rule = self.mt.table.get(type(op))
        if rule is None:
            hint = (
                "run the reverse pass first (ad-opt --reverse)"
                if op.name == "ad.autodiff"
                else "rewrite it with supported func/arith/math/memref/scf/cf ops"
            )
            raise error_at(op, f"is not supported by the LLVM lowering; {hint}")
        outer, self._current_op = self._current_op, op
        try:
            rule(self, op)
        except UnsupportedType as err:
            raise error_at(op, str(err)) from None
        except (CompileError, RecursionError):
            raise
        except Exception as err:  # noqa: BLE001 - a rule met IR it does not handle: a bug of ours
            raise error_at(op, f"internal error in the LLVM lowering ({type(err).__name__}: {err}); "
                               "please report it") from err
        finally:
            self._current_op = outer

    # -- helpers for translation functions -----------------------------------

    def checked(self, op: Operation) -> bool:
        return self.mt.boundscheck and UNCHECKED_ATTR not in op.attributes

    def entry_alloca(self, ty: ir.Type, count: int | None = None) -> ir.Value:
        """An alloca in the entry block, so loops do not grow the stack."""
        slot = self.alloca_builder.alloca(ty) if count is None else self.alloca_builder.alloca(ty, size=count)
        return opaque(slot)

    def stack_budget_slot(self) -> ir.Value:
        """An i64 in the entry frame: bytes of dynamic memref.alloca this
        call has made (adpasses.lowering.sizes.reserve_stack)."""
        if self._stack_used is None:
            self._stack_used = self.entry_alloca(I64)
            self.alloca_builder.store(const_i64(0), self._stack_used)
        return self._stack_used

    def stop_if(self, cond: ir.Value, site: int, index: ir.Value, code: int, size: ir.Value) -> None:
        """The one stop of generated code: when `cond` holds (an unlikely
        branch), record (site, index, code, size) in the thread's error slot
        and leave the call (`fail`). Every check that can end a call uses it
        (adpasses.core.stop_codes: the codes and the exceptions they become)."""
        with self.b.if_then(cond, likely=False):
            self.fail(site, index, code, size)

    def fail(self, site: int | ir.Value, index: ir.Value, axis: int | ir.Value, size: ir.Value) -> None:
        """Record a stop and return from the function, unconditionally (the
        body of `stop_if`; a parallel loop re-records a worker's stop with
        it); the builder is left in a fresh block for the code that follows."""
        oob = self.mt.declare("__adpasses_oob", ir.VoidType(), [I64, I64, I64, I64])
        self.b.call(oob, [const_i64(site) if isinstance(site, int) else site, index,
                          const_i64(axis) if isinstance(axis, int) else axis, size])
        self.return_early()

    def return_early(self) -> None:
        """Leave the call after a stop: free the heap arrays live at the op
        being lowered, then return (through the exit that gives back the
        workspaces, if the function holds any).

        Every stop branches into a shared chain of cleanup blocks (`_cleanup`)
        rather than freeing its live arrays inline: a function with S stop
        sites (bounds checks, size matches, allocation failures) and B live
        arrays would otherwise carry S * B calls to free (33,582 of 55,834
        lines of LLVM IR in the forward-over-reverse Hessian of
        `sum(tanh(a @ x @ x))`, which LLVM's O3 then did not finish)."""
        live = self.live_buffers(self._current_op) if self._current_op is not None else []
        self.b.branch(self._cleanup(tuple(sorted(live, key=self._allocation_order))))

    def _allocation_order(self, buffer: SSAValue) -> int:
        if not hasattr(self, "_alloc_rank"):
            from xdsl.dialects import memref

            self._alloc_rank = {r: k for k, r in enumerate(
                r for o in self.func.walk() if isinstance(o, (memref.AllocOp, func.CallOp))
                for r in o.results if isinstance(r.type, MemRefType))}
        return self._alloc_rank[buffer]

    def _cleanup(self, live: tuple[SSAValue, ...]) -> ir.Block:
        """The block that frees `live` (in allocation order) and leaves the
        call: it frees the last one and branches to the block of the others,
        so stops whose live arrays share a prefix share its blocks. The frees
        of a function are then at most one per (prefix of a) distinct live
        set, not one per stop and live array. Each block is reached only from
        stops where every array of its set is allocated (and not yet freed),
        so the pointers it frees dominate it."""
        if not hasattr(self, "_cleanups"):
            self._cleanups: dict[tuple[SSAValue, ...], ir.Block] = {}
        block = self._cleanups.get(live)
        if block is not None:
            return block
        if not live:
            if self._early_exit is None:
                self._early_exit = self.fn.append_basic_block("early_exit")
            block = self._early_exit
        else:
            block = self.fn.append_basic_block("free_on_stop")
            b = ir.IRBuilder(block)
            b.call(runtime_free(self.mt), [self.get(live[-1]).ptr])
            b.branch(self._cleanup(live[:-1]))
        self._cleanups[live] = block
        return block

    def live_buffers(self, op: Operation) -> list[SSAValue]:
        """The heap buffers a stop at `op` would leak: allocated before `op`
        (or before the region op holding it) in an enclosing block of the
        function, and either freed by a memref.dealloc after it in the same
        block, as the frontend and the tape lowering scope them (a
        memref.alloc, or the result of a func.call whose callee handed its
        buffer over: the caller frees those), or a memref.alloc that nothing
        ever frees: a buffer this function hands over when it returns
        (`return out`, a tape of split mode), still ours until the return
        runs, which a stop never reaches (they leaked: 8 MB a call for
        `y = np.zeros(10**6)`, a raise, `return y`). A call result without
        a dealloc may be a view of an argument: not ours. Workspace buffers
        go back to their pools instead (`early exit`)."""
        from xdsl.dialects import memref

        if not hasattr(self, "_dealloc_roots"):
            # Every memref a memref.dealloc may free, back through the ops
            # that made its operand (views, casts, selects): an alloc
            # reached from one is freed somewhere, so never freed again here.
            self._dealloc_roots: set[SSAValue] = set()
            todo = [o.memref for o in self.func.walk() if isinstance(o, memref.DeallocOp)]
            while todo:
                value = todo.pop()
                if value in self._dealloc_roots:
                    continue
                self._dealloc_roots.add(value)
                owner = value.owner
                if isinstance(owner, Operation) and not isinstance(owner, (memref.AllocOp, func.CallOp)):
                    todo.extend(v for v in owner.operands if isinstance(v.type, MemRefType))

        def never_freed(value: SSAValue) -> bool:
            return value not in self._dealloc_roots

        live: list[SSAValue] = []
        child: Operation | None = op
        while child is not None and not isinstance(child, func.FuncOp):
            block = child.parent_block()
            if block is None:
                break
            if block not in self._buffers:
                position = {o: k for k, o in enumerate(block.ops)}
                end = len(position)
                freed = {o.memref: position[o] for o in block.ops if isinstance(o, memref.DeallocOp)
                         and WORKSPACE_ATTR not in o.attributes}
                buffers = []
                for o in block.ops:
                    if isinstance(o, memref.AllocOp) and WORKSPACE_ATTR not in o.attributes:
                        if freed.get(o.memref, -1) > position[o]:
                            buffers.append((position[o], freed[o.memref], o.memref))
                        elif never_freed(o.memref):
                            buffers.append((position[o], end, o.memref))
                    elif isinstance(o, func.CallOp):
                        buffers.extend((position[o], freed[r], r) for r in o.results
                                       if freed.get(r, -1) > position[o])
                self._buffers[block] = (position, buffers)
            position, buffers = self._buffers[block]
            at = position[child]
            live.extend(buffer for start, end, buffer in buffers if start < at < end)
            child = block.parent_op()
        return live

    def _define_early_exit(self) -> None:
        """The one exit of every stop: give back every workspace buffer this
        call may hold (an entry not taken yet holds NULL), then return."""
        from adpasses.lowering.thread_state import workspace_give_back

        assert self._early_exit is not None
        self.b.position_at_end(self._early_exit)
        if self.holds_workspaces:
            for pool, capacities, held in self.workspaces:
                self.b.call(workspace_give_back(self.mt), [pool, capacities, held])
        self._return_undefined()

    def _return_undefined(self) -> None:
        ret = self.fn.function_type.return_type
        if isinstance(ret, ir.VoidType):
            self.b.ret_void()
        else:
            self.b.ret(ir.Constant(ret, ir.Undefined))

    def check_index(self, site: int, index: ir.Value, axis: int, size: ir.Value,
                    python_index: bool = False) -> None:
        """Branch to an error exit unless 0 <= index < size (one unsigned
        compare). `python_index`: the index was wrapped like Python's
        (`PY_INDEX_ATTR`); the error reports the index before the wrap."""
        self.stop_if(self.b.icmp_unsigned(">=", index, size), site, index,
                     axis + PY_INDEX_AXIS if python_index else axis, size)

    def element_address(self, m: MemRefValue, indices: Sequence[ir.Value]) -> ir.Value:
        linear: ir.Value = m.offset
        for idx, stride in zip(indices, m.strides):
            linear = _add(self.b, linear, _mul(self.b, idx, stride))
        return self.b.gep(m.ptr, [linear], inbounds=True, source_etype=m.element)

    def malloc(self, nbytes: ir.Value) -> ir.Value:
        return self.b.call(runtime_alloc(self.mt), [nbytes])

    def free(self, ptr: ir.Value) -> None:
        self.b.call(runtime_free(self.mt), [ptr])


def opaque(pointer: ir.Value) -> ir.Value:
    """llvmlite types alloca results as typed pointers; LLVM's pointers are
    opaque, and so are ours (addresses come from GEPs with an element type)."""
    pointer.type = PTR
    return pointer


def runtime_alloc(mt: ModuleTranslator) -> ir.Function:
    """`__adpasses_alloc(bytes)`: malloc through the counting runtime."""
    existing = mt.llvm.globals.get("__adpasses_alloc")
    if existing is not None:
        return existing
    fn = ir.Function(mt.llvm, ir.FunctionType(PTR, [I64]), "__adpasses_alloc")
    fn.linkage = "internal"
    # Not inlined: LLVM may delete a malloc it sees whose memory is unused
    # or only stored and reloaded, and then an impossible allocation
    # "succeeds" at -O3 but stops with MemoryError at -O0. Through this
    # call every allocation happens (and is checked) at every level.
    fn.attributes.add("noinline")
    b = ir.IRBuilder(fn.append_basic_block())
    _count_allocation(mt, b, fn.args[0])
    malloc = mt.declare("malloc", PTR, [I64])
    b.ret(b.call(malloc, [fn.args[0]]))
    return fn


def runtime_realloc(mt: ModuleTranslator) -> ir.Function:
    existing = mt.llvm.globals.get("__adpasses_realloc")
    if existing is not None:
        return existing
    fn = ir.Function(mt.llvm, ir.FunctionType(PTR, [PTR, I64]), "__adpasses_realloc")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block())
    _count_allocation(mt, b, fn.args[1])
    realloc = mt.declare("realloc", PTR, [PTR, I64])
    b.ret(b.call(realloc, [fn.args[0], fn.args[1]]))
    return fn


def runtime_free(mt: ModuleTranslator) -> ir.Function:
    return mt.declare("free", ir.VoidType(), [PTR])


def _count_allocation(mt: ModuleTranslator, b: ir.IRBuilder, nbytes: ir.Value) -> None:
    stats = mt.global_ref("adpasses_alloc_stats", ir.ArrayType(I64, 2))
    count = b.gep(stats, [const_i64(0), const_i64(0)], inbounds=True)
    total = b.gep(stats, [const_i64(0), const_i64(1)], inbounds=True)
    # Atomic: compiled calls of several threads may allocate at once.
    b.atomic_rmw("add", count, const_i64(1), "monotonic")
    b.atomic_rmw("add", total, nbytes, "monotonic")


def define_oob_handler(mt: ModuleTranslator) -> None:
    """`__adpasses_oob(site, index, axis, size)`: record a stop in the
    calling thread's error slot (adpasses.lowering.thread_state)."""
    from adpasses.lowering.thread_state import define_record_stop

    define_record_stop(mt)


def has_unit_attr(op: Operation, name: str) -> bool:
    return isinstance(op.attributes.get(name), UnitAttr)
