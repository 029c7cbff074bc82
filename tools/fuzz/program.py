"""The language of generated programs, and its validity rules.

A generated program is a small structured language (this module), printed
two ways: as MLIR (`to_mlir.py`, what the compiler differentiates) and as a
plain Python function (`to_python.py`, the independent oracle). Float
variables are mutable here; the MLIR printer turns them into SSA values,
threading the ones a loop or branch changes through iter_args and results.
Keeping the program as a tree (not as MLIR) is what makes shrinking easy:
dropping a statement or replacing an expression by an operand is a tree
edit, and `validate` says whether the edit still gives a valid program.

Every node is a frozen dataclass, so shrinking builds new trees with
`dataclasses.replace` and programs can be compared and hashed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Union

MAX_TRIP = 8
"""Most iterations of one loop (keeps the oracle and finite differences fast)."""


# -- index expressions --------------------------------------------------------


@dataclass(frozen=True)
class Dim:
    """`memref.dim` of a memref argument (sizes of arguments are fixed per
    program, so its value is known when generating)."""

    mem: str
    axis: int


Symbol = Union[str, Dim]
"""An index value: a loop induction variable, a while counter, an index
argument (by name), or the size of an argument."""


@dataclass(frozen=True)
class Idx:
    """`const + sum(coef * symbol)`: an affine index."""

    const: int
    terms: tuple[tuple[int, Symbol], ...] = ()

    def symbols(self) -> list[Symbol]:
        return [s for _, s in self.terms]

    def substitute(self, name: str, value: Idx) -> Idx:
        const, terms = self.const, []
        for coef, sym in self.terms:
            if sym == name:
                const += coef * value.const
                terms += [(coef * c, s) for c, s in value.terms]
            else:
                terms.append((coef, sym))
        return Idx(const, tuple(terms))


# -- float expressions ----------------------------------------------------------


class Expr:
    pass


@dataclass(frozen=True)
class Const(Expr):
    value: float


@dataclass(frozen=True)
class Var(Expr):
    name: str


@dataclass(frozen=True)
class Load(Expr):
    mem: str
    idx: tuple[Idx, ...]


@dataclass(frozen=True)
class Op(Expr):
    """A float op from `ops.OPS` applied to float operands."""

    op: str
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class PowI(Expr):
    """`math.fpowi` with a constant i32 exponent."""

    base: Expr
    n: int


@dataclass(frozen=True)
class Select(Expr):
    cond: Cond
    a: Expr
    b: Expr


@dataclass(frozen=True)
class IndexToFloat(Expr):
    """`sitofp(index_cast(idx))`: a float that never carries a derivative."""

    idx: Idx


@dataclass(frozen=True)
class F32(Expr):
    """`extf(truncf(x))`: a round trip through f32."""

    x: Expr


@dataclass(frozen=True)
class FCmp:
    pred: str
    a: Expr
    b: Expr


@dataclass(frozen=True)
class ICmp:
    pred: str
    a: Idx
    b: Idx


Cond = Union[FCmp, ICmp]


# -- statements ---------------------------------------------------------------


class Stmt:
    pass


@dataclass(frozen=True)
class Let(Stmt):
    """Define a new float variable (local to the enclosing block)."""

    var: str
    expr: Expr


@dataclass(frozen=True)
class Assign(Stmt):
    var: str
    expr: Expr


@dataclass(frozen=True)
class Store(Stmt):
    mem: str
    idx: tuple[Idx, ...]
    expr: Expr


@dataclass(frozen=True)
class For(Stmt):
    iv: str
    lb: Idx
    ub: Idx
    step: int
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class If(Stmt):
    cond: Cond
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]


@dataclass(frozen=True)
class While(Stmt):
    """`counter = 0; while counter < limit and cond: body; counter += 1`.

    The condition may not read the counter nor memory indexed by it (in
    the `before` region the counter can equal `limit`)."""

    counter: str
    limit: int
    cond: FCmp | None
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Alloc(Stmt):
    """A local buffer, every element set to `fill` (so nothing reads
    uninitialised memory); `alloc` buffers are freed at the end of their
    block. `dynamic` gives the size of a rank-1 buffer as an index value."""

    mem: str
    shape: tuple[int, ...]
    kind: str  # "alloc" | "alloca"
    fill: Expr
    dynamic: Symbol | None = None


@dataclass(frozen=True)
class View(Stmt):
    """`memref.subview`: per source dimension an offset, a size and a
    stride; `keep[d]` False drops dimension d (its size is 1)."""

    mem: str
    source: str
    offsets: tuple[Idx, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    keep: tuple[bool, ...]


@dataclass(frozen=True)
class Copy(Stmt):
    """`memref.copy` between two distinct memory objects of one shape."""

    src: str
    dst: str


# -- arguments and programs ---------------------------------------------------------


@dataclass(frozen=True)
class MemArg:
    """A memref<...xf64> argument: a view of base buffer `buffer` starting at
    `offset` with element `strides`. Arguments sharing a buffer alias.
    `strided` selects the fully dynamic strided layout (any view) instead of
    the identity layout (which needs a C-contiguous whole buffer)."""

    name: str
    shape: tuple[int, ...]
    activity: str  # const | dup | dupnoneed
    buffer: int
    offset: int = 0
    strides: tuple[int, ...] = ()
    strided: bool = False
    static_shape: bool = False
    noalias: bool = False


@dataclass(frozen=True)
class FloatArg:
    name: str
    activity: str  # const | active


@dataclass(frozen=True)
class IndexArg:
    """An index argument (always const) with its fixed value: dynamic bounds."""

    name: str
    value: int


Arg = Union[MemArg, FloatArg, IndexArg]


@dataclass(frozen=True)
class Options:
    """How the case is compiled."""

    policy: str = "minimal"  # minimal | min-memory | tape-all
    activity: bool = True
    with_primal: bool = False
    opt_level: int = 3
    boundscheck: bool = True
    simplify: bool = True
    """canonicalize + cse on the gradient (ad-opt's default); False is the
    Python API's path (transforms/dead_forward instead)."""


@dataclass(frozen=True)
class Program:
    seed: int
    args: tuple[Arg, ...]
    buffers: tuple[int, ...]
    """Size (in elements) of each base buffer the memref arguments view."""
    body: tuple[Stmt, ...]
    results: tuple[Expr, ...]
    ret_activity: tuple[str, ...]
    options: Options = field(default_factory=Options)
    name: str = "f"

    @property
    def activity(self) -> list[str]:
        return [a.activity if not isinstance(a, IndexArg) else "const" for a in self.args]

    def args_by_name(self) -> dict[str, Arg]:
        return {a.name: a for a in self.args}


def c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, running = [], 1
    for s in reversed(shape):
        strides.append(running)
        running *= s
    return tuple(reversed(strides))


# -- traversal helpers --------------------------------------------------------------


def child_blocks(s: Stmt) -> list[tuple[Stmt, ...]]:
    if isinstance(s, For | While):
        return [s.body]
    if isinstance(s, If):
        return [s.then, s.orelse]
    return []


def walk_stmts(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    for s in body:
        yield s
        for b in child_blocks(s):
            yield from walk_stmts(b)


def assigned_outer(body: tuple[Stmt, ...]) -> list[str]:
    """Variables a block assigns that it does not define: the values a loop
    carries or an if yields, in order of first assignment."""
    defined = {s.var for s in walk_stmts(body) if isinstance(s, Let)}
    out: dict[str, None] = {}
    for s in walk_stmts(body):
        if isinstance(s, Assign) and s.var not in defined:
            out[s.var] = None
    return list(out)


def stmt_exprs(s: Stmt) -> list[Expr]:
    """The float expressions a statement evaluates directly (not in blocks)."""
    if isinstance(s, Let | Assign | Store):
        return [s.expr]
    if isinstance(s, Alloc):
        return [s.fill]
    if isinstance(s, If) and isinstance(s.cond, FCmp):
        return [s.cond.a, s.cond.b]
    if isinstance(s, While) and s.cond is not None:
        return [s.cond.a, s.cond.b]
    return []


def sub_exprs(e: Expr) -> list[Expr]:
    if isinstance(e, Op):
        return list(e.args)
    if isinstance(e, PowI):
        return [e.base]
    if isinstance(e, F32):
        return [e.x]
    if isinstance(e, Select):
        extra = [e.cond.a, e.cond.b] if isinstance(e.cond, FCmp) else []
        return [*extra, e.a, e.b]
    return []


def expr_size(e: Expr) -> int:
    return 1 + sum(expr_size(x) for x in sub_exprs(e))


def program_size(p: Program) -> int:
    """Statements plus expression nodes: what the shrinker minimises."""
    n = len(p.args) + sum(expr_size(e) for e in p.results)
    for s in walk_stmts(p.body):
        n += 1 + sum(expr_size(e) for e in stmt_exprs(s))
    return n


# -- validity -----------------------------------------------------------------------


class Invalid(Exception):
    """The program breaks a rule (undefined name, out-of-bounds index, ...)."""


@dataclass(frozen=True)
class MemInfo:
    shape: tuple[int, ...]
    writable: bool
    obj: tuple  # the memory object: ("buffer", k) or ("alloc", name)
    type_shape: tuple[int | None, ...]  # None: dynamic in the MLIR type


@dataclass
class Scope:
    """What a block can see: float variables, memrefs and index symbols with
    the interval of values they can take."""

    program: Program
    vars: set[str] = field(default_factory=set)
    mems: dict[str, MemInfo] = field(default_factory=dict)
    syms: dict[str, tuple[int, int]] = field(default_factory=dict)

    def child(self) -> Scope:
        return Scope(self.program, set(self.vars), dict(self.mems), dict(self.syms))

    def sym_range(self, s: Symbol) -> tuple[int, int]:
        if isinstance(s, Dim):
            arg = next((a for a in self.program.args if a.name == s.mem), None)
            if not isinstance(arg, MemArg) or not 0 <= s.axis < len(arg.shape):
                raise Invalid(f"dim of unknown memref argument {s.mem}")
            return arg.shape[s.axis], arg.shape[s.axis]
        if s not in self.syms:
            raise Invalid(f"unknown index symbol {s}")
        return self.syms[s]

    def idx_range(self, idx: Idx) -> tuple[int, int]:
        lo = hi = idx.const
        for coef, s in idx.terms:
            a, b = self.sym_range(s)
            lo += min(coef * a, coef * b)
            hi += max(coef * a, coef * b)
        return lo, hi


def initial_scope(p: Program) -> Scope:
    scope = Scope(p)
    for a in p.args:
        if isinstance(a, FloatArg):
            scope.vars.add(a.name)
        elif isinstance(a, IndexArg):
            scope.syms[a.name] = (a.value, a.value)
        else:
            type_shape = a.shape if a.static_shape else (None,) * len(a.shape)
            scope.mems[a.name] = MemInfo(a.shape, a.activity != "const", ("buffer", a.buffer),
                                         type_shape)
    return scope


def validate(p: Program) -> None:
    """Raise `Invalid` unless `p` is a program both printers handle and whose
    every execution stays in bounds."""
    _check_args(p)
    scope = initial_scope(p)
    _check_block(p.body, scope)
    for e in p.results:
        _check_expr(e, scope)
    if len(p.results) != len(p.ret_activity):
        raise Invalid("one activity per result")


def _check_args(p: Program) -> None:
    names = [a.name for a in p.args]
    if len(set(names)) != len(names):
        raise Invalid("duplicate argument names")
    by_buffer: dict[int, list[MemArg]] = {}
    for a in p.args:
        if not isinstance(a, MemArg):
            continue
        by_buffer.setdefault(a.buffer, []).append(a)
        if len(a.strides) != len(a.shape) or not 1 <= len(a.shape) <= 2:
            raise Invalid(f"{a.name}: bad strides or rank")
        if not a.strided and (a.offset != 0 or a.strides != c_strides(a.shape)
                              or p.buffers[a.buffer] != _prod(a.shape)):
            raise Invalid(f"{a.name}: identity layout needs its whole contiguous buffer")
        last = a.offset + sum((n - 1) * s for n, s in zip(a.shape, a.strides))
        if a.offset < 0 or min(a.strides) < 1 or last >= p.buffers[a.buffer]:
            raise Invalid(f"{a.name}: view outside its buffer")
    for group in by_buffer.values():
        if len(group) > 1:
            acts = {a.activity for a in group}
            if acts not in ({"dup"}, {"const"}) or any(a.noalias for a in group):
                raise Invalid("aliased arguments must all be dup (or all const) without noalias")


def _prod(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _check_in_bounds(scope: Scope, mem: str, idx: tuple[Idx, ...]) -> MemInfo:
    if mem not in scope.mems:
        raise Invalid(f"unknown memref {mem}")
    info = scope.mems[mem]
    if len(idx) != len(info.shape):
        raise Invalid(f"{mem}: rank mismatch")
    for i, n in zip(idx, info.shape):
        lo, hi = scope.idx_range(i)
        if lo < 0 or hi >= n:
            raise Invalid(f"{mem}: index {i} may leave [0, {n})")
    return info


def _check_cond(c: Cond, scope: Scope) -> None:
    if isinstance(c, FCmp):
        _check_expr(c.a, scope)
        _check_expr(c.b, scope)
    else:
        scope.idx_range(c.a)
        scope.idx_range(c.b)


def _check_expr(e: Expr, scope: Scope) -> None:
    if isinstance(e, Var):
        if e.name not in scope.vars:
            raise Invalid(f"undefined variable {e.name}")
    elif isinstance(e, Load):
        _check_in_bounds(scope, e.mem, e.idx)
    elif isinstance(e, IndexToFloat):
        scope.idx_range(e.idx)
    elif isinstance(e, Select) and isinstance(e.cond, ICmp):
        scope.idx_range(e.cond.a)
        scope.idx_range(e.cond.b)
    elif isinstance(e, Op):
        from adpasses.tools.fuzz.ops import OPS

        if e.op not in OPS or len(e.args) != OPS[e.op].arity:
            raise Invalid(f"bad op {e.op}")
    for x in sub_exprs(e):  # a Select's include its condition's operands
        _check_expr(x, scope)


def _check_block(body: tuple[Stmt, ...], scope: Scope) -> None:
    for s in body:
        _check_stmt(s, scope)


def _check_stmt(s: Stmt, scope: Scope) -> None:
    if isinstance(s, Let):
        _check_expr(s.expr, scope)
        if s.var in scope.vars:
            raise Invalid(f"{s.var} defined twice")
        scope.vars.add(s.var)
    elif isinstance(s, Assign):
        _check_expr(s.expr, scope)
        if s.var not in scope.vars:
            raise Invalid(f"assignment to undefined {s.var}")
    elif isinstance(s, Store):
        _check_expr(s.expr, scope)
        if not _check_in_bounds(scope, s.mem, s.idx).writable:
            raise Invalid(f"store into read-only {s.mem}")
    elif isinstance(s, For):
        lb, ub = scope.idx_range(s.lb), scope.idx_range(s.ub)
        if s.step < 1 or ub[1] <= lb[0]:
            raise Invalid("loop that never runs")
        if -(-(ub[1] - lb[0]) // s.step) > MAX_TRIP:
            raise Invalid("loop too long")
        inner = scope.child()
        inner.syms[s.iv] = (lb[0], ub[1] - 1)
        _check_block(s.body, inner)
    elif isinstance(s, If):
        _check_cond(s.cond, scope)
        _check_block(s.then, scope.child())
        _check_block(s.orelse, scope.child())
    elif isinstance(s, While):
        if s.cond is not None:
            _check_cond(s.cond, scope)
        if not 1 <= s.limit <= MAX_TRIP:
            raise Invalid("bad while limit")
        inner = scope.child()
        inner.syms[s.counter] = (0, s.limit - 1)
        _check_block(s.body, inner)
    elif isinstance(s, Alloc):
        _check_expr(s.fill, scope)
        if s.dynamic is not None:
            lo, hi = scope.sym_range(s.dynamic)
            if (lo, hi) != (s.shape[0], s.shape[0]) or len(s.shape) != 1:
                raise Invalid("dynamic allocation size must be a known value")
        type_shape = (None,) if s.dynamic is not None else s.shape
        scope.mems[s.mem] = MemInfo(s.shape, True, ("alloc", s.mem), type_shape)
    elif isinstance(s, View):
        if s.source not in scope.mems:
            raise Invalid(f"unknown memref {s.source}")
        src = scope.mems[s.source]
        if not (len(s.offsets) == len(s.sizes) == len(s.strides) == len(s.keep) == len(src.shape)):
            raise Invalid("subview rank mismatch")
        for o, n, st, keep, total in zip(s.offsets, s.sizes, s.strides, s.keep, src.shape):
            lo, hi = scope.idx_range(o)
            if n < 1 or st < 1 or lo < 0 or hi + (n - 1) * st >= total or (not keep and n != 1):
                raise Invalid("subview outside its source")
        shape = tuple(n for n, k in zip(s.sizes, s.keep) if k)
        if not 1 <= len(shape) <= 2:
            raise Invalid("subview of rank 0")
        scope.mems[s.mem] = MemInfo(shape, src.writable, src.obj, shape)
    elif isinstance(s, Copy):
        for m in (s.src, s.dst):
            if m not in scope.mems:
                raise Invalid(f"unknown memref {m}")
        src, dst = scope.mems[s.src], scope.mems[s.dst]
        if not dst.writable or src.obj == dst.obj or src.type_shape != dst.type_shape \
                or src.shape != dst.shape:
            raise Invalid("bad copy")
    else:
        raise Invalid(f"unknown statement {s!r}")
