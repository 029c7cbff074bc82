"""Print a program as a plain Python function: the oracle.

The function takes the same arguments as the MLIR function (numpy arrays
for memrefs, floats, ints) and returns the tuple of its results. It is
executed by CPython with `math` (the same C library functions the JIT
calls) and numpy views, so it shares nothing with the compiler under test.
CPython's `math.gamma` and `math.lgamma` are CPython's own code, not the C
library's, and differ from it by a few ulps at most points: the oracle
calls the C library's `tgamma` and `lgamma_r` (`_tgamma`, `_lgamma`), the
functions the compiled code calls (seed 70052 of the forward volume: an
ulp of gamma(12.43) = 1.1e8, through a sin, moved a stored lgamma by 2e-7).

Ops with a kink or a jump (comparisons, max/min, abs, copysign, remf, floor,
round, ...) go through helpers that record the branch they took in
`Oracle.trace`: where a finite-difference step changes the trace, it
straddles a kink, and that coordinate is not compared. `fma` is computed
exactly with fractions (one rounding, like the fused op).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import operator
import struct
import sys
import types
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from adpasses.tools.fuzz.ops import FCMP_PREDICATES, ICMP_PREDICATES, OPS
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
    For,
    Idx,
    If,
    IndexToFloat,
    Let,
    Load,
    Op,
    PowI,
    Program,
    Select,
    Stmt,
    Store,
    Var,
    View,
    While,
)

class _CLibrary:
    """The C library's gamma functions (those the lowering calls), raising as
    `math`'s do where they do not give a finite number."""

    def __init__(self) -> None:
        libm = ctypes.CDLL(ctypes.util.find_library("m"))
        self._tgamma = libm.tgamma
        self._tgamma.restype, self._tgamma.argtypes = ctypes.c_double, [ctypes.c_double]
        self._lgamma_r = libm.lgamma_r
        self._lgamma_r.restype = ctypes.c_double
        self._lgamma_r.argtypes = [ctypes.c_double, ctypes.POINTER(ctypes.c_int)]
        self._sign = ctypes.c_int()

    @staticmethod
    def _finite(r: float, x: float, name: str) -> float:
        if math.isfinite(r) or not math.isfinite(x):
            return r
        if math.isinf(r):
            raise OverflowError(f"{name}({x!r}) is not finite")
        raise ValueError(f"{name}({x!r}) is not defined")

    def tgamma(self, x: float) -> float:
        return self._finite(self._tgamma(x), x, "gamma")

    def lgamma(self, x: float) -> float:
        return self._finite(self._lgamma_r(x, ctypes.byref(self._sign)), x, "lgamma")


_C = _CLibrary()


class Ambiguous(ValueError):
    """The program's result is not determined by its semantics here (the
    checker then rejects the input point)."""


_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
            "==": operator.eq, "!=": operator.ne}


LIBRARY_HELPERS = ("_tgamma", "_lgamma", "_digamma")
"""Helpers of the oracle that stand for a library function (besides `_m`)."""
CORRECTLY_ROUNDED = frozenset({"sqrt", "fabs", "fmod", "copysign", "floor", "ceil", "trunc"})
"""`math` functions that IEEE 754 defines to the last bit (an instruction
or an exact operation in the compiled code): never moved by `library_ulps`."""


class RoundingMismatch(ValueError):
    """A frozen-rounding evaluation (`Oracle.frozen`) rounded to f32 more
    often than the run whose roundings it replays."""


class Oracle:
    """A compiled Python version of a program that also records the branch
    taken at every kink (its *trace*) and the rounding residual
    `f32(x) - x` of every f32 conversion (`roundings`, in execution order).

    With `frozen` set to the roundings of an earlier run, the k-th f32
    conversion returns `x + frozen[k]` instead of rounding: a smooth
    function that equals the program exactly at that run's inputs and whose
    derivative is the one the reverse rule of `extf(truncf(x))` computes
    (1). Finite differences use it (docs/fuzzing.md): the real f32 staircase
    has no useful finite differences (`x - f32(x)` is pure rounding noise).

    With `library_ulps` set to k, every library function's result (`math`,
    the gamma functions, digamma) is multiplied by `1 + k eps`: how far
    rounding inside the library moves the program (the checker's
    ill-conditioning test; vectorised loops call libmvec, up to 4 ulps from
    the scalar functions the oracle calls)."""

    def __init__(self, program: Program):
        self.source = python_source(program)
        self.trace: list = []
        self.peak = 0.0
        """The largest magnitude of a float assigned or stored in the last run."""
        self.roundings: list[float] = []
        self.frozen: list[float] | None = None
        self.library_ulps = 0
        self._watched = python_source(program, watch=True)
        self._name, self._file = program.name, f"<fuzz oracle {program.seed}>"
        self.function: Callable = self._compile(self._helpers())
        self._moved: dict[int, Callable] = {}

    def _compile(self, env: dict) -> Callable:
        exec(compile(self._watched, self._file, "exec"), env)
        return env[self._name]

    def _moving_library(self, ulps: int) -> Callable:
        """The function with every library result moved by `ulps` (compiled
        once per value, so plain runs pay nothing for it)."""
        if ulps not in self._moved:
            factor = 1.0 + ulps * sys.float_info.epsilon

            def move(fn: Callable) -> Callable:
                def moved(*args):  # type: ignore[no-untyped-def]
                    r = fn(*args)
                    return r * factor if isinstance(r, float) else r
                return moved

            env = self._helpers()
            env["_m"] = types.SimpleNamespace(**{
                name: getattr(math, name) if name in CORRECTLY_ROUNDED else move(getattr(math, name))
                for name in dir(math) if not name.startswith("_") and callable(getattr(math, name))})
            for name in LIBRARY_HELPERS:
                env[name] = move(env[name])
            self._moved[ulps] = self._compile(env)
        return self._moved[ulps]

    def __call__(self, *args):  # type: ignore[no-untyped-def]
        """Run the program (it mutates the arrays it is given); returns the
        results and the trace."""
        self.trace.clear()
        self.roundings.clear()
        self.peak = 0.0
        function = self._moving_library(self.library_ulps) if self.library_ulps else self.function
        results = function(*args)
        return results, list(self.trace)

    def _helpers(self) -> dict:
        trace = self.trace

        # Each op with a kink or a jump appends the branch it took.
        def cmp(op):  # type: ignore[no-untyped-def]
            def f(a: float, b: float) -> bool:
                taken = op(a, b)
                trace.append(taken)
                return taken
            return f

        def remf(a: float, b: float) -> float:
            trace.append(math.trunc(a / b))  # the derivative in b is -trunc(a/b)
            return math.fmod(a, b)

        def powi(x: float, n: int) -> float:
            # math.fpowi as LLVM's powi and compiler-rt's __powidf2 compute
            # it (and adpasses lowers it): repeated squaring, 1/x**|n| for
            # n < 0. libm pow rounds differently (by an ulp), which a later
            # remf or comparison can amplify into a different primal.
            k, result, square = abs(n), 1.0, x
            first = True
            while k:
                if k & 1:
                    result = square if first else result * square
                    first = False
                k >>= 1
                if k:
                    square = square * square
            return 1.0 / result if n < 0 else result

        def signed_zero_tie(a: float, b: float) -> bool:
            return a == b == 0.0 and math.copysign(1.0, a) != math.copysign(1.0, b)

        def maximum(a: float, b: float) -> float:
            trace.append(a >= b)
            if signed_zero_tie(a, b):
                return 0.0  # IEEE 754-2019 maximum: -0 < +0
            return max(a, b)

        def minimum(a: float, b: float) -> float:
            trace.append(a <= b)
            if signed_zero_tie(a, b):
                return -0.0
            return min(a, b)

        def num(pick):  # type: ignore[no-untyped-def]
            def f(a: float, b: float) -> float:
                trace.append(a >= b)
                if signed_zero_tie(a, b):  # maxnum/minnum may return either zero
                    raise Ambiguous("maxnum/minnum of -0 and +0")
                return pick(a, b)
            return f

        def fabs(x: float) -> float:
            trace.append(x < 0)
            return abs(x)

        def copysign(a: float, b: float) -> float:
            trace.append((math.copysign(1.0, a), math.copysign(1.0, b)))
            return math.copysign(a, b)

        # Python's floor/ceil/trunc/round return ints: a zero result must get
        # the sign of x back, as C's functions give it (ceil(-0.5) is -0.0).
        def to_integer(fn):  # type: ignore[no-untyped-def]
            def f(x: float) -> float:
                r = float(fn(x))
                r = math.copysign(0.0, x) if r == 0.0 else r
                trace.append(r)
                return r
            return f

        def half_away(x: float) -> float:
            whole = math.floor(abs(x))  # abs(x) - whole is exact, unlike abs(x) + 0.5
            return math.copysign(whole + (abs(x) - whole >= 0.5), x)

        def fma(a: float, b: float, c: float) -> float:
            return float(Fraction(a) * Fraction(b) + Fraction(c))

        roundings = self.roundings

        def seen(x: float) -> float:
            m = abs(x)
            if not m <= self.peak:  # also NaN
                self.peak = m if m == m else math.inf
            return x

        def f32(x: float) -> float:
            frozen = self.frozen
            if frozen is not None:
                k = len(roundings)
                if k >= len(frozen):
                    raise RoundingMismatch("more f32 conversions than the frozen run")
                roundings.append(frozen[k])
                return x + frozen[k]
            r = struct.unpack("f", struct.pack("f", x))[0]
            roundings.append(r - x)  # exact: r and x are within 2**-24 relative
            return r

        def select(c: bool, a: float, b: float) -> float:
            return a if c else b

        def digamma(x: float) -> float:
            # psi(x) for the x > 0 the generator guards into: the recurrence
            # up to x >= 20, then the asymptotic series (an independent
            # oracle of special.digamma: the compiled one also uses the
            # reflection and a series about the root).
            acc = 0.0
            while x < 20.0:
                acc -= 1.0 / x
                x += 1.0
            f = 1.0 / (x * x)
            series = f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f * (1 / 132)))))
            return acc + math.log(x) - 0.5 / x - series

        def both(a: bool, b: bool) -> bool:
            return a and b

        env = {
            "_m": math, "_np": np, "_remf": remf, "_maximum": maximum, "_minimum": minimum,
            "_maxnum": num(max), "_minnum": num(min), "_abs": fabs,
            "_copysign": copysign, "_floor": to_integer(math.floor),
            "_ceil": to_integer(math.ceil), "_trunc": to_integer(math.trunc),
            "_round": to_integer(half_away), "_roundeven": to_integer(round), "_fma": fma,
            "_f32": f32, "_powi": powi, "_seen": seen,
            "_sel": select, "_and": both, "_digamma": digamma,
            "_tgamma": _C.tgamma, "_lgamma": _C.lgamma,
        }
        for pred, sym in FCMP_PREDICATES.items():
            env[f"_cmp_{pred}"] = cmp(_COMPARE[sym])
        return env


# -- printing -------------------------------------------------------------------------


def python_source(p: Program, watch: bool = False) -> str:
    """The Python function; with `watch`, every float assigned or stored
    goes through `_seen`, which records the largest magnitude (`Oracle.peak`)."""
    lines = [f"def {p.name}({', '.join(a.name for a in p.args)}):"]
    printer = _Printer(lines, watch)
    printer.block(p.body, 1)
    results = ", ".join(printer.expr(e) for e in p.results)
    lines.append(f"    return ({results}{',' if len(p.results) == 1 else ''})")
    return "\n".join(lines) + "\n"


def python_idx(idx: Idx) -> str:
    parts = [str(idx.const)] if idx.const or not idx.terms else []
    for coef, sym in idx.terms:
        name = f"{sym.mem}.shape[{sym.axis}]" if isinstance(sym, Dim) else sym
        parts.append(name if coef == 1 else f"{coef}*{name}")
    return "(" + " + ".join(parts) + ")"


class _Printer:
    def __init__(self, lines: list[str], watch: bool = False):
        self.lines = lines
        self.watch = watch

    def value(self, e: Expr) -> str:
        return f"_seen({self.expr(e)})" if self.watch else self.expr(e)

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def block(self, body: tuple[Stmt, ...], depth: int) -> None:
        if not body:
            self.emit(depth, "pass")
        for s in body:
            self.stmt(s, depth)

    def stmt(self, s: Stmt, depth: int) -> None:
        if isinstance(s, Let | Assign):
            self.emit(depth, f"{s.var} = {self.value(s.expr)}")
        elif isinstance(s, Store):
            self.emit(depth, f"{s.mem}[{', '.join(python_idx(i) for i in s.idx)}] = {self.value(s.expr)}")
        elif isinstance(s, For):
            self.emit(depth, f"for {s.iv} in range({python_idx(s.lb)}, {python_idx(s.ub)}, {s.step}):")
            self.block(s.body, depth + 1)
        elif isinstance(s, If):
            self.emit(depth, f"if {self.cond(s.cond)}:")
            self.block(s.then, depth + 1)
            self.emit(depth, "else:")
            self.block(s.orelse, depth + 1)
        elif isinstance(s, While):
            # Both conditions are evaluated, as scf.while's `before` region does.
            limit = f"{s.counter} < {s.limit}"
            cond = f"_and({limit}, {self.cond(s.cond)})" if s.cond is not None else limit
            self.emit(depth, f"{s.counter} = 0")
            self.emit(depth, f"while {cond}:")
            self.block(s.body, depth + 1)
            self.emit(depth + 1, f"{s.counter} += 1")
        elif isinstance(s, Alloc):
            self.emit(depth, f"{s.mem} = _np.full({s.shape!r}, {self.expr(s.fill)})")
        elif isinstance(s, View):
            parts = []
            for o, n, st, keep in zip(s.offsets, s.sizes, s.strides, s.keep):
                start = python_idx(o)
                parts.append(f"{start}:{start} + {(n - 1) * st + 1}:{st}" if keep else start)
            self.emit(depth, f"{s.mem} = {s.source}[{', '.join(parts)}]")
        elif isinstance(s, Copy):
            self.emit(depth, f"{s.dst}[...] = {s.src}")
        else:
            raise TypeError(f"unknown statement {s!r}")

    def cond(self, c: Cond) -> str:
        if isinstance(c, FCmp):
            return f"_cmp_{c.pred}({self.expr(c.a)}, {self.expr(c.b)})"
        return f"({python_idx(c.a)} {ICMP_PREDICATES[c.pred]} {python_idx(c.b)})"

    def expr(self, e: Expr) -> str:
        if isinstance(e, Const):
            return repr(e.value)
        if isinstance(e, Var):
            return e.name
        if isinstance(e, Load):
            return f"{e.mem}.item({', '.join(python_idx(i) for i in e.idx)})"
        if isinstance(e, Op):
            return OPS[e.op].python.format(*(self.expr(a) for a in e.args))
        if isinstance(e, PowI):
            return f"_powi({self.expr(e.base)}, {int(e.n)!r})"
        if isinstance(e, Select):
            return f"_sel({self.cond(e.cond)}, {self.expr(e.a)}, {self.expr(e.b)})"
        if isinstance(e, IndexToFloat):
            return f"float{python_idx(e.idx)}"
        if isinstance(e, F32):
            return f"_f32({self.expr(e.x)})"
        raise TypeError(f"unknown expression {e!r}")


