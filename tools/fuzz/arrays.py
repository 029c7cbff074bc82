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
BINARY = ("+", "-", "*")
RTOL = 1e-10
FD_RTOL, FD_ATOL = 1e-5, 1e-7


@dataclass
class ArrayProgram:
    seed: int
    name: str
    source: str
    args: list[Shape]          # float64 arrays (shape) or () for a float
    returns: str               # "number", "array" or "tuple"
    features: set[str] = field(default_factory=set)


class _Gen:
    """Expressions of a given shape over the values in scope (`pool`)."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.m = self.r.randint(2, 4)
        self.n = self.r.randint(3, 6)
        self.pool: list[tuple[str, Shape]] = []
        self.lines: list[str] = []
        self.features: set[str] = set()
        self.temps = 0

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    # -- leaves: values in scope, their views, numbers --------------------------------

    def views(self, name: str, shape: Shape) -> list[tuple[str, Shape, str]]:
        """(expression, shape, feature) of the views of a value in scope."""
        out = [(name, shape, "")]
        if len(shape) == 1:
            k = shape[0]
            out += [(f"{name}[1:]", (k - 1,), "slice"), (f"{name}[:-1]", (k - 1,), "slice"),
                    (f"{name}[::2]", ((k + 1) // 2,), "step slice"), (f"{name}[::-1]", (k,), "reversed")]
        elif len(shape) == 2:
            a, b = shape
            j, i = self.r.randrange(b), self.r.randrange(a)
            out += [(f"{name}[:, {j}]", (a,), "column"), (f"{name}[{i}, :]", (b,), "row"),
                    (f"{name}[{i}]", (b,), "row"), (f"{name}.T", (b, a), "transpose"),
                    (f"{name}[1:, :]", (a - 1, b), "slice"), (f"{name}[:, ::2]", (a, (b + 1) // 2), "step slice")]
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
                elif len(shape) == 2 and vs == (shape[0],):      # a column: v[:, None]
                    wider.append((f"{text}[:, None]", "broadcast column"))
        if exact and shape and not same:
            rows = [t for t, f in wider if f == "broadcast row"]
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
        if kind < 0.55:
            op = self.r.choice(BINARY)
            self.features.add(f"op {op}")
            a, b = self.expr(shape, depth - 1, exact), self.expr(shape, depth - 1, False)
            return f"({a} {op} {b})" if self.chance(0.5) else f"({b} {op} {a})"
        if kind < 0.62:
            self.features.add("op /")
            d = self.expr(shape, depth - 1, False)
            return f"({self.expr(shape, depth - 1, exact)} / (1.0 + {d} * {d}))"
        if kind < 0.82:
            f = self.r.choice(UNARY)
            self.features.add(f.split("(")[0] if f.startswith("np.") else "power")
            return f.format(self.expr(shape, depth - 1, exact))
        return self.reduction_to(shape, depth - 1)

    def reduction_to(self, shape: Shape, depth: int) -> str:
        """An expression of `shape` that reduces a larger one."""
        m, n = self.m, self.n
        if shape == ():
            src = self.r.choice([(n,), (m, n), (m,)])
            e = self.expr(src, depth)
            form = self.r.randrange(5)
            self.features.add(["np.sum", "np.mean", ".sum()", "np.dot", "np.linalg.norm"][form])
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
            fn = self.r.choice(["np.sum", "np.mean"])
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
        if kind < 0.4:
            shape = self.r.choice(self.shapes())
            t = self.temp()
            self.lines.append(f"{t} = {self.expr(shape, 3)}")
            self.pool.append((t, shape))
            self.features.add("temporary")
            return
        if kind < 0.7:
            self.slice_stores()
            return
        if kind < 0.82:
            locals_ = [(name, s) for name, s in self.pool if name.startswith("t") and s]
            if locals_:
                name, s = self.r.choice(locals_)
                op = self.r.choice(["+=", "-=", "*="])
                self.lines.append(f"{name} {op} {self.expr(s, 2, exact=False)}")
                self.features.add("in place")
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
        self.features.add("return tuple")
        return "tuple", f"{total}, {name}"


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
    source = f"def {name}({', '.join(params)}):\n{body}\n"
    return ArrayProgram(seed, name, source, args, kind, g.features)


def python_function(p: ArrayProgram) -> Callable:
    """The program as a Python function whose source the frontend can read
    (registered with linecache under a file name of its own)."""
    filename = f"<adpasses fuzz arrays {p.seed}>"
    linecache.cache[filename] = (len(p.source), None, p.source.splitlines(True), filename)
    env: dict[str, object] = {"np": np, "math": math}
    exec(compile(p.source, filename, "exec"), env)
    return env[p.name]  # type: ignore[return-value]


def inputs(p: ArrayProgram, rng: np.random.Generator) -> list[object]:
    return [float(rng.uniform(-1.0, 1.0)) if s == () else rng.uniform(-1.0, 1.0, s) for s in p.args]


def _copies(values: list[object]) -> list[object]:
    return [v.copy() if isinstance(v, np.ndarray) else v for v in values]


def _flat(out: object) -> list[np.ndarray]:
    parts = out if isinstance(out, tuple) else (out,)
    return [np.atleast_1d(np.asarray(o, dtype=np.float64)) for o in parts]


def _close(got: object, want: object) -> bool:
    g, w = _flat(got), _flat(want)
    return len(g) == len(w) and all(a.shape == b.shape and np.allclose(a, b, rtol=RTOL, atol=RTOL)
                                    for a, b in zip(g, w))


def check_arrays(p: ArrayProgram) -> Outcome:
    import adpasses

    f = python_function(p)
    rng = np.random.default_rng(p.seed)
    x = inputs(p, rng)
    want = f(*_copies(x))
    try:
        jf = adpasses.jit(f)
        got = jf(*_copies(x))
    except Exception as err:  # noqa: BLE001
        return Outcome("compiler error", f"{type(err).__name__}: {err}")
    if not _close(got, want):
        return Outcome("wrong primal", f"got {got!r}, numpy gives {want!r}")
    # a random cotangent of the output, contracted: L(x) = <w, f(x)>
    weights = [rng.normal(size=a.shape) for a in _flat(want)]

    def loss(*args: object) -> float:
        return float(sum(np.sum(w * a) for w, a in zip(weights, _flat(f(*_copies(list(args)))))))

    argnums = [k for k, s in enumerate(p.args) if s != ()]
    try:
        if p.returns == "number":
            grads = adpasses.grad(jf, tuple(argnums))(*_copies(x))
            grads = [g * weights[0][0] for g in grads]
        else:
            _, pullback = adpasses.vjp(jf)(*_copies(x))
            cot = [w.reshape(np.shape(a)) for w, a in zip(weights, (want if isinstance(want, tuple) else (want,)))]
            if p.returns == "number":
                cot = [float(cot[0])]
            cot = tuple(float(c) if c.shape == () else c for c in cot)
            every = pullback(cot if p.returns == "tuple" else cot[0])
            grads = [every[k] for k in argnums]
    except Exception as err:  # noqa: BLE001
        return Outcome("compiler error", f"gradient: {type(err).__name__}: {err}")
    checked = 0
    for k, g in zip(argnums, grads):
        a = x[k]
        for idx in np.ndindex(a.shape):
            h = 1e-6
            up, down = _copies(x), _copies(x)
            up[k][idx] += h
            down[k][idx] -= h
            fd = (loss(*up) - loss(*down)) / (2 * h)
            if not abs(g[idx] - fd) <= FD_ATOL + FD_RTOL * max(1.0, abs(fd)):
                return Outcome("wrong gradient", f"d/d a{k}{list(idx)}: got {g[idx]!r}, finite differences "
                                                 f"{fd!r}")
            checked += 1
    return Outcome("ok", checked=checked)


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
