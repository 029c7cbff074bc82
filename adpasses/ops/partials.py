"""Partial derivatives as small expressions, and the adjoints derived from them.

An op's entry (`adpasses/ops/<dialect>.py`) writes its partial derivatives
once, as a function of symbolic operands and result:

    partials=lambda x, r: [r]                          # d exp(x)/dx = exp(x)
    partials=lambda a, b, r: [1 / b, -(1 / b * r)]     # a / b

The symbols are `Expr`s: `+ - * /` and unary `-` build float (or, on
integer operands, integer) arithmetic; `select`, `cmpf`, `cmpi`, `call`
(any op class of the table or xDSL, e.g. `call(math.CosOp, x)`),
`to_float`, `typed` (a constant of a given type) build the rest; Python numbers become constants of the type of
the value they meet. A partial is None where the operand has no derivative
(an integer operand, a piecewise-constant op).

From the partials, generically:
- `needs(op, want)`: the primal values (operands, result) the wanted
  partials read, i.e. what the cache planner must make available in the
  reverse sweep (a trace of the expressions, never declared by hand);
- `emit_adjoints(sink, op, g, want)`: the adjoint of each wanted operand,
  `g * partial` in the reverse sweep's IR;
- `emit_tangents(sink, op, lanes)`: forward mode's tangent of the result,
  the same products with the operands' tangents, summed (one per lane of
  vector mode, the partials emitted once).

`g * partial` is folded where that is exact or the more accurate form:
`g * 1 = g`, `g * -1 = -g`, `g * 0 = 0`, `g * -p = -(g * p)`,
`g * select(c, p, q) = select(c, g * p, g * q)`, `g * (1 / d) = g / d`,
`g * (p / d) = (g * p) / d`, `g * ((1 / d) * p) = (g / d) * p`.
Each distinct expression is emitted once, in the order the partials
created it (an adjoint right after the partial it scales), and always after
its arguments (a product with an operand folded into a partial, `g * x` in
`select(cmpf("oeq", x, 0), 0, x / y)`, is made at the operand's turn, later
than the node that uses it); a constant is created where it is written, so
`c(1.0) + r * r` places the constant first.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Protocol

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Operation, OpResult, SSAValue

from adpasses.core.types import is_float_type

_SEQ = itertools.count()


class Expr:
    """A symbolic value of a partial derivative. Structural: two Exprs that
    compute the same thing are equal (so shared subexpressions are emitted
    once); build comparisons with `cmpf`/`cmpi`, not `==`."""

    __slots__ = ("kind", "data", "args", "key", "seq", "constant")

    def __init__(self, kind: str, data: object = None, args: Sequence[Expr] = (),
                 seq: tuple[int, ...] | None = None, constant: int | float | None = None):
        self.kind = kind
        self.data = data
        self.args = tuple(args)
        self.key = (kind, data, tuple(a.key for a in self.args))
        self.seq = seq if seq is not None else (next(_SEQ),)
        self.constant = constant  # leaves of constant operands: their value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expr) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        if not self.args:
            return f"{self.kind}({self.data})" if self.data is not None else self.kind
        return f"{self.kind}{'[' + str(self.data) + ']' if self.data is not None else ''}({', '.join(map(repr, self.args))})"

    def __add__(self, o: object) -> Expr: return Expr("add", None, (self, lift(o)))
    def __radd__(self, o: object) -> Expr: return Expr("add", None, (lift(o), self))
    def __sub__(self, o: object) -> Expr: return Expr("sub", None, (self, lift(o)))
    def __rsub__(self, o: object) -> Expr: return Expr("sub", None, (lift(o), self))
    def __mul__(self, o: object) -> Expr: return Expr("mul", None, (self, lift(o)))
    def __rmul__(self, o: object) -> Expr: return Expr("mul", None, (lift(o), self))
    def __truediv__(self, o: object) -> Expr: return Expr("div", None, (self, lift(o)))
    def __rtruediv__(self, o: object) -> Expr: return Expr("div", None, (lift(o), self))
    def __neg__(self) -> Expr: return Expr("neg", None, (self,))


def c(value: float | int) -> Expr:
    """A constant, of the type of the value it meets (created here, so
    emitted before what is written after it)."""
    return Expr("const", value)


def typed(value: float | int, type_: Attribute) -> Expr:
    """A constant of the given type (an integer operand of a `call`, such
    as polygamma's order, where no other operand gives the type)."""
    return Expr("typed_const", (value, type_))


def lift(value: object) -> Expr:
    if isinstance(value, Expr):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return c(value)
    raise TypeError(f"a partial derivative cannot use {value!r}")


def select(cond: Expr, a: object, b: object) -> Expr:
    return Expr("select", None, (cond, lift(a), lift(b)))


def cmpf(predicate: str, a: object, b: object) -> Expr:
    return Expr("cmpf", predicate, (lift(a), lift(b)))


def cmpi(predicate: str, a: object, b: object) -> Expr:
    return Expr("cmpi", predicate, (lift(a), lift(b)))


def call(op_class: type[Operation], *args: object) -> Expr:
    """`op_class(*args)`: an op of one result (math.CosOp, math.PowFOp, ...)."""
    return Expr("call", op_class, tuple(lift(a) for a in args))


def to_float(n: Expr) -> Expr:
    """An integer (or index) operand as a float of the op's float type."""
    return Expr("to_float", None, (n,))



def _is_const(e: Expr, value: float) -> bool:
    return e.kind == "const" and e.data == value


Partials = Callable[..., Sequence["Expr | None"]]
"""(operand symbols..., r=result symbol) -> one partial per operand."""


# -- tracing ----------------------------------------------------------------

def _constant_of(value: SSAValue) -> int | float | None:
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def trace(partials: Partials, op: Operation | None, arity: int) -> tuple[list[Expr | None], dict[Expr, SSAValue]]:
    """The partials of `op` (or of an op with `arity` operands, symbolically)
    and what each leaf stands for."""
    leaves: dict[Expr, SSAValue] = {}
    operands = []
    for i in range(arity):
        value = op.operands[i] if op is not None else None
        leaf = Expr("operand", i, constant=_constant_of(value) if value is not None else None)
        if value is not None:
            leaves[leaf] = value
        operands.append(leaf)
    result = Expr("result")
    if op is not None:
        leaves[result] = op.results[0]
    got = [None if p is None else lift(p) for p in partials(*operands, r=result)]
    if len(got) != arity:
        raise ValueError(f"partials give {len(got)} derivatives for {arity} operands")
    return got, leaves


def _leaves_of(e: Expr, out: list[Expr]) -> None:
    if e.kind in ("operand", "result"):
        if e not in out:
            out.append(e)
    for a in e.args:
        _leaves_of(a, out)


def needs(partials: Partials, op: Operation, want: Sequence[bool]) -> list[SSAValue]:
    """The primal values the wanted partials read."""
    got, leaves = trace(partials, op, len(op.operands))
    read: list[Expr] = []
    for p, w in zip(got, want):
        if w and p is not None:
            _leaves_of(p, read)
    return [leaves[leaf] for leaf in read]


# -- adjoints ---------------------------------------------------------------

G = "adjoint"


def scale(g: Expr, p: Expr, turn: tuple[int, ...] = ()) -> Expr:
    """g * p, folded (see the module docstring); new nodes are ordered
    right after the partial they come from, or, for a partial that is an
    operand or the result itself, at `turn` (the operand's place among
    the adjoints)."""

    def _after(p: Expr, k: int) -> tuple[int, ...]:
        return (*(turn or p.seq), k) if p.kind in ("operand", "result") else (*p.seq, k)

    if _is_const(p, 1):
        return g
    if _is_const(p, -1):
        return Expr("neg", None, (g,), seq=_after(p, 1))
    if _is_const(p, 0):
        return Expr("zero", None, (), seq=_after(p, 1))
    if p.kind == "neg":
        return Expr("neg", None, (scale(g, p.args[0], turn),), seq=_after(p, 1))
    if p.kind == "select":
        cond, a, b = p.args
        return Expr("select", None, (cond, scale(g, a, turn), scale(g, b, turn)), seq=_after(p, 1))
    if p.kind == "div":
        num, den = p.args
        top = g if _is_const(num, 1) else scale(g, num, turn)
        return Expr("div", None, (top, den), seq=_after(p, 1))
    if p.kind == "mul" and p.args[0].kind == "div" and _is_const(p.args[0].args[0], 1):
        return Expr("mul", None, (scale(g, p.args[0], turn), p.args[1]), seq=_after(p, 1))
    return Expr("mul", None, (g, p), seq=_after(p, 1))


class Sink(Protocol):
    """Where adjoint code goes (the reverse sweep's context)."""

    def primal(self, value: SSAValue) -> SSAValue: ...
    def insert(self, op: Operation) -> Operation: ...
    def const(self, x: float, type_: Attribute) -> SSAValue: ...


def emit_contraction(sink: Sink, pairs: Sequence[tuple[SSAValue, SSAValue]],
                     strong_zero: bool = False) -> SSAValue | None:
    """sum(a * b) over `pairs` (None for none): a cotangent contracted with
    the tangents of a forward rule, which is how reverse mode uses a rule
    that only has a forward derivative (a custom jvp rule). With
    `strong_zero` each term is `a == 0 ? 0 : a * b` (a zero cotangent gives
    nothing, even through an inf or nan tangent)."""
    total: SSAValue | None = None
    for a, b in pairs:
        term = sink.insert(arith.MulfOp(a, b)).results[0]
        if strong_zero:
            zero = sink.insert(arith.ConstantOp(FloatAttr(0.0, a.type))).results[0]
            is_zero = sink.insert(arith.CmpfOp(a, zero, "oeq")).results[0]
            term = sink.insert(arith.SelectOp(is_zero, zero, term)).results[0]
        total = term if total is None else sink.insert(arith.AddfOp(total, term)).results[0]
    return total


def emit_adjoints(
    partials: Partials, sink: Sink, op: Operation, g: SSAValue, want: Sequence[bool],
    strong_zero: bool = False,
) -> list[SSAValue | None]:
    """One adjoint per operand (None where not wanted or no derivative).
    With `strong_zero` (Enzyme's flag), an adjoint that is not `g` or `-g`
    is `select(g == 0, 0, g * partial)`: a zero seed gives a zero adjoint
    even where the partial is inf or nan."""
    got, leaves = trace(partials, op, len(op.operands))
    seed = Expr(G, seq=(-1,))
    end = next(_SEQ)
    adjoints = [scale(seed, p, (end, i)) if w and p is not None else None
                for i, (p, w) in enumerate(zip(got, want))]
    if strong_zero:
        adjoints = [_strong_zero(seed, a) for a in adjoints]
    emitter = _Emitter(sink, leaves, seed, g)
    values = emitter.emit_all([a for a in adjoints if a is not None])
    out: list[SSAValue | None] = []
    for a, operand in zip(adjoints, op.operands):
        if a is None:
            out.append(None)
            continue
        out.append(emitter.convert(values[a], operand.type))
    return out


def _strong_zero(seed: Expr, adjoint: Expr | None) -> Expr | None:
    """`select(seed == 0, 0, adjoint)`, unless the adjoint is exact at a
    zero seed already (the seed itself, its negation, a constant zero)."""
    if adjoint is None or adjoint is seed or adjoint.kind == "zero" or (
            adjoint.kind == "neg" and adjoint.args[0] is seed):
        return adjoint
    return select(cmpf("oeq", seed, 0), 0, adjoint)


def emit_tangents(
    partials: Partials, sink: Sink, op: Operation, lanes: Sequence[Sequence[SSAValue | None]]
) -> list[SSAValue]:
    """Forward mode: the tangent of `op`'s result for each lane, from the
    same partials: `sum_i partial_i * t_i` over the operands with a tangent
    (`lanes[k][i]`, None for an operand without one), each product folded
    like an adjoint (`scale`). Partials shared by the lanes are emitted
    once. A lane where no operand contributes gets a zero. `sink.primal`
    maps the leaves (`op`'s operands and result) to values; each tangent is
    converted to the result's type (extf's tangent is extf'd)."""
    got, leaves = trace(partials, op, len(op.operands))
    result_type = op.results[0].type
    emitter = _Emitter(sink, leaves, None, None, float_type=result_type)
    out: list[SSAValue] = []
    for k, tangents in enumerate(lanes):
        terms: list[Expr] = []
        for i, (p, t) in enumerate(zip(got, tangents)):
            if p is None or t is None:
                continue
            leaf = Expr("tangent", (k, i))
            emitter.values[leaf] = _convert(sink, t, result_type)
            term = scale(leaf, p, (next(_SEQ), i))
            if term.kind != "zero":
                terms.append(term)
        if not terms:
            out.append(sink.const(0, result_type))
            continue
        total = terms[0]
        for term in terms[1:]:
            total = Expr("add", None, (total, term), seq=(next(_SEQ),))
        values = emitter.emit_all([total])
        out.append(emitter.convert(values[total], result_type))
    return out


def _convert(sink: Sink, value: SSAValue, type_: Attribute) -> SSAValue:
    """`value` in float type `type_` (a tangent of extf/truncf's operand)."""
    if value.type == type_ or not is_float_type(value.type):
        return value
    wider = _float_width(type_) > _float_width(value.type)
    return sink.insert(arith.ExtFOp(value, type_) if wider else arith.TruncFOp(value, type_)).results[0]


class _Emitter:
    def __init__(self, sink: Sink, leaves: dict[Expr, SSAValue], seed: Expr | None,
                 g: SSAValue | None, float_type: Attribute | None = None):
        self.sink = sink
        self.leaves = leaves
        self.values: dict[Expr, SSAValue] = {seed: g} if seed is not None and g is not None else {}
        self.float_type = g.type if g is not None else float_type

    def emit_all(self, roots: Sequence[Expr]) -> dict[Expr, SSAValue]:
        """Emit every node the roots reach, each once, in creation order;
        a constant where it was created, of the type of the value it meets."""
        nodes: dict[Expr, Expr] = {}
        consts: dict[tuple[object, Attribute], tuple[int, ...]] = {}

        def collect(e: Expr) -> None:
            known = nodes.get(e)
            if known is not None and known.seq <= e.seq:
                return
            nodes[e] = e
            for a in e.args:
                if a.kind == "const":
                    key = (a.data, self._const_type(e))
                    consts[key] = min(consts.get(key, a.seq), a.seq)
                else:
                    collect(a)

        for r in roots:
            collect(r)
        order = [(e.seq, e) for e in nodes.values()] + [(seq, key) for key, seq in consts.items()]
        for _, item in sorted(order, key=lambda t: t[0]):
            if isinstance(item, tuple):
                self.sink.const(item[0], item[1])
            else:
                self._emit_after_args(item)
        return self.values

    def _emit_after_args(self, e: Expr) -> None:
        """Emit `e`, its arguments first. Creation order is only a
        preference: a product folded into a partial (`g * x` inside
        `select(c, 0, x / y)`, `-(x)`, `x / y`) is placed at its operand's
        turn, which may come after the node that uses it."""
        if e in self.values:
            return
        for a in e.args:
            if a.kind != "const":
                self._emit_after_args(a)
        self.values[e] = self._emit(e)

    def _type(self, e: Expr) -> Attribute | None:
        k = e.kind
        if k in ("operand", "result"):
            return self.leaves[e].type
        if k in (G, "zero", "to_float", "tangent"):
            return self.float_type
        if k == "const":
            return None
        if k == "typed_const":
            return e.data[1]
        if k in ("cmpf", "cmpi"):
            return IntegerType(1)
        args = e.args[1:] if k == "select" else e.args
        return next((t for t in map(self._type, args) if t is not None), None)

    def _const_type(self, user: Expr) -> Attribute:
        """A constant operand of `user` has the type of its other operands
        (the select's branches, the compared values)."""
        args = user.args[1:] if user.kind == "select" else user.args
        return next((t for t in map(self._type, args) if t is not None), self.float_type)

    def _args(self, e: Expr) -> list[SSAValue]:
        return [self.sink.const(a.data, self._const_type(e)) if a.kind == "const" else self.values[a]
                for a in e.args]

    def _emit(self, e: Expr) -> SSAValue:
        k = e.kind
        if k in ("operand", "result"):
            return self.sink.primal(self.leaves[e])
        if k == "zero":
            return self.sink.const(0, self.float_type)
        if k == "typed_const":
            return self.sink.const(*e.data)
        if k == "to_float":
            (n,) = self._args(e)
            if isinstance(n.type, IndexType):
                n = self._insert(arith.IndexCastOp(n, IntegerType(64)))
            return self._insert(arith.SIToFPOp(n, self.float_type))
        args = self._args(e)
        if k == "neg":
            return self._insert(arith.NegfOp(args[0]))
        if k in _ARITH:
            float_op, int_op = _ARITH[k]
            cls = float_op if is_float_type(args[0].type) else int_op
            if cls is None:
                raise TypeError(f"no integer form of {k} in a partial derivative")
            return self._insert(cls(args[0], args[1]))
        if k == "select":
            return self._insert(arith.SelectOp(*args))
        if k == "cmpf":
            return self._insert(arith.CmpfOp(args[0], args[1], e.data))
        if k == "cmpi":
            return self._insert(arith.CmpiOp(args[0], args[1], e.data))
        if k == "call":
            return self._insert(e.data(*args))
        raise AssertionError(f"unknown partial node {k}")

    def _insert(self, op: Operation) -> SSAValue:
        return self.sink.insert(op).results[0]

    def convert(self, value: SSAValue, type_: Attribute) -> SSAValue:
        """The adjoint in the operand's float type (extf, truncf)."""
        if value.type == type_:
            return value
        wider = _float_width(type_) > _float_width(value.type)
        return self._insert(arith.ExtFOp(value, type_) if wider else arith.TruncFOp(value, type_))


_ARITH = {
    "add": (arith.AddfOp, arith.AddiOp),
    "sub": (arith.SubfOp, arith.SubiOp),
    "mul": (arith.MulfOp, arith.MuliOp),
    "div": (arith.DivfOp, None),
}


def _float_width(t: Attribute) -> int:
    return t.bitwidth  # type: ignore[attr-defined]
