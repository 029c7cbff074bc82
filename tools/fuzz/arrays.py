"""The array mode (`--mode arrays`): random numpy array programs.

Each seed is a Python function written in the array language
(docs/frontend.md, "Array language"): whole-array expressions with
numpy's broadcasting (`x * y`, `A - v[:, None]`, `np.exp(np.tanh(e))`),
reductions (`np.sum`, `np.mean`, `axis=`, `x.sum()`, `np.dot`), views
(`x[1:]`, `x[::2]`, `x[::-1]`, `A[:, j]`, `A[i, :]`, `A.T`), local arrays
(`np.zeros`, `x.copy()`), slice stores (`out[1:] = e`, `out[:, 0] += e`),
in-place updates (`t += e`), a loop over columns, and a number, an array
or a tuple (number, array) returned. The function itself, run by numpy,
is the oracle:

- values: `adpasses.jit(f)` against `f` on the same inputs (rtol 1e-10);
- derivatives: a random cotangent `w` of the output; `adpasses.vjp(f)`
  (or `adpasses.grad` for a number) with respect to every array argument,
  against central finite differences of `<w, f(x)>` computed by numpy.

Operands are kept inside the domains of their functions smoothly (`log(e
* e + 1)`, `sqrt(e * e + 0.5)`, `exp(tanh(e))`, divisions by `1 + e * e`),
so every program is differentiable everywhere: no discard is needed.
"""

from __future__ import annotations

import linecache
import math
import random
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from adpasses.tools.fuzz.check import Outcome

Shape = tuple[int, ...]

UNARY = ("np.sin({})", "np.cos({})", "np.tanh({})", "np.exp(np.tanh({}))", "np.log({0} * {0} + 1.0)",
         "np.sqrt({0} * {0} + 0.5)", "({}) ** 2", "np.arctan({})")
KINKED = ("np.abs({})", "np.clip({}, -0.4, 0.6)", "np.sign({}) * 0.5", "(({}) % 0.7)", "abs({})")
"""Unary ops with a kink or a jump (finite differences that straddle one
are skipped: `_Loss.derivative`)."""
KINKED_NUMBER = ("np.abs({})", "abs({})", "(({}) % 0.7)", "min(max({}, -0.4), 0.6)")
"""Those of numbers: `np.clip`, `np.sign` and `np.where` of numbers are
documented CompileErrors (docs/frontend.md, "Errors"), not generated."""
KINKED_EITHER = ("np.abs({})", "abs({})", "(({}) % 0.7)", "np.maximum(np.minimum({}, 0.6), -0.4)")
"""Those of an operand that may be an array or a number."""
BINARY = ("+", "-", "*")
RTOL = 1e-10
FD_RTOL, FD_ATOL = 1e-5, 1e-7
FD_STEP = 1e-6
KINK_RTOL = 1e-3
LARGE_SHARE = 0.25
"""Programs with m in 5..12 and n in 9..40 (else 2..4 and 3..6): vector
loops then run whole vectors and remainders, and the larger matrix
products (m n k >= 512) call BLAS (docs/frontend.md, "Matrix products")."""
PARALLEL_SHARE = 0.3
"""Programs also checked compiled with `jit(parallel=True)` on 3 threads."""
"""One-sided differences that disagree by more than this (relative) straddle a kink."""
ROUNDING_ULPS = 8
"""Finite differences of L are known to about ROUNDING_ULPS * eps * S / h,
S the sum of the magnitudes of L's terms (check.fd_rounding's reasoning)."""
LAYOUTS = ("contiguous", "strided", "reversed", "offset", "fortran")
"""How an array argument is laid out in memory (`_layout`): C-contiguous,
every other element of a wider buffer along the last axis, a reversed
view, a view one row into a larger buffer, Fortran order (2-D)."""


@dataclass
class ArrayProgram:
    seed: int
    name: str
    source: str
    args: list[Shape]          # float64 arrays (shape) or () for a float
    returns: str               # "number", "array" or "tuple"
    features: set[str] = field(default_factory=set)
    layouts: list[str] = field(default_factory=list)   # per argument (LAYOUTS; "" for a float)
    parallel: bool = False     # also check jit(parallel=True) (`_check_parallel`)


class _Gen:
    """Expressions of a given shape over the values in scope (`pool`)."""

    def __init__(self, seed: int):
        self.seed = seed
        self.r = random.Random(seed)
        self.m = self.r.randint(2, 4)
        self.n = self.r.randint(3, 6)
        sizes = random.Random(f"arrays size {seed}")  # its own draws: the program's text keeps its shape
        if sizes.random() < LARGE_SHARE:
            self.m, self.n = sizes.randint(5, 12), sizes.randint(9, 40)
        self.pool: list[tuple[str, Shape]] = []
        self.lines: list[str] = []
        self.features: set[str] = set()
        self.temps = 0
        self.helpers: list[str] = []   # functions the program calls, defined before it

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    # -- leaves: values in scope, their views, numbers --------------------------------

    def views(self, name: str, shape: Shape) -> list[tuple[str, Shape, str]]:
        """(expression, shape, feature) of the views of a value in scope."""
        out = [(name, shape, "")]
        if len(shape) == 1:
            k = shape[0]
            out += [(f"{name}[1:]", (k - 1,), "slice"), (f"{name}[:-1]", (k - 1,), "slice"),
                    (f"{name}[::2]", ((k + 1) // 2,), "step slice"), (f"{name}[::-1]", (k,), "reversed"),
                    (f"{name}[1:-1]", (k - 2,), "negative index"), (f"{name}[-1]", (), "negative index"),
                    (f"{name}[{self.r.randrange(k)}]", (), "element")]
        elif len(shape) == 2:
            a, b = shape
            j, i = self.r.randrange(b), self.r.randrange(a)
            out += [(f"{name}[:, {j}]", (a,), "column"), (f"{name}[{i}, :]", (b,), "row"),
                    (f"{name}[{i}]", (b,), "row"), (f"{name}.T", (b, a), "transpose"),
                    (f"{name}[1:, :]", (a - 1, b), "slice"), (f"{name}[:, ::2]", (a, (b + 1) // 2), "step slice"),
                    (f"{name}[:, -1]", (a,), "negative index"), (f"{name}[-1]", (b,), "negative index"),
                    (f"{name}[{i}, -1]", (), "negative index")]
        return out

    def leaf(self, shape: Shape, exact: bool) -> str:
        """A value of `shape` in scope (or a view of one); with `exact`
        False also one that broadcasts to it, or a number. An exact leaf
        gives the expression its shape (the others only broadcast)."""
        same, wider = [], []
        for name, s in self.pool:
            for text, vs, feature in self.views(name, s):
                if vs == shape and 0 not in vs:
                    same.append((text, feature))
                elif len(shape) == 2 and vs == (shape[1],):      # a row, repeated down the rows
                    wider.append((text, "broadcast row"))
                    wider.append((f"{text}[None, :]", "None row"))
                elif len(shape) == 2 and vs == (shape[0],):      # a column: v[:, None]
                    wider.append((f"{text}[:, None]", "broadcast column"))
        if exact and shape and not same:
            rows = [t for t, f in wider if f in ("broadcast row", "None row")]
            cols = [t for t, f in wider if f == "broadcast column"]
            if rows and cols:
                self.features.add("broadcast outer")
                return f"({self.r.choice(rows)} + {self.r.choice(cols)})"
            self.features.add("np.full")
            dims = shape if len(shape) > 1 else shape[0]
            return f"np.full({dims}, {round(self.r.uniform(-1.5, 1.5), 2)!r})"
        options = same if exact else same + wider
        if not options or (not exact and self.chance(0.15)) or (not shape and self.chance(0.3)):
            return repr(round(self.r.uniform(-1.5, 1.5), 2))
        text, feature = self.r.choice(options)
        if feature:
            self.features.add(feature)
        return text

    # -- expressions ------------------------------------------------------------------

    def expr(self, shape: Shape, depth: int, exact: bool = True) -> str:
        """An expression of `shape` (exact) or broadcasting to it."""
        kind = self.r.random()
        if depth <= 0 or kind < 0.25:
            return self.leaf(shape, exact)
        if kind < 0.50:
            op = self.r.choice(BINARY)
            self.features.add(f"op {op}")
            a, b = self.expr(shape, depth - 1, exact), self.expr(shape, depth - 1, False)
            return f"({a} {op} {b})" if self.chance(0.5) else f"({b} {op} {a})"
        if kind < 0.56:
            self.features.add("op /")
            d = self.expr(shape, depth - 1, False)
            return f"({self.expr(shape, depth - 1, exact)} / (1.0 + {d} * {d}))"
        if kind < 0.70:
            f = self.r.choice(UNARY)
            self.features.add(f.split("(")[0] if f.startswith("np.") else "power")
            return f.format(self.expr(shape, depth - 1, exact))
        if kind < 0.76:
            # an exact operand of an array shape is an array, never a number
            f = self.r.choice(KINKED_NUMBER if shape == () else KINKED if exact else KINKED_EITHER)
            self.features.add(f.split("(")[0] if f.startswith("np.") else
                              {"((": "op %", "ab": "abs", "mi": "min max"}[f[:2]])
            return f.format(self.expr(shape, depth - 1, exact))
        if kind < 0.82:
            return self.select(shape, depth - 1, exact)
        if kind < 0.88:
            return self.product(shape, depth - 1)
        return self.reduction_to(shape, depth - 1)

    def select(self, shape: Shape, depth: int, exact: bool) -> str:
        """`np.maximum`, `np.minimum`, `np.where` of a comparison or a mask."""
        a, b = self.expr(shape, depth, exact), self.expr(shape, depth, False)
        form = self.r.randrange(4)
        if form < 2:
            fn = ("np.maximum", "np.minimum")[form]
            self.features.add(fn)
            return f"{fn}({a}, {b})" if self.chance(0.5) else f"{fn}({b}, {a})"
        c = self.expr(shape, depth, False)
        if not exact or shape == ():  # a number is possible: np.where of numbers is not compiled
            self.features.add("if else")
            return f"({a} if {c} > {b} else {b})" if shape == () else f"np.maximum({a}, {b})"
        c = self.expr(shape, depth, True)
        if form == 2:
            self.features.add("np.where")
            return f"np.where({c} > {self.expr(shape, depth, False)}, {a}, {b})"
        self.features.add("mask")
        lo, hi = sorted(round(self.r.uniform(-1, 1), 2) for _ in range(2))
        op = self.r.choice(["&", "|"])
        return f"np.where(({c} > {lo}) {op} ({self.expr(shape, depth, True)} < {hi}), {a}, {b})"

    def product(self, shape: Shape, depth: int) -> str:
        """Matrix products (`@`, `np.dot`, `.dot`), `np.outer`, `np.cumsum` of `shape`."""
        m, n = self.m, self.n
        if shape == ():
            self.features.add("matmul")
            k = self.r.choice([m, n])
            return f"({self.expr((k,), depth)} @ {self.expr((k,), depth)})"
        if len(shape) == 2:
            a, b = shape
            if self.chance(0.5):
                self.features.add("np.outer")
                return f"np.outer({self.expr((a,), depth)}, {self.expr((b,), depth)})"
            self.features.add("matmul")
            k = self.r.choice([m, n])
            return f"({self.expr((a, k), depth)} @ np.tanh({self.expr((k, b), depth)}))"
        (k,) = shape
        form = self.r.randrange(4)
        if form == 0:
            self.features.add("np.cumsum")
            return f"np.cumsum({self.expr(shape, depth)})"
        other = self.r.choice([m, n])
        mats = [name for name, s in self.pool if s == (other, k)]
        if form == 1 and mats:
            self.features.add("transpose matmul")
            return f"({self.r.choice(mats)}.T @ {self.expr((other,), depth)})"
        self.features.add("matmul" if form != 3 else "np.dot matrix")
        a, v = self.expr((k, other), depth), self.expr((other,), depth)
        return f"({a} @ {v})" if form != 3 else f"np.dot({a}, {v})"

    def reduction_to(self, shape: Shape, depth: int) -> str:
        """An expression of `shape` that reduces a larger one."""
        m, n = self.m, self.n
        if shape == ():
            src = self.r.choice([(n,), (m, n), (m,)])
            e = self.expr(src, depth)
            form = self.r.randrange(9)
            self.features.add(["np.sum", "np.mean", ".sum()", "np.dot", "np.linalg.norm", "np.prod", "np.max",
                               "np.min", ".max()"][form])
            if form == 5:
                return f"np.prod(1.0 + 0.25 * np.tanh({e}))"
            if form in (6, 7):
                return f"{['np.max', 'np.min'][form - 6]}({e})"
            if form == 8:
                return f"({e}).max()"
            if form == 0:
                return f"np.sum({e})"
            if form == 1:
                return f"np.mean({e})"
            if form == 2:
                return f"({e}).sum()"
            if form == 3 and len(src) == 1:
                return f"np.dot({e}, {self.expr(src, depth)})"
            return f"np.sum({e})" if form == 3 else f"np.linalg.norm({e} + 2.0)"
        if len(shape) == 2:
            return self.leaf(shape, True)
        if len(shape) == 1:
            k = shape[0]
            axis_options = [(axis, src) for axis, src in ((0, (m, k)), (1, (k, n)), (-1, (k, n)), (0, (n, k)))]
            axis, src = self.r.choice(axis_options)
            fn = self.r.choice(["np.sum", "np.mean", "np.max", "np.min"])
            self.features.add(f"{fn} axis")
            return f"{fn}({self.expr(src, depth)}, axis={axis})"
        return self.leaf(shape, True)

    # -- statements -------------------------------------------------------------------

    def temp(self) -> str:
        self.temps += 1
        return f"t{self.temps}"

    def shapes(self) -> list[Shape]:
        m, n = self.m, self.n
        return [(n,), (m, n), (m,), (n,)]

    def statement(self) -> None:
        kind = self.r.random()
        m, n = self.m, self.n
        if kind < 0.38:
            shape = self.r.choice(self.shapes())
            t = self.temp()
            self.lines.append(f"{t} = {self.expr(shape, 3)}")
            self.pool.append((t, shape))
            self.features.add("temporary")
            return
        if kind < 0.64:
            self.slice_stores()
            return
        if kind < 0.76:
            locals_ = [(name, s) for name, s in self.pool if name.startswith("t") and s]
            if locals_:
                name, s = self.r.choice(locals_)
                op = self.r.choice(["+=", "-=", "*="])
                self.lines.append(f"{name} {op} {self.expr(s, 2, exact=False)}")
                self.features.add("in place")
                return
        if kind < 0.81:
            self.argument_store()
            return
        if kind < 0.86:
            self.for_in()
            return
        if kind < 0.90:
            self.time_steps()
            return
        if kind < 0.93 and self.prange_loop():
            return
        if kind < 0.97:
            self.helper_call()
            return
        mats = [(name, s) for name, s in self.pool if s == (m, n)]
        if mats:
            name, _ = self.r.choice(mats)
            acc = self.temp()
            self.lines.append(f"{acc} = 0.0")
            self.lines.append(f"for j in range({name}.shape[1]):")
            self.lines.append(f"    col = {name}[:, j]")
            inner = self.r.choice(["np.sum(np.exp(np.tanh(col)))", "np.dot(col, col)", "np.max(np.sin(col))",
                                   "np.mean(col * col)"])
            self.lines.append(f"    {acc} = {acc} + {inner}")
            self.pool.append((acc, ()))
            self.features.add("column loop")

    def argument_store(self) -> None:
        """A store or an in-place update into an array argument (the caller
        sees it: final arguments are compared with numpy's)."""
        args = [(name, s) for name, s in self.pool if name.startswith("a") and s]
        if not args:
            return
        name, shape = self.r.choice(args)
        op = self.r.choice(["=", "+=", "*="])
        if len(shape) == 1:
            k = shape[0]
            target, tshape = self.r.choice([(f"{name}[1:]", (k - 1,)), (f"{name}[::-1]", (k,)),
                                            (f"{name}[-1]", ()), (name, shape)])
        else:
            a, b = shape
            target, tshape = self.r.choice([(f"{name}[:, -1]", (a,)), (f"{name}[{self.r.randrange(a)}]", (b,)),
                                            (f"{name}[1:, :]", (a - 1, b)), (name, shape)])
        if target == name and op == "=":
            op = "+="  # `a0 = e` would rebind the name, not store
        self.lines.append(f"{target} {op} {self.expr(tshape, 2, exact=self.chance(0.7))}")
        self.features.add("argument store")

    def for_in(self) -> None:
        """`for v in x`, `enumerate`, `zip` over 1-D arrays, `for row in A`."""
        acc = self.temp()
        vectors = [(name, s) for name, s in self.pool if len(s) == 1]
        mats = [name for name, s in self.pool if len(s) == 2]
        self.lines.append(f"{acc} = 0.0")
        if mats and (not vectors or self.chance(0.25)):
            self.lines.append(f"for row in {self.r.choice(mats)}:")
            self.lines.append(f"    {acc} = {acc} + np.sum(np.tanh(row)) * 0.5")
            self.features.add("for row in")
        elif vectors:
            x, shape = self.r.choice(vectors)
            same = [name for name, s in vectors if s == shape and name != x]
            form = self.r.randrange(3)
            if form == 2 and same:
                self.lines.append(f"for i, (u, v) in enumerate(zip({x}, {self.r.choice(same)})):")
                self.lines.append(f"    {acc} = {acc} + np.sin(u) * v + 0.1 * i * u")
                self.features.add("enumerate zip")
            elif form == 1:
                self.lines.append(f"for i, v in enumerate({x}):")
                self.lines.append(f"    {acc} = {acc} + np.cos(v) * (i + 1.0)")
                self.features.add("enumerate")
            else:
                self.lines.append(f"for v in {x}:")
                self.lines.append(f"    {acc} = {acc} * 0.5 + np.tanh(v) * v")
                self.features.add("for in")
        self.pool.append((acc, ()))

    def prange_loop(self) -> bool:
        """An `adpasses.prange` loop over the rows of a matrix (independent
        iterations: a sum, or row stores into a new array); False if no
        matrix is in scope."""
        mats = [(name, s) for name, s in self.pool if len(s) == 2]
        if not mats:
            return False
        a_, (a, b) = self.r.choice(mats)
        rows = [name for name, s in self.pool if s == (b,)]
        v = self.r.choice(rows) if rows else repr(round(self.r.uniform(-1.5, 1.5), 2))
        out = self.temp()
        if self.chance(0.5):
            self.lines += [f"{out} = 0.0", f"for i in adpasses.prange({a_}.shape[0]):",
                           f"    {out} += np.sum(np.sin({a_}[i, :]) * {v})"]
            self.pool.append((out, ()))
            self.features.add("prange sum")
        else:
            self.lines += [f"{out} = np.zeros(({a}, {b}))", f"for i in adpasses.prange({a}):",
                           f"    {out}[i, :] = np.tanh({a_}[i, :]) * {v} + {a_}[i, 0]"]
            self.pool.append((out, (a, b)))
            self.features.add("prange rows")
        return True

    def helper_call(self) -> None:
        """A call of another compiled function: a tuple (array, number)
        returned, a local array returned, or a view of its argument
        returned (the caller's array: later writes show through it); the
        default of a keyword argument omitted, given by position or by name."""
        vectors = [(name, s) for name, s in self.pool if len(s) == 1]
        shape = self.r.choice(vectors)[1] if vectors else (self.n,)
        h = f"helper{self.seed}_{len(self.helpers)}"
        form = self.r.randrange(3)
        scale = round(self.r.uniform(-1.5, 1.5), 2)
        call = self.r.choice(["", f", {scale}", f", scale={scale}"])
        x = self.expr(shape, 1)
        if form == 0:
            f = self.r.choice(UNARY[:4])
            self.helpers.append(f"def {h}(x, y, scale=0.5):\n    return {f.format('x')} * y * scale, np.sum(x * y)\n")
            u, w = self.temp(), self.temp()
            self.lines.append(f"{u}, {w} = {h}({x}, {self.expr(shape, 1)}{call})")
            self.pool += [(u, shape), (w, ())]
            self.features.add("helper returns a tuple")
        elif form == 1:
            self.helpers.append(f"def {h}(x, scale=1.0):\n    out = np.zeros(x.shape[0])\n"
                                f"    out[1:] = x[:-1] * scale\n    out[0] = np.sin(x[-1])\n    return out\n")
            u = self.temp()
            self.lines.append(f"{u} = {h}({x}{call})")
            self.pool.append((u, shape))
            self.features.add("helper returns a local array")
        else:
            self.helpers.append(f"def {h}(x):\n    return x[::-1]\n")
            names = [name for name, s in self.pool if s == shape and name.startswith("t")]
            u = self.temp()
            self.lines.append(f"{u} = {h}({self.r.choice(names) if names else x})")
            self.pool.append((u, shape))
            self.features.add("helper returns a view")
        if form < 2:
            self.features.add(("keyword argument" if "=" in call else "default overridden") if call
                              else "default omitted")

    def time_steps(self) -> None:
        """Explicit diffusion steps on two buffers swapped each step (`u, un = un, u`)."""
        n = self.n
        sources = [name for name, s in self.pool if s == (n,)]
        u, un = self.temp(), self.temp()
        start = f"{self.r.choice(sources)}.copy()" if sources else f"np.full({n}, 0.5)"
        nu = round(self.r.uniform(0.05, 0.3), 2)
        self.lines += [f"{u} = {start}", f"{un} = np.zeros({n})",
                       f"for step in range({self.r.randint(1, 3)}):",
                       f"    {un}[1:-1] = {u}[1:-1] + {nu} * ({u}[2:] - 2.0 * {u}[1:-1] + {u}[:-2])",
                       f"    {un}[0] = {u}[0]", f"    {un}[-1] = np.sin({u}[-1])",
                       f"    {u}, {un} = {un}, {u}"]
        self.pool.append((u, (n,)))
        self.features.add("time steps swap")

    def slice_stores(self) -> None:
        m, n = self.m, self.n
        shape = self.r.choice([(n,), (m, n)])
        out = self.temp()
        sources = [name for name, s in self.pool if s == shape]
        if sources and self.chance(0.5):
            self.lines.append(f"{out} = {self.r.choice(sources)}.copy()")
            self.features.add("copy")
        else:
            ctor = self.r.choice(["np.zeros", "np.ones"])
            self.lines.append(f"{out} = {ctor}({shape if len(shape) > 1 else shape[0]})")
        for _ in range(self.r.randint(1, 3)):
            op = "=" if self.chance(0.6) else self.r.choice(["+=", "-=", "*="])
            if len(shape) == 1:
                target, tshape = self.r.choice([(f"{out}[1:]", (n - 1,)), (f"{out}[:-1]", (n - 1,)),
                                                (f"{out}[::2]", ((n + 1) // 2,)), (f"{out}[:]", (n,)),
                                                (f"{out}[::-1]", (n,)), (f"{out}[{self.r.randrange(n)}]", ())])
            else:
                i, j = self.r.randrange(m), self.r.randrange(n)
                target, tshape = self.r.choice([(f"{out}[:, {j}]", (m,)), (f"{out}[{i}, :]", (n,)),
                                                (f"{out}[{i}]", (n,)), (f"{out}[1:, :]", (m - 1, n)),
                                                (f"{out}[:, 1:]", (m, n - 1)), (f"{out}[{i}, {j}]", ())])
            value = self.expr(tshape, 2, exact=self.chance(0.7))
            self.lines.append(f"{target} {op} {value}")
            self.features.add("slice store" if op == "=" else "slice update")
        self.pool.append((out, shape))

    def returns(self) -> tuple[str, str]:
        kind = self.r.random()
        arrays = [(name, s) for name, s in self.pool if s and name.startswith("t")]
        total = self.expr((), 3)
        if kind < 0.45 or not arrays:
            self.features.add("return number")
            return "number", total
        name, s = self.r.choice(arrays)
        if kind < 0.75:
            self.features.add("return array")
            return "array", name
        if kind < 0.9:
            self.features.add("return tuple")
            return "tuple", f"{total}, {name}"
        other, _ = self.r.choice(arrays)
        self.features.add("return arrays" if other != name else "return an array twice")
        return "tuple", f"{name}, {other}"


def generate_arrays(seed: int) -> ArrayProgram:
    g = _Gen(seed)
    m, n = g.m, g.n
    args: list[Shape] = []
    for _ in range(g.r.randint(1, 3)):
        args.append(g.r.choice([(n,), (m, n), (m,)]))
    scalar = g.chance(0.4)
    names = [f"a{k}" for k in range(len(args))]
    g.pool = list(zip(names, args))
    params = list(names)
    if scalar:
        params.append("s")
        g.pool.append(("s", ()))
        args.append(())
    for _ in range(g.r.randint(1, 4)):
        g.statement()
    kind, value = g.returns()
    name = f"arrays_{seed}"
    body = "\n".join(f"    {line}" for line in g.lines + [f"return {value}"])
    source = "".join(f"{h}\n" for h in g.helpers) + f"def {name}({', '.join(params)}):\n{body}\n"
    # Drawn apart, so the layouts do not change the programs of a seed.
    r = random.Random(f"arrays layout {seed}")
    layouts = ["" if s == () else r.choice([lay for lay in LAYOUTS if lay != "fortran" or len(s) == 2])
               if r.random() < 0.5 else "contiguous" for s in args]
    features = g.features | {f"{lay} argument" for lay in layouts if lay not in ("", "contiguous")}
    parallel = r.random() < PARALLEL_SHARE
    if parallel:
        features.add("parallel")
    if g.n > 6:
        features.add("large")
    return ArrayProgram(seed, name, source, args, kind, features, layouts, parallel)


def python_function(p: ArrayProgram) -> Callable:
    """The program as a Python function whose source the frontend can read
    (registered with linecache under a file name of its own)."""
    filename = f"<adpasses fuzz arrays {p.seed}>"
    linecache.cache[filename] = (len(p.source), None, p.source.splitlines(True), filename)
    import adpasses

    env: dict[str, object] = {"np": np, "math": math, "adpasses": adpasses}
    exec(compile(p.source, filename, "exec"), env)
    return env[p.name]  # type: ignore[return-value]


def inputs(p: ArrayProgram, rng: np.random.Generator) -> list[object]:
    return [float(rng.uniform(-1.0, 1.0)) if s == () else rng.uniform(-1.0, 1.0, s) for s in p.args]


def _layout(values: np.ndarray, layout: str) -> np.ndarray:
    """A fresh array holding `values`, laid out as `layout` says (LAYOUTS)."""
    if layout == "strided":
        base = np.full(values.shape[:-1] + (2 * values.shape[-1],), np.nan)
        base[..., ::2] = values
        return base[..., ::2]
    if layout == "reversed":
        return values[::-1].copy()[::-1]
    if layout == "offset":
        base = np.full((values.shape[0] + 1,) + values.shape[1:], np.nan)
        base[1:] = values
        return base[1:]
    if layout == "fortran":
        return np.asfortranarray(values)
    return values.copy()


def _copies(values: list[object], layouts: list[str] | None = None) -> list[object]:
    layouts = layouts or [""] * len(values)
    return [_layout(v, lay) if isinstance(v, np.ndarray) else v for v, lay in zip(values, layouts)]


def _flat(out: object) -> list[np.ndarray]:
    parts = out if isinstance(out, tuple) else (out,)
    return [np.atleast_1d(np.asarray(o, dtype=np.float64)) for o in parts]


def _close(got: object, want: object, rtol: float = RTOL) -> bool:
    g, w = _flat(got), _flat(want)
    return len(g) == len(w) and all(a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=rtol)
                                    for a, b in zip(g, w))


def _same_bits(got: object, want: object) -> bool:
    g, w = _flat(got), _flat(want)
    return len(g) == len(w) and all(a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
                                    for a, b in zip(g, w))


class _Loss:
    """L(x) = <w, f(x)> by numpy, its central differences, and the test
    that finite differences straddle a kink."""

    def __init__(self, f: Callable, weights: list[np.ndarray]):
        self.f, self.weights = f, weights

    def terms(self, args: list[object]) -> tuple[float, float]:
        """(L, the sum of the magnitudes of its terms)."""
        parts = _flat(self.f(*_copies(args)))
        return (float(sum(np.sum(w * a) for w, a in zip(self.weights, parts))),
                float(sum(np.sum(np.abs(w * a)) for w, a in zip(self.weights, parts))))

    def derivative(self, at: Callable[[float], list[object]], x0: float) -> tuple[float, float] | None:
        """(central difference of L along `at(t)` at t = 0, its tolerance's
        rounding part), or None where one-sided differences disagree (a kink
        or a jump inside the step)."""
        h = FD_STEP * max(1.0, abs(x0))
        (up, size), (mid, _), (down, _) = self.terms(at(h)), self.terms(at(0.0)), self.terms(at(-h))
        forward, backward = (up - mid) / h, (mid - down) / h
        fd = (up - down) / (2 * h)
        rounding = ROUNDING_ULPS * np.finfo(np.float64).eps * max(1.0, size) / h
        if abs(forward - backward) > KINK_RTOL * max(1.0, abs(fd)) + 2 * rounding:
            return None
        return fd, rounding


def _moved(x: list[object], k: int, idx: tuple[int, ...]) -> Callable[[float], list[object]]:
    def at(t: float) -> list[object]:
        y = _copies(x)
        if idx == ():
            y[k] = float(y[k]) + t  # type: ignore[arg-type]
        else:
            y[k][idx] += t  # type: ignore[index]
        return y
    return at


def check_arrays(p: ArrayProgram) -> Outcome:
    import adpasses

    f = python_function(p)
    rng = np.random.default_rng(p.seed)
    x = inputs(p, rng)
    layouts = p.layouts or ["contiguous"] * len(x)
    final_want = _copies(x)
    want = f(*final_want)
    try:
        jf = adpasses.jit(f)
        final_got = _copies(x, layouts)
        got = jf(*final_got)
    except Exception as err:  # noqa: BLE001
        return Outcome("compiler error", f"{type(err).__name__}: {err}")
    if not _close(got, want):
        return Outcome("wrong primal", f"got {got!r}, numpy gives {want!r}")
    for k, (g, w) in enumerate(zip(final_got, final_want)):
        if isinstance(w, np.ndarray) and not np.allclose(g, w, rtol=RTOL, atol=RTOL):
            return Outcome("wrong primal", f"argument a{k} after the call: {g!r}, numpy leaves {w!r}")
    # a random cotangent of the output, contracted: L(x) = <w, f(x)>
    weights = [rng.normal(size=a.shape) for a in _flat(want)]
    loss = _Loss(f, weights)
    argnums = [k for k, s in enumerate(p.args) if s != ()]
    try:
        grads, changed = _gradients(p, jf, x, layouts, want, weights, argnums)
    except Exception as err:  # noqa: BLE001
        return Outcome("compiler error", f"gradient: {type(err).__name__}: {err}")
    if changed is not None:
        return Outcome("changed argument", changed)
    checked = skipped = 0
    for k, g in zip(argnums, grads):
        for idx in np.ndindex(x[k].shape):  # type: ignore[union-attr]
            found = loss.derivative(_moved(x, k, idx), float(x[k][idx]))  # type: ignore[index]
            if found is None:
                skipped += 1
                continue
            fd, rounding = found
            if not abs(g[idx] - fd) <= FD_ATOL + FD_RTOL * max(1.0, abs(fd)) + rounding:
                return Outcome("wrong gradient", f"d/d a{k}{list(idx)}: got {g[idx]!r}, finite differences "
                                                 f"{fd!r}")
            checked += 1
    if p.returns == "number":
        outcome = _check_jvp(jf, x, layouts, weights[0][0], loss, rng)
        if outcome is not None:
            return outcome
        checked += 1
    if p.parallel:
        outcome = _check_parallel(p, f, x, layouts, want, weights, argnums, grads)
        if outcome is not None:
            return outcome
    if p.returns == "number" and "argument store" not in p.features:
        outcome = _check_vmap(jf, x, layouts, argnums, rng)
        if outcome is not None:
            return outcome
    return Outcome("ok", checked=checked, skipped=skipped)


VMAP_BATCH = 3


def _check_vmap(jf, x, layouts, argnums, rng: np.random.Generator) -> Outcome | None:  # type: ignore[no-untyped-def]
    """`vmap(f)` and `vmap(grad(f, argnums))` over a batch of one array
    argument (the others shared: in_axes None) against a loop of calls
    (each call checked above); to 1e-9 relative (vmap compiles its own
    loop, which LLVM may vectorise otherwise)."""
    import adpasses

    k = int(rng.choice(argnums))
    batch = np.stack([x[k]] + [x[k] + 0.1 * rng.normal(size=x[k].shape) for _ in range(VMAP_BATCH - 1)])
    in_axes = tuple(0 if j == k else None for j in range(len(x)))

    def element(b: int) -> list[object]:
        args = _copies(x, layouts)
        args[k] = batch[b].copy()
        return args

    def shared() -> list[object]:
        args = _copies(x, layouts)
        args[k] = batch.copy()
        return args

    grad = adpasses.grad(jf, tuple(argnums))
    want_values = np.array([jf(*element(b)) for b in range(VMAP_BATCH)])
    want_grads = [grad(*element(b)) for b in range(VMAP_BATCH)]
    try:
        values = adpasses.vmap(jf, in_axes=in_axes)(*shared())
        grads = adpasses.vmap(grad, in_axes=in_axes)(*shared())
    except Exception as err:  # noqa: BLE001
        return Outcome("compiler error", f"vmap over a{k}: {type(err).__name__}: {err}")
    grads = grads if isinstance(grads, tuple) else (grads,)
    if not (np.shape(values) == (VMAP_BATCH,) and np.allclose(values, want_values, rtol=1e-9, atol=1e-9)):
        return Outcome("vmap mismatch", f"vmap over a{k}: {values!r}, a loop of calls {want_values!r}")
    for n, g in enumerate(grads):
        want = np.stack([w[n] for w in want_grads])
        if not (np.shape(g) == want.shape and np.allclose(g, want, rtol=1e-9, atol=1e-9)):
            return Outcome("vmap mismatch", f"vmap(grad) over a{k}, gradient {n}: {g!r}, a loop of calls {want!r}")
    return None


def _gradients(p: ArrayProgram, jf, x, layouts, want, weights, argnums):  # type: ignore[no-untyped-def]
    """(dL/d each array argument, None or how grad/vjp changed an argument)."""
    import adpasses

    args = _copies(x, layouts)
    before = _copies(args)
    if p.returns == "number":
        grads = adpasses.grad(jf, tuple(argnums))(*args)
        grads = [g * weights[0][0] for g in grads]
    else:
        _, pullback = adpasses.vjp(jf)(*args)
        cot = [w.reshape(np.shape(a)) for w, a in zip(weights, (want if isinstance(want, tuple) else (want,)))]
        cot = tuple(float(c) if c.shape == () else c for c in cot)
        every = pullback(cot if p.returns == "tuple" else cot[0])
        grads = [every[k] for k in argnums]
    for k, (a, b) in enumerate(zip(args, before)):
        if isinstance(a, np.ndarray) and not np.array_equal(a, b, equal_nan=True):
            return grads, f"argument a{k} after {'grad' if p.returns == 'number' else 'vjp'}: {a!r}, before {b!r}"
    return grads, None


def _check_jvp(jf, x, layouts, weight: float, loss: _Loss, rng: np.random.Generator) -> Outcome | None:  # type: ignore[no-untyped-def]
    """`adpasses.jvp` of a number-valued program along a random direction,
    against central differences of f along it."""
    import adpasses

    direction = [float(rng.normal()) if not isinstance(v, np.ndarray) else rng.normal(size=v.shape) for v in x]

    def at(t: float) -> list[object]:
        return [v + t * d for v, d in zip(x, direction)]

    try:
        _, tangent = adpasses.jvp(jf, tuple(_copies(x, layouts)), tuple(direction))
    except Exception as err:  # noqa: BLE001
        return Outcome("compiler error", f"jvp: {type(err).__name__}: {err}")
    found = loss.derivative(at, 1.0)
    if found is None:
        return None
    fd, rounding = found
    ours = float(tangent) * weight
    if not abs(ours - fd) <= FD_ATOL + FD_RTOL * max(1.0, abs(fd)) + rounding:
        return Outcome("wrong tangent", f"jvp along a random direction: got {ours / weight!r}, finite "
                                        f"differences {fd / weight!r}")
    return None


def _check_parallel(p: ArrayProgram, f, x, layouts, want, weights, argnums, grads) -> Outcome | None:  # type: ignore[no-untyped-def]
    """`jit(parallel=True)` on 3 threads (one chunk per thread): the values
    as numpy's and the gradients as the serial ones (to rounding: sums are
    added by chunks), each the same bits on a second call
    (docs/parallel.md, "Determinism")."""
    import adpasses
    from adpasses.native.runtime import get_num_threads, set_num_threads, set_parallel_min_work

    before, work = get_num_threads(), set_parallel_min_work(1)
    set_num_threads(3)
    try:
        jp = adpasses.jit(f, parallel=True)
        first = [jp(*_copies(x, layouts)) for _ in range(2)]
        pgrads = [_gradients(p, jp, x, layouts, want, weights, argnums)[0] for _ in range(2)]
    except Exception as err:  # noqa: BLE001
        return Outcome("parallel error", f"jit(parallel=True): {type(err).__name__}: {err}")
    finally:
        set_num_threads(before)
        set_parallel_min_work(work)
    if not _close(first[0], want, rtol=1e-9):
        return Outcome("parallel mismatch", f"jit(parallel=True) gives {first[0]!r}, numpy {want!r}")
    if not all(_close(g, s, rtol=1e-9) for g, s in zip(pgrads[0], grads)):
        return Outcome("parallel mismatch", f"gradient of jit(parallel=True): {pgrads[0]!r}, serial {grads!r}")
    if not _same_bits(first[1], first[0]) or not all(_same_bits(a, b) for a, b in zip(*pgrads)):
        return Outcome("parallel nondeterminism", "jit(parallel=True) on 3 threads: a second call differs in a bit")
    return None


def run_array_case(item: int) -> Outcome:
    """One seed of the array mode (the runner's `case` in worker processes)."""
    import warnings

    from adpasses.tools.fuzz.runner import forget_compiled

    warnings.simplefilter("ignore")
    try:
        return check_arrays(generate_arrays(item))
    except Exception as err:  # noqa: BLE001
        return Outcome("fuzzer error", f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=3)}")
    finally:
        forget_compiled()


def show_arrays(seed: int) -> str:
    p = generate_arrays(seed)
    return f"# seed {seed}: args {p.args}, returns {p.returns}, features {sorted(p.features)}\n{p.source}"
