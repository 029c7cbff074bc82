"""Random valid programs, one per seed.

`generate(seed)` builds a program top-down with a `Scope` that knows every
visible variable, memref and index symbol with its range of values, so
every index it writes is in bounds by construction (interval arithmetic over
the loop bounds) and `program.validate` accepts the result. Operands of ops
with a restricted domain are wrapped into it (`ops.py`: `pos`, `unit`, ...)
with smooth maps, so values stay in the domain for any input; kinks and
discontinuities are left to the oracle's margin check.

Coverage, per the fuzzing plan (docs/fuzzing.md): 1-4 memref arguments of
rank 1 or 2 (identity or strided layout, static or dynamic sizes, some
`ad.noalias`, some aliasing each other), 0-3 float scalars, sometimes an
index argument for dynamic bounds; nested scf.for up to 3 deep with static
and dynamic bounds (memref.dim, index arguments, outer induction variables)
and steps up to 3; scf.if on data and on indices; bounded scf.while; loads
and stores at affine indices; local alloc/alloca; subviews with offsets and
strides (also rank-reducing, also at loop-dependent offsets); memref.copy;
loop-carried floats; every float op with a reverse rule.
"""

from __future__ import annotations

import random
from dataclasses import replace

from adpasses.tools.fuzz.ops import FCMP_PREDICATES, ICMP_PREDICATES, OPS
from adpasses.tools.fuzz.program import (
    MAX_TRIP,
    Alloc,
    Assign,
    Const,
    Copy,
    Dim,
    Expr,
    F32,
    FCmp,
    FloatArg,
    For,
    ICmp,
    Idx,
    If,
    IndexArg,
    IndexToFloat,
    Let,
    Load,
    MemArg,
    MemInfo,
    Op,
    Options,
    PowI,
    Program,
    Scope,
    Select,
    Stmt,
    Store,
    Var,
    View,
    While,
    c_strides,
    initial_scope,
    validate,
)

MAX_DEPTH = 3
"""Loop nesting (scf.for and scf.while together)."""
MAX_WORK = 120
"""Most executions of one statement (product of the enclosing trip counts)."""
MAX_STMTS = 18

# Relative frequency of each float op: the plain arithmetic more often,
# since it is what combines everything else.
_OP_WEIGHT = {"addf": 6, "subf": 4, "mulf": 6, "divf": 3, "negf": 1.5, "fma": 1.5}


def generate(seed: int) -> Program:
    """The program of `seed` (deterministic)."""
    program = _Generator(seed).program()
    validate(program)
    return program


class _Generator:
    def __init__(self, seed: int):
        self.seed = seed
        self.r = random.Random(seed)
        self.names: dict[str, int] = {}
        self.stmts = 0

    def name(self, prefix: str) -> str:
        k = self.names.get(prefix, 0)
        self.names[prefix] = k + 1
        return f"{prefix}{k}"

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    # -- arguments ------------------------------------------------------------------

    def program(self) -> Program:
        r = self.r
        args, buffers = self.memref_args()
        args += [FloatArg(self.name("s"), "active" if self.chance(0.7) else "const")
                 for _ in range(r.choice([0, 1, 1, 2, 3]))]
        if self.chance(0.3):
            args.append(IndexArg(self.name("n"), r.randint(2, 5)))
        r.shuffle(args)
        policy = r.choice(["minimal", "minimal", "tape-all"])  # minimal: what can go wrong
        # A quarter of the minimal cases use its min-memory variant (free
        # recomputation), drawn from a generator of its own so that every
        # seed's program stayed as it was.
        if policy == "minimal" and random.Random(f"min-memory {self.seed}").random() < 0.25:
            policy = "min-memory"
        options = Options(
            policy=policy,
            activity=not self.chance(0.1),
            with_primal=self.chance(0.3),
            opt_level=r.choice([0, 0, 1, 2, 3, 3]),  # O0 compiles 4x faster
            boundscheck=not self.chance(0.15),
            # Drawn from a generator of its own, so that adding this option
            # left every seed's program as it was.
            simplify=random.Random(f"simplify {self.seed}").random() < 0.5,
        )
        shell = Program(self.seed, tuple(args), tuple(buffers), (), (), (), options)
        scope = initial_scope(shell)
        body = self.block(scope, depth=0, work=1, length=r.randint(2, 7))
        n_results = r.choice([0, 1, 1, 1, 2, 2])
        results = tuple(self.expr(scope, 3) for _ in range(n_results))
        ret = tuple("active" if self.chance(0.8) else "const" for _ in results)
        has_dup = any(isinstance(a, MemArg) and a.activity != "const" for a in args)
        if "active" not in ret and not has_dup:
            results, ret = results or (self.expr(scope, 3),), ("active",) * max(1, len(results))
        return replace(shell, body=tuple(body), results=results, ret_activity=ret)

    def memref_args(self) -> tuple[list, list[int]]:
        r = self.r
        args: list = []
        buffers: list[int] = []
        n = r.randint(1, 4)
        if n >= 2 and self.chance(0.3):
            args += self.aliased_pair(buffers)
            n -= 2
        for _ in range(n):
            shape = (r.randint(2, 7),) if self.chance(0.7) else (r.randint(2, 4), r.randint(2, 4))
            activity = r.choices(["const", "dup", "dupnoneed"], [25, 60, 15])[0]
            strided = self.chance(0.3)
            if strided:
                offset = r.randint(0, 2)
                inner = r.randint(1, 2)
                strides = (inner,) if len(shape) == 1 else (inner * shape[1] + r.randint(0, 2), inner)
            else:
                offset, strides = 0, c_strides(shape)
            size = offset + sum((k - 1) * s for k, s in zip(shape, strides)) + 1 + r.randint(0, 2) * strided
            buffers.append(size)
            args.append(MemArg(self.name("x"), shape, activity, len(buffers) - 1, offset, strides,
                               strided, static_shape=self.chance(0.2), noalias=self.chance(0.5)))
        return args, buffers

    def aliased_pair(self, buffers: list[int]) -> list[MemArg]:
        """Two dup arguments on one buffer: the same array twice, or two
        overlapping strided views of it."""
        r = self.r
        n = r.randint(3, 6)
        if self.chance(0.5):
            buffers.append(n)
            k = len(buffers) - 1
            return [MemArg(self.name("x"), (n,), "dup", k, 0, (1,)),
                    MemArg(self.name("x"), (n,), "dup", k, 0, (1,))]
        shift, step = r.randint(1, 2), r.randint(1, 2)
        buffers.append(shift + (n - 1) * step + 1)
        k = len(buffers) - 1
        return [MemArg(self.name("x"), (n,), "dup", k, 0, (step,), strided=True),
                MemArg(self.name("x"), (n,), "dup", k, shift, (step,), strided=True)]

    # -- statements -----------------------------------------------------------------

    def block(self, scope: Scope, depth: int, work: int, length: int) -> list[Stmt]:
        body: list[Stmt] = []
        for _ in range(length):
            if self.stmts >= MAX_STMTS:
                break
            self.stmts += 1
            s = self.stmt(scope, depth, work, outer_vars=set(scope.vars) - {
                x.var for x in body if isinstance(x, Let)})
            if s is not None:
                body.append(s)
        return body

    def stmt(self, scope: Scope, depth: int, work: int, outer_vars: set[str]) -> Stmt | None:
        r = self.r
        writable = [m for m, info in scope.mems.items() if info.writable]
        # Loops over the data make most elements matter to the derivative:
        # more of them at the top, more stores and recurrences inside.
        inside = depth > 0
        kinds = {
            "let": 3.0,
            "assign": (4.5 if inside else 2.5) if scope.vars else 0.0,
            "store": (4.5 if inside else 2.5) if writable else 0.0,
            "for": (2.0 if inside else 4.0) if depth < MAX_DEPTH and work < MAX_WORK // 2 else 0.0,
            "if": 1.2,
            "while": 0.8 if depth < MAX_DEPTH and work < MAX_WORK // 2 else 0.0,
            "sweep": (1.0 if inside else 2.5) if writable and depth < MAX_DEPTH - 1
            and work < MAX_WORK // 8 else 0.0,
            "alloc": 0.6,
            "view": 0.7,
            "copy": 0.3,
        }
        kind = r.choices(list(kinds), list(kinds.values()))[0]
        if kind == "let":
            v = self.name("v")
            s: Stmt = Let(v, self.expr(scope, self.depth()))
            scope.vars.add(v)
            return s
        if kind == "assign":
            # In loops, prefer updating variables from outside: loop-carried values.
            pool = sorted(outer_vars if outer_vars and depth and self.chance(0.8) else scope.vars)
            v = r.choice(pool)
            return Assign(v, self.update(scope, v))
        if kind == "store":
            m = r.choice(writable)
            idx = tuple(self.index(scope, n) for n in scope.mems[m].shape)
            return Store(m, idx, self.expr(scope, self.depth()))
        if kind == "for":
            return self.for_loop(scope, depth, work)
        if kind == "if":
            cond = self.cond(scope)
            n_then, n_else = r.randint(1, 3), r.choice([0, 0, 1, 2])
            return If(cond, tuple(self.block(scope.child(), depth, work, n_then)),
                      tuple(self.block(scope.child(), depth, work, n_else)))
        if kind == "while":
            limit = r.randint(1, 4)
            cond = self.fcmp(scope) if self.chance(0.7) else None
            inner = scope.child()
            counter = self.name("k")
            inner.syms[counter] = (0, limit - 1)
            body = self.block(inner, depth + 1, work * limit, r.randint(1, 3))
            return While(counter, limit, cond, tuple(body))
        if kind == "sweep":
            return self.sweep(scope, r.choice(writable), depth, work)
        if kind == "alloc":
            return self.alloc(scope)
        if kind == "view":
            return self.view(scope)
        return self.copy(scope)

    def depth(self) -> int:
        """Expression depth: mostly small, so that programs compile fast."""
        return self.r.choice([1, 2, 2, 3])

    def update(self, scope: Scope, v: str) -> Expr:
        """A new value for `v`, usually a function of its old one (a
        recurrence when inside a loop), contracting so it does not blow up."""
        r = self.r
        e = self.expr(scope, 2)
        how = r.random()
        if how < 0.45:
            return Op(r.choice(["addf", "subf"]), (Var(v), e))
        if how < 0.65:
            return Op("addf", (Op("mulf", (Var(v), Const(r.choice([0.5, 0.75, 0.9])))), e))
        if how < 0.75:
            return Op("mulf", (Var(v), self.squash(e)))
        return e

    def for_loop(self, scope: Scope, depth: int, work: int) -> Stmt | None:
        r = self.r
        for _ in range(8):
            lb = self.bound(scope, lower=True)
            ub = self.bound(scope, lower=False)
            step = r.choice([1, 1, 1, 2, 2, 3])
            lb_lo, _ = scope.idx_range(lb)
            _, ub_hi = scope.idx_range(ub)
            trips = -(-(ub_hi - lb_lo) // step)
            if ub_hi > lb_lo and trips <= MAX_TRIP:
                break
        else:
            lb, ub, step = Idx(0), Idx(r.randint(1, 4)), 1
            trips = ub.const
        inner = scope.child()
        iv = self.name("i")
        inner.syms[iv] = (scope.idx_range(lb)[0], scope.idx_range(ub)[1] - 1)
        body = self.block(inner, depth + 1, work * trips, r.randint(1, 4))
        return For(iv, lb, ub, step, tuple(body))

    def sweep(self, scope: Scope, m: str, depth: int, work: int) -> Stmt:
        """A loop nest over every element of `m` storing into it (and maybe
        more): what array kernels do, and what makes every element of an
        argument matter to the derivative."""
        r = self.r
        shape = scope.mems[m].shape
        arg = scope.program.args_by_name().get(m)
        inner = scope.child()
        ivs = []
        for axis, n in enumerate(shape):
            iv = self.name("i")
            ivs.append(iv)
            inner.syms[iv] = (0, n - 1)
        idx = tuple(Idx(0, ((1, iv),)) for iv in ivs)
        value = self.expr(inner, self.depth())
        if self.chance(0.7):
            # Read-modify-write (the old contents matter), or y[i] = f(x[i])
            # from another memref of the same shape: in place when x and y
            # alias, which is what the alias analysis must see.
            same = [x for x, info in sorted(scope.mems.items()) if info.shape == shape and x != m]
            partners = [x for x in same if scope.mems[x].obj == scope.mems[m].obj]
            source = r.choice(partners) if partners and self.chance(0.7) else \
                r.choice(same) if same and self.chance(0.5) else m
            old = Load(source, idx)
            value = Op(r.choice(["addf", "subf", "mulf"]), (old, value)) if self.chance(0.6) \
                else Op("fma", (old, self.squash(value), Const(r.choice([0.5, 1.0]))))
        body: list[Stmt] = [Store(m, idx, value)]
        more = self.block(inner, depth + len(shape), work * max(shape) ** len(shape), r.randint(0, 2))
        body = more + body if self.chance(0.5) else body + more
        for axis in reversed(range(len(shape))):
            n = shape[axis]
            ub = Idx(0, ((1, Dim(m, axis)),)) if isinstance(arg, MemArg) and self.chance(0.6) \
                else Idx(n)
            body = [For(ivs[axis], Idx(0), ub, 1, tuple(body))]
        return body[0]

    def bound(self, scope: Scope, lower: bool) -> Idx:
        """A loop bound: a constant, a size (memref.dim), an index argument,
        or an outer induction variable (triangular loops)."""
        r = self.r
        ivs = [s for s in scope.syms if s.startswith(("i", "k"))]
        if lower:
            if ivs and self.chance(0.25):
                return Idx(r.choice([0, 1]), ((1, r.choice(ivs)),))
            return Idx(r.choice([0, 0, 0, 1, 2]))
        choice = r.random()
        mems = [a for a in scope.program.args if isinstance(a, MemArg)]
        if choice < 0.3 and mems:
            a = r.choice(mems)
            axis = r.randrange(len(a.shape))
            return Idx(r.choice([0, 0, -1]), ((1, Dim(a.name, axis)),))
        args = [a.name for a in scope.program.args if isinstance(a, IndexArg)]
        if choice < 0.45 and args:
            return Idx(r.choice([0, 1, -1]), ((1, r.choice(args)),))
        if choice < 0.6 and ivs:
            return Idx(r.choice([1, 2, 3]), ((1, r.choice(ivs)),))
        return Idx(r.randint(1, 6))

    def alloc(self, scope: Scope) -> Stmt:
        r = self.r
        m = self.name("m")
        dynamic = None
        sized = [a for a in scope.program.args if isinstance(a, IndexArg)] + [
            a for a in scope.program.args if isinstance(a, MemArg)]
        if sized and self.chance(0.35):
            a = r.choice(sized)
            if isinstance(a, IndexArg):
                dynamic, shape = a.name, (a.value,)
            else:
                dynamic, shape = Dim(a.name, 0), (a.shape[0],)
        else:
            shape = (r.randint(2, 6),) if self.chance(0.8) else (r.randint(2, 3), r.randint(2, 3))
        s = Alloc(m, shape, r.choice(["alloc", "alloc", "alloca"]), self.expr(scope, 2), dynamic)
        type_shape = (None,) if dynamic is not None else shape
        scope.mems[m] = MemInfo(shape, True, ("alloc", m), type_shape)
        return s

    def view(self, scope: Scope) -> Stmt | None:
        r = self.r
        if not scope.mems:
            return None
        source = r.choice(sorted(scope.mems))
        info = scope.mems[source]
        rank = len(info.shape)
        drop = r.randrange(rank) if rank == 2 and self.chance(0.35) else None
        offsets, sizes, strides, keep = [], [], [], []
        for d, total in enumerate(info.shape):
            if d == drop:
                n, st = 1, 1
            else:
                st = r.choice([1, 1, 2])
                n = r.randint(1, (total - 1) // st + 1)
            room = total - (n - 1) * st  # offsets in [0, room)
            offsets.append(self.index(scope, room) if self.chance(0.5) else Idx(r.randrange(room)))
            sizes.append(n)
            strides.append(st)
            keep.append(d != drop)
        m = self.name("w")
        shape = tuple(n for n, k in zip(sizes, keep) if k)
        scope.mems[m] = MemInfo(shape, info.writable, info.obj, shape)
        return View(m, source, tuple(offsets), tuple(sizes), tuple(strides), tuple(keep))

    def copy(self, scope: Scope) -> Stmt | None:
        pairs = [(a, b) for a, ia in scope.mems.items() for b, ib in scope.mems.items()
                 if ib.writable and ia.obj != ib.obj and ia.type_shape == ib.type_shape
                 and ia.shape == ib.shape]
        if not pairs:
            return None
        src, dst = self.r.choice(sorted(pairs))
        return Copy(src, dst)

    # -- indices and conditions -----------------------------------------------------------

    def index(self, scope: Scope, n: int) -> Idx:
        """An index in [0, n) for every value of the symbols it uses."""
        r = self.r
        syms = list(scope.syms)
        if syms and self.chance(0.75):
            for _ in range(4):
                picked = r.sample(syms, k=1 if len(syms) == 1 or self.chance(0.8) else 2)
                terms = tuple((r.choice([1, 1, 1, -1, 2]), s) for s in picked)
                lo, hi = scope.idx_range(Idx(0, terms))
                if hi - lo <= n - 1:  # some constant shift puts it in range
                    return Idx(r.randint(-lo, n - 1 - hi), terms)
        return Idx(r.randrange(n))

    def cond(self, scope: Scope):  # type: ignore[no-untyped-def]
        ivs = list(scope.syms)
        if ivs and self.chance(0.35):
            s = self.r.choice(ivs)
            lo, hi = scope.idx_range(Idx(0, ((1, s),)))
            return ICmp(self.r.choice(sorted(ICMP_PREDICATES)), Idx(0, ((1, s),)),
                        Idx(self.r.randint(lo, hi)))
        return self.fcmp(scope)

    def fcmp(self, scope: Scope) -> FCmp:
        b = Const(round(self.r.uniform(-1, 1), 2)) if self.chance(0.5) else self.expr(scope, 1)
        return FCmp(self.r.choice(sorted(FCMP_PREDICATES)), self.expr(scope, 2), b)

    # -- expressions ------------------------------------------------------------------------

    def leaf(self, scope: Scope) -> Expr:
        r = self.r
        readable = sorted(scope.mems)
        in_loop = any(isinstance(sym, str) and sym.startswith(("i", "k")) for sym in scope.syms)
        kinds = {"var": 3.5 if scope.vars else 0,
                 "load": (5.0 if in_loop else 3.5) if readable else 0,
                 "const": 1.5, "index": 0.6 if scope.syms else 0}
        kind = r.choices(list(kinds), list(kinds.values()))[0]
        if kind == "var":
            return Var(r.choice(sorted(scope.vars)))
        if kind == "load":
            m = r.choice(readable)
            return Load(m, tuple(self.index(scope, n) for n in scope.mems[m].shape))
        if kind == "index":
            s = r.choice(sorted(scope.syms, key=str))
            return IndexToFloat(Idx(r.randint(-1, 1), ((1, s),)))
        return Const(round(r.uniform(-2, 2), r.choice([1, 3, 6])))

    def expr(self, scope: Scope, depth: int) -> Expr:
        r = self.r
        if depth <= 0 or self.chance(0.3):
            return self.leaf(scope)
        which = r.random()
        if which < 0.04:
            return PowI(self.expr(scope, depth - 1), r.randint(0, 4))
        if which < 0.09:
            return Select(self.cond(scope), self.expr(scope, depth - 1), self.expr(scope, depth - 1))
        if which < 0.105:
            return F32(self.expr(scope, depth - 1))
        names = sorted(OPS)
        op = r.choices(names, [_OP_WEIGHT.get(n, 1.0) for n in names])[0]
        args = tuple(self.guard(self.expr(scope, depth - 1), d) for d in OPS[op].domains)
        return Op(op, args)

    # Domain guards: smooth maps into each domain (see ops.py).

    def squash(self, e: Expr) -> Expr:
        """Into (-2.5, 2.5), smoothly."""
        r = self.r
        kind = r.random()
        if kind < 0.4:
            return Op("mulf", (Op("tanh", (e,)), Const(r.choice([1.0, 2.5]))))
        if kind < 0.7:
            return Op("mulf", (Op("sin", (e,)), Const(2.0)))
        return Op("atan", (e,))

    def positive(self, e: Expr) -> Expr:
        """Into [0.25, ...): x*x + c only for leaves (it repeats its operand)."""
        r = self.r
        kind = r.random()
        c = Const(r.choice([0.25, 0.5, 1.0, 2.0]))
        if kind < 0.5 and isinstance(e, Var | Load | Const):
            return Op("addf", (Op("mulf", (e, e)), c))
        if kind < 0.6:
            return Op("addf", (Const(1.5), Op("sin", (e,))))
        if kind < 0.85:
            return Op("exp", (self.squash(e),))
        return Op("addf", (Op("absf", (e,)), c))

    def guard(self, e: Expr, domain: str) -> Expr:
        if domain == "any":
            return e
        if domain == "pos":
            return self.positive(e)
        if domain == "nonzero":
            p = self.positive(e)
            return Op("negf", (p,)) if self.chance(0.3) else p
        if domain == "unit":
            return Op("mulf", (Op(self.r.choice(["tanh", "sin"]), (e,)), Const(0.9)))
        if domain == "small":
            return self.squash(e)
        if domain == "above1":
            return Op("addf", (self.positive(e), Const(1.0)))
        if domain == "prob":
            return Op("addf", (Op("mulf", (Op("tanh", (e,)), Const(0.45))), Const(0.5)))
        raise ValueError(f"no guard for the domain {domain!r}: a domain of adpasses.ops.entry.DOMAINS "
                         "needs a branch here")
