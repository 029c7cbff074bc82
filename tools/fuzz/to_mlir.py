"""Print a program as MLIR (func/arith/math/memref/scf): what the compiler
differentiates.

Mutable float variables become SSA values: a loop carries (iter_args) and an
if yields (results) exactly the variables its body assigns but does not
define (`program.assigned_outer`); a while loop also carries its counter.
Constants and `memref.dim`s are emitted once at the top of the function so
that they dominate every use. `alloc` buffers are freed at the end of the
block that allocated them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from adpasses.tools.fuzz.ops import OPS
from adpasses.tools.fuzz.program import (
    Alloc,
    Assign,
    Cond,
    Const,
    Copy,
    Dim,
    Expr,
    F32,
    FCmp,
    FloatArg,
    For,
    Idx,
    If,
    IndexToFloat,
    Let,
    Load,
    MemArg,
    Op,
    PowI,
    Program,
    Select,
    Stmt,
    Store,
    Var,
    View,
    While,
    assigned_outer,
)


def memref_type(shape: tuple[int | None, ...], strided: bool) -> str:
    dims = "x".join("?" if s is None else str(s) for s in shape)
    layout = f", strided<[{', '.join('?' for _ in shape)}], offset: ?>" if strided else ""
    return f"memref<{dims}xf64{layout}>"


def arg_type(a: MemArg | FloatArg | object) -> str:
    if isinstance(a, MemArg):
        return memref_type(a.shape if a.static_shape else (None,) * len(a.shape), a.strided)
    return "f64" if isinstance(a, FloatArg) else "index"


def float_literal(v: float) -> str:
    """Exact (17 significant digits), and always with a dot: MLIR float syntax."""
    return f"{v:.17e}"


def function_signature(p: Program) -> str:
    params = []
    for a in p.args:
        attrs = " {ad.noalias}" if isinstance(a, MemArg) and a.noalias else ""
        params.append(f"%{a.name}: {arg_type(a)}{attrs}")
    results = ", ".join("f64" for _ in p.results)
    ret = "" if not p.results else " -> f64" if len(p.results) == 1 else f" -> ({results})"
    return f"func.func @{p.name}({', '.join(params)}){ret}"


def mlir_function(p: Program) -> str:
    return _FunctionPrinter(p).print()


@dataclass
class _Env:
    """SSA names of the variables, memrefs and index symbols of a block."""

    vars: dict[str, str] = field(default_factory=dict)
    mems: dict[str, tuple[str, str, int]] = field(default_factory=dict)  # name -> ssa, type, rank
    syms: dict[str, str] = field(default_factory=dict)

    def copy(self) -> _Env:
        return _Env(dict(self.vars), dict(self.mems), dict(self.syms))


class _FunctionPrinter:
    def __init__(self, p: Program):
        self.p = p
        self.prelude: list[str] = []
        self.body: list[str] = []
        self.consts: dict[tuple[str, object], str] = {}
        self.dims: dict[Dim, str] = {}
        self.count = 0
        self.depth = 1

    # -- names and lines ---------------------------------------------------------

    def fresh(self, hint: str = "t") -> str:
        """A new SSA name; hints never equal a program name (x s n i k m w)
        followed by digits, so the two cannot collide."""
        self.count += 1
        return f"%{hint}{self.count}"

    def emit(self, text: str) -> None:
        self.body.append("  " * self.depth + text)

    def index(self, v: int) -> str:
        key = ("index", v)
        if key not in self.consts:
            name = f"%c{v}" if v >= 0 else f"%cm{-v}"
            self.consts[key] = name
            self.prelude.append(f"  {name} = arith.constant {v} : index")
        return self.consts[key]

    def f64(self, v: float) -> str:
        key = ("f64", float_literal(v))
        if key not in self.consts:
            name = self.fresh("cst")
            self.consts[key] = name
            self.prelude.append(f"  {name} = arith.constant {float_literal(v)} : f64")
        return self.consts[key]

    def i32(self, v: int) -> str:
        key = ("i32", v)
        if key not in self.consts:
            name = self.fresh("pw")
            self.consts[key] = name
            self.prelude.append(f"  {name} = arith.constant {v} : i32")
        return self.consts[key]

    # -- function --------------------------------------------------------------------

    def print(self) -> str:
        p = self.p
        env = _Env()
        for a in p.args:
            if isinstance(a, MemArg):
                env.mems[a.name] = (f"%{a.name}", arg_type(a), len(a.shape))
            elif isinstance(a, FloatArg):
                env.vars[a.name] = f"%{a.name}"
            else:
                env.syms[a.name] = f"%{a.name}"
        self.env_args = env
        deallocs = self.block(p.body, env)
        results = [self.expr(e, env) for e in p.results]
        for d in deallocs:
            self.emit(d)
        if results:
            self.emit(f"func.return {', '.join(results)} : {', '.join('f64' for _ in results)}")
        else:
            self.emit("func.return")
        return "\n".join([function_signature(p) + " {", *self.prelude, *self.body, "}"]) + "\n"

    # -- statements ------------------------------------------------------------------

    def block(self, body: tuple[Stmt, ...], env: _Env) -> list[str]:
        """Print the statements; returns the deallocations due at its end."""
        deallocs: list[str] = []
        for s in body:
            self.stmt(s, env, deallocs)
        return deallocs

    def end_block(self, deallocs: list[str], yielded: list[str]) -> None:
        for d in deallocs:
            self.emit(d)
        if yielded:
            self.emit(f"scf.yield {', '.join(yielded)} : {', '.join('f64' for _ in yielded)}")
        else:
            self.emit("scf.yield")

    def results_of(self, carried: list[str], env: _Env, extra: int = 0) -> str:
        """Bind the variables to the results of the op being printed."""
        name = self.fresh("r")
        n = len(carried) + extra
        for k, v in enumerate(carried):
            env.vars[v] = f"{name}#{k}" if n > 1 else name
        return f"{name}:{n} = " if n > 1 else f"{name} = " if n == 1 else ""

    def stmt(self, s: Stmt, env: _Env, deallocs: list[str]) -> None:
        if isinstance(s, Let | Assign):
            env.vars[s.var] = self.expr(s.expr, env)
        elif isinstance(s, Store):
            value = self.expr(s.expr, env)
            ssa, ty, _ = env.mems[s.mem]
            indices = ", ".join(self.idx(i, env) for i in s.idx)
            self.emit(f"memref.store {value}, {ssa}[{indices}] : {ty}")
        elif isinstance(s, For):
            self.for_loop(s, env)
        elif isinstance(s, If):
            self.if_op(s, env)
        elif isinstance(s, While):
            self.while_loop(s, env)
        elif isinstance(s, Alloc):
            self.alloc(s, env, deallocs)
        elif isinstance(s, View):
            self.view(s, env)
        elif isinstance(s, Copy):
            src, src_ty, _ = env.mems[s.src]
            dst, dst_ty, _ = env.mems[s.dst]
            self.emit(f'"memref.copy"({src}, {dst}) : ({src_ty}, {dst_ty}) -> ()')
        else:
            raise TypeError(f"unknown statement {s!r}")

    def for_loop(self, s: For, env: _Env) -> None:
        lb, ub, step = self.idx(s.lb, env), self.idx(s.ub, env), self.index(s.step)
        carried = [v for v in assigned_outer(s.body) if v in env.vars]
        inner = env.copy()
        inner.syms[s.iv] = f"%{s.iv}"
        inits = []
        for v in carried:
            arg = self.fresh("acc")
            inits.append(f"{arg} = {env.vars[v]}")
            inner.vars[v] = arg
        head = f"scf.for %{s.iv} = {lb} to {ub} step {step}"
        if carried:
            head += f" iter_args({', '.join(inits)}) -> ({', '.join('f64' for _ in carried)})"
        prefix = self.results_of(carried, env)
        self.emit(f"{prefix}{head} {{")
        self.depth += 1
        deallocs = self.block(s.body, inner)
        self.end_block(deallocs, [inner.vars[v] for v in carried])
        self.depth -= 1
        self.emit("}")

    def if_op(self, s: If, env: _Env) -> None:
        cond = self.cond(s.cond, env)
        carried = [v for v in assigned_outer((*s.then, *s.orelse)) if v in env.vars]
        branches = []
        for body in (s.then, s.orelse):
            inner = env.copy()
            branches.append((body, inner))
        types = f" -> ({', '.join('f64' for _ in carried)})" if carried else ""
        prefix = self.results_of(carried, env)
        self.emit(f"{prefix}scf.if {cond}{types} {{")
        for k, (body, inner) in enumerate(branches):
            if k == 1:
                self.emit("} else {")
            self.depth += 1
            deallocs = self.block(body, inner)
            self.end_block(deallocs, [inner.vars[v] for v in carried])
            self.depth -= 1
        self.emit("}")

    def while_loop(self, s: While, env: _Env) -> None:
        carried = [v for v in assigned_outer(s.body) if v in env.vars]
        types = ", ".join(["f64"] * len(carried) + ["index"])
        before, after = env.copy(), env.copy()
        inits, before_args, after_args = [], [], []
        for v in carried:
            b, a = self.fresh("b"), self.fresh("a")
            inits.append(f"{b} = {env.vars[v]}")
            before.vars[v], after.vars[v] = b, a
            before_args.append(b)
            after_args.append(f"{a}: f64")
        count_b, count_a = self.fresh("kb"), f"%{s.counter}"
        inits.append(f"{count_b} = {self.index(0)}")
        after.syms[s.counter] = count_a
        after_args.append(f"{count_a}: index")
        prefix = self.results_of(carried, env, extra=1)
        self.emit(f"{prefix}scf.while ({', '.join(inits)}) : ({types}) -> ({types}) {{")
        self.depth += 1
        go = self.fresh("go")
        self.emit(f"{go} = arith.cmpi slt, {count_b}, {self.index(s.limit)} : index")
        if s.cond is not None:
            data = self.cond(s.cond, before)
            both = self.fresh("go")
            self.emit(f"{both} = arith.andi {go}, {data} : i1")
            go = both
        self.emit(f"scf.condition({go}) {', '.join([*before_args, count_b])} : {types}")
        self.depth -= 1
        self.emit("} do {")
        self.emit(f"^bb0({', '.join(after_args)}):")
        self.depth += 1
        deallocs = self.block(s.body, after)
        for d in deallocs:
            self.emit(d)
        next_count = self.fresh("kn")
        self.emit(f"{next_count} = arith.addi {count_a}, {self.index(1)} : index")
        yielded = [after.vars[v] for v in carried] + [next_count]
        self.emit(f"scf.yield {', '.join(yielded)} : {types}")
        self.depth -= 1
        self.emit("}")

    def alloc(self, s: Alloc, env: _Env, deallocs: list[str]) -> None:
        fill = self.expr(s.fill, env)
        name = f"%{s.mem}"
        if s.dynamic is not None:
            ty = memref_type((None,), False)
            self.emit(f"{name} = memref.{s.kind}({self.sym(s.dynamic, env)}) : {ty}")
        else:
            ty = memref_type(s.shape, False)
            self.emit(f"{name} = memref.{s.kind}() : {ty}")
        env.mems[s.mem] = (name, ty, len(s.shape))
        ivs = []
        for n in s.shape:
            iv = self.fresh("fill")
            self.emit(f"scf.for {iv} = {self.index(0)} to {self.index(n)} step {self.index(1)} {{")
            self.depth += 1
            ivs.append(iv)
        self.emit(f"memref.store {fill}, {name}[{', '.join(ivs)}] : {ty}")
        for _ in s.shape:
            self.emit("scf.yield")
            self.depth -= 1
            self.emit("}")
        if s.kind == "alloc":
            deallocs.append(f"memref.dealloc {name} : {ty}")

    def view(self, s: View, env: _Env) -> None:
        src, src_ty, _ = env.mems[s.source]
        offsets = [str(o.const) if not o.terms else self.idx(o, env) for o in s.offsets]
        shape = tuple(n for n, keep in zip(s.sizes, s.keep) if keep)
        ty = memref_type(shape, True)
        name = f"%{s.mem}"
        self.emit(
            f"{name} = memref.subview {src}[{', '.join(offsets)}] [{', '.join(map(str, s.sizes))}] "
            f"[{', '.join(map(str, s.strides))}] : {src_ty} to {ty}"
        )
        env.mems[s.mem] = (name, ty, len(shape))

    # -- values --------------------------------------------------------------------------

    def sym(self, sym: object, env: _Env) -> str:
        if isinstance(sym, Dim):
            if sym not in self.dims:
                ssa, ty, _ = self.env_args.mems[sym.mem]
                name = self.fresh("dim")
                self.prelude.append(f"  {name} = memref.dim {ssa}, {self.index(sym.axis)} : {ty}")
                self.dims[sym] = name
            return self.dims[sym]
        return env.syms[sym]  # type: ignore[index]

    def idx(self, idx: Idx, env: _Env) -> str:
        value: str | None = None
        for coef, sym in idx.terms:
            term = self.sym(sym, env)
            if coef != 1:
                product = self.fresh("ix")
                self.emit(f"{product} = arith.muli {term}, {self.index(coef)} : index")
                term = product
            if value is None:
                value = term
            else:
                total = self.fresh("ix")
                self.emit(f"{total} = arith.addi {value}, {term} : index")
                value = total
        if value is None:
            return self.index(idx.const)
        if idx.const:
            total = self.fresh("ix")
            self.emit(f"{total} = arith.addi {value}, {self.index(idx.const)} : index")
            value = total
        return value

    def cond(self, c: Cond, env: _Env) -> str:
        name = self.fresh("p")
        if isinstance(c, FCmp):
            a, b = self.expr(c.a, env), self.expr(c.b, env)
            self.emit(f"{name} = arith.cmpf {c.pred}, {a}, {b} : f64")
        else:
            a, b = self.idx(c.a, env), self.idx(c.b, env)
            self.emit(f"{name} = arith.cmpi {c.pred}, {a}, {b} : index")
        return name

    def expr(self, e: Expr, env: _Env) -> str:
        if isinstance(e, Const):
            return self.f64(e.value)
        if isinstance(e, Var):
            return env.vars[e.name]
        name = self.fresh()
        if isinstance(e, Load):
            ssa, ty, _ = env.mems[e.mem]
            indices = ", ".join(self.idx(i, env) for i in e.idx)
            self.emit(f"{name} = memref.load {ssa}[{indices}] : {ty}")
        elif isinstance(e, Op):
            args = ", ".join(self.expr(a, env) for a in e.args)
            self.emit(f"{name} = {OPS[e.op].mlir} {args} : f64")
        elif isinstance(e, PowI):
            base = self.expr(e.base, env)
            self.emit(f"{name} = math.fpowi {base}, {self.i32(e.n)} : f64, i32")
        elif isinstance(e, Select):
            c = self.cond(e.cond, env)
            a, b = self.expr(e.a, env), self.expr(e.b, env)
            self.emit(f"{name} = arith.select {c}, {a}, {b} : f64")
        elif isinstance(e, IndexToFloat):
            i = self.idx(e.idx, env)
            wide = self.fresh("ix")
            self.emit(f"{wide} = arith.index_cast {i} : index to i64")
            self.emit(f"{name} = arith.sitofp {wide} : i64 to f64")
        elif isinstance(e, F32):
            x = self.expr(e.x, env)
            narrow = self.fresh("h")
            self.emit(f"{narrow} = arith.truncf {x} : f64 to f32")
            self.emit(f"{name} = arith.extf {narrow} : f32 to f64")
        else:
            raise TypeError(f"unknown expression {e!r}")
        return name
