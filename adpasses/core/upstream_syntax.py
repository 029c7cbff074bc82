"""Upstream MLIR's custom assembly formats that xDSL 0.74 does not parse.

`mlir-opt` prints these ops in custom form; xDSL either has no custom
format for them ("Operation memref.global does not have a custom format"),
or a narrower one (`scf.for ... -> f64` without parentheses, `arith.trunci`
with `overflow<...>` or an `overflowFlags` property). `LocatingParser`
(adpasses/core/context.py) looks an op name up in `PARSE_HOOKS` first: a
hook is a subclass of xDSL's op class whose `parse` (custom form) or
`create` (generic form) reads upstream's syntax and returns an instance of
xDSL's class itself, so every pass sees the usual op. Printing stays
xDSL's (the generic form for the ops without a custom format, which
upstream reads too).

Listed in docs/mlir_interop.md, for upstreaming to xDSL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import affine, arith, memref, scf
from xdsl.dialects.arith import IntegerOverflowAttr
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AffineSetAttr,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IntegerAttr,
    IntegerType,
    i32,
    i64,
    IndexType,
    MemRefType,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.parser.core import UnresolvedOperand
from xdsl.traits import IsTerminator


def _types_after_arrow(parser: Parser) -> list[Attribute]:
    """`-> (t1, t2)` or `-> t` (upstream accepts one type without
    parentheses); [] without an arrow."""
    if not parser.parse_optional_punctuation("->"):
        return []
    types = parser.parse_optional_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
    return types if types is not None else [parser.parse_type()]


def _with_terminator(region: Region, make: Callable[[], Operation]) -> Region:
    """`region` ending with a terminator: upstream elides terminators
    without operands (scf.yield, affine.yield, scf.reduce, ...)."""
    if not region.blocks:
        region.add_block(Block())
    block = region.blocks.last
    assert block is not None
    last = block.last_op
    if last is None or not last.has_trait(IsTerminator):
        block.add_op(make())
    return region


def _operand_list(parser: Parser) -> list[UnresolvedOperand]:
    return parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)


def _index_operands(parser: Parser, operands: Sequence[UnresolvedOperand]) -> list[SSAValue]:
    return [parser.resolve_operand(o, IndexType()) for o in operands]


# --- scf ---------------------------------------------------------------------------------

class ScfFor(scf.ForOp):
    """`scf.for %i = %a to %b step %c iter_args(%x = %v) -> f64` (a single
    result type without parentheses); otherwise xDSL's format."""

    @classmethod
    def parse(cls, parser: Parser) -> scf.ForOp:
        start = parser.pos
        if parser.parse_optional_keyword("unsigned"):
            parser.raise_error("scf.for unsigned (bounds compared as unsigned integers) is not supported "
                               "by adpasses: write scf.for with signed bounds (the same loop when the "
                               "bounds are below 2^63)", start, parser.pos)
        indvar = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        lb = parser.parse_unresolved_operand()
        parser.parse_keyword("to")
        ub = parser.parse_unresolved_operand()
        parser.parse_keyword("step")
        step = parser.parse_unresolved_operand()
        pos = parser.pos
        iter_args: list[Parser.UnresolvedArgument] = []
        inits: list[UnresolvedOperand] = []
        types: list[Attribute] = []
        if parser.parse_optional_keyword("iter_args"):
            def assignment() -> None:
                iter_args.append(parser.parse_argument(expect_type=False))
                parser.parse_punctuation("=")
                inits.append(parser.parse_unresolved_operand())

            parser.parse_comma_separated_list(parser.Delimiter.PAREN, assignment)
            types = _types_after_arrow(parser)
            if len(types) != len(inits):
                parser.raise_error(f"expected {len(inits)} result types after '->'", pos, parser.pos)
        init_values = parser.resolve_operands(inits, types, pos)
        iv_type = parser.parse_type() if parser.parse_optional_punctuation(":") else IndexType()
        body = parser.parse_region(
            (indvar.resolve(iv_type), *(a.resolve(t) for a, t in zip(iter_args, types))))
        attrs = parser.parse_optional_attr_dict()
        op = scf.ForOp(parser.resolve_operand(lb, iv_type), parser.resolve_operand(ub, iv_type),
                       parser.resolve_operand(step, iv_type), init_values, body)
        op.attributes |= attrs
        if not iter_args:
            _with_terminator(op.body, scf.YieldOp)
        return op


class ScfIf(scf.IfOp):
    """`scf.if %c -> f32 {...}` (one result type without parentheses)."""

    @classmethod
    def parse(cls, parser: Parser) -> scf.IfOp:
        cond = parser.parse_operand(IntegerType(1))
        types = _types_after_arrow(parser)
        then_region = _with_terminator(parser.parse_region(), scf.YieldOp)
        else_region = (_with_terminator(parser.parse_region(), scf.YieldOp)
                       if parser.parse_optional_keyword("else") else Region())
        return scf.IfOp(cond, types, then_region, else_region, parser.parse_optional_attr_dict())


class ScfParallel(scf.ParallelOp):
    """`scf.parallel (%i) = (%lb) to (%ub) step (%s) init (%v) -> f64 {...}`."""

    @classmethod
    def parse(cls, parser: Parser) -> scf.ParallelOp:
        ivs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=False))
        parser.parse_punctuation("=")
        lbs = _index_operands(parser, _operand_list(parser))
        parser.parse_keyword("to")
        ubs = _index_operands(parser, _operand_list(parser))
        parser.parse_keyword("step")
        steps = _index_operands(parser, _operand_list(parser))
        inits: list[UnresolvedOperand] = []
        if parser.parse_optional_keyword("init"):
            inits = _operand_list(parser)
        pos = parser.pos
        types = _types_after_arrow(parser)
        init_values = parser.resolve_operands(inits, types, pos)
        body = parser.parse_region([iv.resolve(IndexType()) for iv in ivs])
        _with_terminator(body, scf.ReduceOp)
        op = scf.ParallelOp(lbs, ubs, steps, body, init_values)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


# --- memref ------------------------------------------------------------------------------

class MemrefGlobal(memref.GlobalOp):
    """`memref.global "private" constant @c : memref<3xf64> = dense<[...]>`
    (also `= uninitialized`; the dense literal takes the memref's shape)."""

    @classmethod
    def parse(cls, parser: Parser) -> memref.GlobalOp:
        start = parser.pos
        visibility = parser.parse_optional_str_literal() or "public"
        constant = UnitAttr() if parser.parse_optional_keyword("constant") else None
        name = parser.parse_symbol_name()
        parser.parse_punctuation(":")
        mtype = parser.parse_type()
        if not isinstance(mtype, MemRefType):
            parser.raise_error(f"memref.global needs a memref type, not {mtype}", start, parser.pos)
        if not parser.parse_optional_punctuation("="):
            parser.raise_error(
                f"memref.global @{name.data} has no initial value (an external global): adpasses "
                "needs `= dense<...>` or `= uninitialized`", start, parser.pos)
        initial: Attribute
        if parser.parse_optional_keyword("uninitialized"):
            initial = UnitAttr()
        elif parser.parse_optional_keyword("dense_resource"):
            # `dense_resource<blob1>`: the bytes come at the end of the file
            # (adpasses/core/resources.py replaces it by dense elements)
            parser.parse_punctuation("<")
            key = parser._parse_dialect_resource_handle("builtin", None)  # type: ignore[arg-type]
            parser.parse_punctuation(">")
            initial = DenseResourceAttr.from_params(key, TensorType(mtype.element_type, mtype.get_shape()))
        else:
            if not parser.parse_optional_keyword("dense"):
                parser.raise_error(f"memref.global @{name.data}: expected `dense<...>`, `dense_resource<...>` "
                                   "or `uninitialized` as the initial value")
            initial = parser.parse_dense_int_or_fp_elements_attr(
                TensorType(mtype.element_type, mtype.get_shape()))
        attrs = parser.parse_optional_attr_dict()
        alignment = attrs.pop("alignment", None)
        op = memref.GlobalOp.get(name, mtype, initial, StringAttr(visibility), constant, alignment)
        op.attributes |= attrs
        return op


class MemrefCopy(memref.CopyOp):
    """`memref.copy %a, %b : memref<3xf64> to memref<3xf64>`."""

    @classmethod
    def parse(cls, parser: Parser) -> memref.CopyOp:
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        dst = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        src_type = parser.parse_type()
        parser.parse_keyword("to")
        dst_type = parser.parse_type()
        op = memref.CopyOp(parser.resolve_operand(src, src_type), parser.resolve_operand(dst, dst_type))
        op.attributes |= attrs
        return op


class MemrefCast(memref.CastOp):
    """`memref.cast %a : memref<3xf64> to memref<?xf64>`."""

    @classmethod
    def parse(cls, parser: Parser) -> memref.CastOp:
        src = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        src_type = parser.parse_type()
        parser.parse_keyword("to")
        dst_type = parser.parse_type()
        op = memref.CastOp.get(parser.resolve_operand(src, src_type), dst_type)  # type: ignore[arg-type]
        op.attributes |= attrs
        return op


class MemrefRank(memref.RankOp):
    """`memref.rank %a : memref<?xf64>`."""

    @classmethod
    def parse(cls, parser: Parser) -> memref.RankOp:
        src = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = memref.RankOp.from_memref(parser.resolve_operand(src, parser.parse_type()))
        op.attributes |= attrs
        return op


class MemrefAllocaScope(memref.AllocaScopeOp):
    """`memref.alloca_scope -> (f64) {...}` (the return without operands elided)."""

    @classmethod
    def parse(cls, parser: Parser) -> memref.AllocaScopeOp:
        types = _types_after_arrow(parser)
        region = _with_terminator(parser.parse_region(), memref.AllocaScopeReturnOp.create)
        op = memref.AllocaScopeOp.build(result_types=[types], regions=[region])
        op.attributes |= parser.parse_optional_attr_dict()
        return op


class MemrefAllocaScopeReturn(memref.AllocaScopeReturnOp):
    """`memref.alloca_scope.return %v : f64`."""

    @classmethod
    def parse(cls, parser: Parser) -> memref.AllocaScopeReturnOp:
        attrs = parser.parse_optional_attr_dict()
        pos = parser.pos
        values: list[SSAValue] = []
        operands = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand)
        if operands:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            values = parser.resolve_operands(operands, types, pos)
        op = memref.AllocaScopeReturnOp.build(operands=[values])
        op.attributes |= attrs
        return op


# --- affine ------------------------------------------------------------------------------

class AffineIf(affine.IfOp):
    """`affine.if #set(%d)[%s] -> f64 {...} else {...}`."""

    @classmethod
    def parse(cls, parser: Parser) -> affine.IfOp:
        pos = parser.pos
        condition = parser.parse_attribute()
        if not isinstance(condition, AffineSetAttr):
            parser.raise_error("affine.if expects an affine set (#set or affine_set<...>)", pos, parser.pos)
        dims = parser.parse_optional_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_operand(IndexType())) or []
        syms = parser.parse_optional_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_operand(IndexType())) or []
        types = _types_after_arrow(parser)
        then_region = _with_terminator(parser.parse_region(), affine.YieldOp.create)
        else_region = (_with_terminator(parser.parse_region(), affine.YieldOp.create)
                       if parser.parse_optional_keyword("else") else Region())
        op = affine.IfOp.build(operands=[[*dims, *syms]], result_types=[types],
                               properties={"condition": condition}, regions=[then_region, else_region])
        op.attributes |= parser.parse_optional_attr_dict()
        return op


class _AffineBoundParser:
    """Upstream's bound syntax of affine.parallel: affine expressions in
    which an SSA value is a dimension and `symbol(%v)` a symbol
    (`%i + 1`, `symbol(%n) floordiv 2`, `max(0, %i - 2)`)."""

    def __init__(self, parser: Parser, symbols_as_dims: bool = False):
        self.p = parser
        self.dims: list[UnresolvedOperand] = []
        self.syms: list[UnresolvedOperand] = []
        self.symbols_as_dims = symbols_as_dims

    def _position(self, operand: UnresolvedOperand, into: list[UnresolvedOperand]) -> int:
        for k, seen in enumerate(into):
            if seen.operand_name == operand.operand_name and seen.index == operand.index:
                return k
        into.append(operand)
        return len(into) - 1

    def atom(self) -> AffineExpr:
        p = self.p
        if p.parse_optional_punctuation("-"):
            return -self.atom()
        if p.parse_optional_punctuation("("):
            e = self.expr()
            p.parse_punctuation(")")
            return e
        if p.parse_optional_keyword("symbol"):
            p.parse_punctuation("(")
            operand = p.parse_unresolved_operand()
            e = (AffineExpr.dimension(self._position(operand, self.dims)) if self.symbols_as_dims
                 else AffineExpr.symbol(self._position(operand, self.syms)))
            p.parse_punctuation(")")
            return e
        if (v := p.parse_optional_unresolved_operand()) is not None:
            return AffineExpr.dimension(self._position(v, self.dims))
        return AffineExpr.constant(p.parse_integer())

    def term(self) -> AffineExpr:
        e = self.atom()
        while True:
            if self.p.parse_optional_punctuation("*"):
                e = e * self.atom()
            elif self.p.parse_optional_keyword("floordiv"):
                e = e // self.atom()
            elif self.p.parse_optional_keyword("ceildiv"):
                e = e.ceil_div(self.atom())
            elif self.p.parse_optional_keyword("mod"):
                e = e % self.atom()
            else:
                return e

    def expr(self) -> AffineExpr:
        e = self.term()
        while True:
            if self.p.parse_optional_punctuation("+"):
                e = e + self.term()
            elif self.p.parse_optional_punctuation("-"):
                e = e - self.term()
            else:
                return e

    def bounds(self, combiner: str) -> tuple[AffineMapAttr, list[int]]:
        """`(b1, b2, ...)` where each `b` is an expression or
        `combiner(e1, e2, ...)`: the map of all results and the group sizes."""
        results: list[AffineExpr] = []
        groups: list[int] = []

        def bound() -> None:
            if self.p.parse_optional_keyword(combiner):
                group = self.p.parse_comma_separated_list(self.p.Delimiter.PAREN, self.expr)
            else:
                group = [self.expr()]
            results.extend(group)
            groups.append(len(group))

        self.p.parse_comma_separated_list(self.p.Delimiter.PAREN, bound)
        return AffineMapAttr(AffineMap(len(self.dims), len(self.syms), tuple(results))), groups

    def operands(self) -> list[SSAValue]:
        return _index_operands(self.p, [*self.dims, *self.syms])


def parse_affine_map_of_ssa_ids(parser: Parser) -> tuple[AffineMap, list[SSAValue]]:
    """`[e1, e2, ...]`, expressions of SSA values and `symbol(%v)`: the map
    and its operands. Every operand is a dimension (a valid symbol is a valid
    dimension for upstream; xDSL's printer of affine.load/store numbers
    symbols as if they were the first operands, so a map with both would
    print wrong)."""
    exprs = _AffineBoundParser(parser, symbols_as_dims=True)
    results = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, exprs.expr)
    return AffineMap(len(exprs.dims), len(exprs.syms), tuple(results)), exprs.operands()


class AffineParallel(affine.ParallelOp):
    """`affine.parallel (%i, %j) = (0, 0) to (symbol(%n), %m - 1) step (1, 2) {...}`
    (without `reduce`)."""

    @classmethod
    def parse(cls, parser: Parser) -> affine.ParallelOp:
        start = parser.pos
        ivs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=False))
        parser.parse_punctuation("=")
        lower = _AffineBoundParser(parser)
        lb_map, lb_groups = lower.bounds("max")
        parser.parse_keyword("to")
        upper = _AffineBoundParser(parser)
        ub_map, ub_groups = upper.bounds("min")
        steps = [1] * len(ivs)
        if parser.parse_optional_keyword("step"):
            steps = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_integer)
        if parser.parse_optional_keyword("reduce") or parser.parse_optional_punctuation("->"):
            parser.raise_error("affine.parallel with reductions is not supported by adpasses; write "
                               "affine.for (or scf.for) with iter_args", start, parser.pos)
        if not len(ivs) == len(lb_groups) == len(ub_groups) == len(steps):
            parser.raise_error("affine.parallel needs one lower bound, upper bound and step per "
                               "induction variable", start, parser.pos)
        body = _with_terminator(parser.parse_region([iv.resolve(IndexType()) for iv in ivs]),
                                affine.YieldOp.create)

        def groups(sizes: list[int]) -> DenseIntOrFPElementsAttr:
            return DenseIntOrFPElementsAttr.from_list(TensorType(i32, [len(sizes)]), sizes)

        op = affine.ParallelOp.build(
            operands=[[*lower.operands(), *upper.operands()]], result_types=[[]], regions=[body],
            properties={"reductions": ArrayAttr([]), "lowerBoundsMap": lb_map,
                        "lowerBoundsGroups": groups(lb_groups), "upperBoundsMap": ub_map,
                        "upperBoundsGroups": groups(ub_groups),
                        "steps": ArrayAttr([IntegerAttr(k, i64) for k in steps])})
        op.attributes |= parser.parse_optional_attr_dict()
        return op


# --- arith: trunci/extui with overflow flags ---------------------------------------------

def _drop_overflow_flags(properties: dict[str, Attribute] | None) -> dict[str, Attribute]:
    """Newer MLIR gives arith.trunci an `overflowFlags` property (nsw/nuw:
    the result is poison on overflow). xDSL's op has none; without the flags
    the op is defined everywhere, which refines the flagged one."""
    props = dict(properties or {})
    if isinstance(props.get("overflowFlags"), IntegerOverflowAttr):
        del props["overflowFlags"]
    return props


def _cast_hook(base: type[Operation]) -> type[Operation]:
    class Hook(base):  # type: ignore[valid-type, misc]
        @classmethod
        def create(cls, *, properties=None, **kwargs):  # type: ignore[no-untyped-def]
            return base.create(properties=_drop_overflow_flags(properties), **kwargs)

        @classmethod
        def parse(cls, parser: Parser) -> Operation:
            src = parser.parse_unresolved_operand()
            if parser.parse_optional_keyword("overflow"):
                parser.parse_punctuation("<")
                parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_identifier)
                parser.parse_punctuation(">")
            attrs = parser.parse_optional_attr_dict()
            parser.parse_punctuation(":")
            src_type = parser.parse_type()
            parser.parse_keyword("to")
            op = base(parser.resolve_operand(src, src_type), parser.parse_type())  # type: ignore[call-arg]
            op.attributes |= attrs
            return op

    Hook.__name__ = Hook.__qualname__ = f"Upstream{base.__name__}"
    return Hook


def _fix_affine_access_printing() -> None:
    """xDSL 0.74 prints `affine.load %x[...]` (and store, vector_load)
    with symbol k as operand k, not operand num_dims + k: a map with
    dimensions and symbols (from the generic form) printed as a different
    access. Its printer is given the map with the symbols renumbered as the
    dimensions after the others, which prints the same operands."""
    original = affine._print_affine_map_of_ssa_ids
    if getattr(original, "__adpasses_fixed__", False):
        return

    def print_map(printer, map: AffineMap, operands):  # type: ignore[no-untyped-def]
        if map.num_symbols:
            dims = [AffineExpr.dimension(i) for i in range(map.num_dims)]
            syms = [AffineExpr.dimension(map.num_dims + i) for i in range(map.num_symbols)]
            map = AffineMap(map.num_dims + map.num_symbols, 0, map.replace_dims_and_symbols(
                dims, syms, map.num_dims + map.num_symbols, 0).results)
        return original(printer, map, operands)

    print_map.__adpasses_fixed__ = True  # type: ignore[attr-defined]
    affine._print_affine_map_of_ssa_ids = print_map  # type: ignore[attr-defined]


_fix_affine_access_printing()


def _generic_form_builds_base(hook: type[Operation]) -> type[Operation]:
    """The generic form (`"scf.for"(...)`) also goes through the hook
    class: its `create` builds xDSL's op, not the hook."""
    if "create" not in vars(hook):
        base = hook.__mro__[1]
        hook.create = classmethod(lambda cls, **kwargs: base.create(**kwargs))  # type: ignore[method-assign, assignment]
    return hook


PARSE_HOOKS: dict[str, type[Operation]] = {
    "scf.for": ScfFor,
    "scf.if": ScfIf,
    "scf.parallel": ScfParallel,
    "memref.global": MemrefGlobal,
    "memref.copy": MemrefCopy,
    "memref.cast": MemrefCast,
    "memref.rank": MemrefRank,
    "memref.alloca_scope": MemrefAllocaScope,
    "memref.alloca_scope.return": MemrefAllocaScopeReturn,
    "affine.if": AffineIf,
    "affine.parallel": AffineParallel,
    "arith.trunci": _cast_hook(arith.TruncIOp),
    "arith.extui": _cast_hook(arith.ExtUIOp),
}
for _hook in PARSE_HOOKS.values():
    _generic_form_builds_base(_hook)
