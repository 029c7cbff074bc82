"""A failing program as a self-checking lit test for `ad-run`.

The test holds the function, and a `@main` that builds the input point the
fuzzer used (buffers filled with its values, views made with
`memref.reinterpret_cast`), runs the primal with `func.call` and the
gradient with `ad.autodiff`, and for every value prints

    <what> = <ours> (expected <value>): ok <1|0>

where `ok` is computed in MLIR: |ours - expected| <= tolerance, the expected
values coming from the Python oracle (primal) and central finite differences
(gradient), with the fuzzer's tolerances (docs/fuzzing.md). The CHECK lines
require `ok 1` everywhere: the test passes exactly when the compiler gets the
program right, whatever the bug was (a wrong value, a compiler error or a
crash all fail it).
"""

from __future__ import annotations

from adpasses.tools.fuzz.check import (
    PRIMAL_RTOL,
    FiniteDifferences,
    Outcome,
    choose_point,
    coordinates,
    describe,
)
from adpasses.tools.fuzz.inputs import dup_buffers
from adpasses.tools.fuzz.program import FloatArg, IndexArg, MemArg, Program
from adpasses.tools.fuzz.to_mlir import arg_type, float_literal, mlir_function
from adpasses.tools.fuzz.to_python import Oracle, python_source

TOLERANCE_SLACK = 3.0
"""The fuzzer's tolerance times this: the test must not depend on the last
digits of finite differences, but must still fail on the bug it records."""


def run_line(p: Program) -> str:
    o = p.options
    flags = [] if o.policy == "minimal" else [f"--cache-policy={o.policy}"]
    flags += [] if o.simplify else ["--no-simplify"]
    run_flags = [] if o.opt_level == 3 else [f"--opt-level {o.opt_level}"]
    run_flags += [] if o.boundscheck else ["--no-boundscheck"]
    if not o.activity:
        return (f"// RUN: ad-opt %s --reverse --no-activity {' '.join(flags)} | "
                f"ad-run {' '.join(run_flags)} | filecheck %s").replace("  ", " ")
    return f"// RUN: ad-run %s {' '.join(flags + run_flags)} | filecheck %s".replace("  ", " ")


def lit_test(p: Program, outcome: Outcome, title: str = "") -> str:
    """The text of a lit test for `p` (which failed with `outcome`)."""
    oracle = Oracle(p)
    found = choose_point(p, oracle)
    if isinstance(found, str):
        raise ValueError(f"no usable input point: {found}")
    point, ref = found
    main = _Main(p)
    checks = main.build(point, ref, FiniteDifferences(p, oracle, point, ref))
    header = [
        run_line(p),
        f"// {title or f'Found by python -m adpasses.tools.fuzz (seed {p.seed}), shrunk.'}",
        f"// Failure: {outcome.kind}: {outcome.detail}",
        f"// Activities {p.activity} -> {list(p.ret_activity)}; options {p.options}.",
        "// @main prints every primal value and derivative with `ok 1` when it matches the",
        "// Python evaluation of @f (below) or central finite differences (docs/fuzzing.md).",
        "//",
        *("// " + line for line in python_source(p).rstrip().splitlines()),
        "",
    ]
    return "\n".join(header) + "\n" + mlir_function(p) + "\n" + main.text() + "\n" + "\n".join(
        f"// CHECK: {label} = {{{{.*}}}}: ok 1" for label in checks) + "\n"


class _Main:
    """Builds `@main`, line by line."""

    def __init__(self, p: Program):
        self.p = p
        self.lines: list[str] = []
        self.consts: dict[tuple[str, str], str] = {}
        self.count = 0
        self.labels: list[str] = []

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"%{hint}{self.count}"

    def emit(self, text: str) -> None:
        self.lines.append("  " + text)

    def index(self, v: int) -> str:
        return self.const(str(v), "index")

    def f64(self, v: float) -> str:
        return self.const(float_literal(v), "f64")

    def const(self, literal: str, ty: str) -> str:
        if (literal, ty) not in self.consts:
            name = self.fresh("k")
            self.emit(f"{name} = arith.constant {literal} : {ty}")
            self.consts[(literal, ty)] = name
        return self.consts[(literal, ty)]

    def text(self) -> str:
        return "func.func @main() {\n" + "\n".join(self.lines) + "\n  func.return\n}\n"

    # -- values -------------------------------------------------------------------------

    def buffer(self, values) -> str:  # type: ignore[no-untyped-def]
        name = self.fresh("buf")
        self.emit(f"{name} = memref.alloc({self.index(len(values))}) : memref<?xf64>")
        for e, v in enumerate(values):
            self.emit(f"memref.store {self.f64(float(v))}, {name}[{self.index(e)}] : memref<?xf64>")
        return name

    def view(self, a: MemArg, buffer: str) -> str:
        name = self.fresh("arg")
        sizes = [str(n) if a.static_shape else self.index(n) for n in a.shape]
        strides = [self.index(s) for s in a.strides]
        self.emit(f"{name} = memref.reinterpret_cast {buffer} to offset: [{self.index(a.offset)}], "
                  f"sizes: [{', '.join(sizes)}], strides: [{', '.join(strides)}] : memref<?xf64> "
                  f"to {arg_type(a)}")
        return name

    def arguments(self, buffers: list[str], floats: dict[str, float],
                  shadows: dict[int, str] | None = None) -> tuple[list[str], list[str]]:
        values, types = [], []
        for a in self.p.args:
            if isinstance(a, MemArg):
                values.append(self.view(a, buffers[a.buffer]))
                types.append(arg_type(a))
                if shadows is not None and a.activity != "const":
                    values.append(self.view(a, shadows[a.buffer]))
                    types.append(arg_type(a))
            elif isinstance(a, FloatArg):
                values.append(self.f64(floats[a.name]))
                types.append("f64")
            else:
                assert isinstance(a, IndexArg)
                values.append(self.index(a.value))
                types.append("index")
        return values, types

    def check(self, label: str, got: str, expected: float, tolerance: float) -> None:
        diff, size, ok = self.fresh("d"), self.fresh("a"), self.fresh("ok")
        self.emit(f"{diff} = arith.subf {got}, {self.f64(expected)} : f64")
        self.emit(f"{size} = math.absf {diff} : f64")
        self.emit(f"{ok} = arith.cmpf ole, {size}, {self.f64(tolerance)} : f64")
        self.emit(f'printf.print_format "{label} = {{}} (expected {expected:.6g}): ok {{}}\\n", '
                  f"{got} : f64, {ok} : i1")
        self.labels.append(label)

    def check_buffers(self, what: str, buffers: list[str], expected, skip=()) -> None:  # type: ignore[no-untyped-def]
        for b, values in enumerate(expected):
            if b in skip:
                continue
            for e, v in enumerate(values):
                got = self.fresh("v")
                self.emit(f"{got} = memref.load {buffers[b]}[{self.index(e)}] : memref<?xf64>")
                self.check(f"{what} buffer {b} element {e}", got, float(v),
                           TOLERANCE_SLACK * PRIMAL_RTOL * max(1.0, abs(float(v))))

    # -- the body -----------------------------------------------------------------------

    def build(self, point, ref, fd: FiniteDifferences) -> list[str]:  # type: ignore[no-untyped-def]
        p = self.p
        # The primal, on its own copy of the buffers.
        buffers = [self.buffer(b) for b in point.buffers]
        values, types = self.arguments(buffers, point.floats)
        results = self.results(f"func.call @{p.name}({', '.join(values)})", types,
                               len(p.results))
        for k, (r, v) in enumerate(zip(results, ref.results)):
            self.check(f"primal result {k}", r, v, TOLERANCE_SLACK * PRIMAL_RTOL * max(1.0, abs(v)))
        self.check_buffers("primal", buffers, ref.buffers)

        # The gradient: fresh buffers, shadows seeded, one seed per active result.
        buffers = [self.buffer(b) for b in point.buffers]
        shadows = {b: self.buffer(point.shadow_seeds[b]) for b in dup_buffers(p)}
        values, types = self.arguments(buffers, point.floats, shadows)
        for seed, act in zip(point.result_seeds, p.ret_activity):
            if act == "active":
                values.append(self.f64(seed))
                types.append("f64")
        actives = [a.name for a in p.args if isinstance(a, FloatArg) and a.activity == "active"]
        n_out = (len(p.results) if p.options.with_primal else 0) + len(actives)
        acts = ", ".join(p.activity)
        rets = ", ".join(p.ret_activity)
        attrs = f"activity = [{acts}], ret_activity = [{rets}]"
        attrs += ", with_primal" if p.options.with_primal else ""
        outs = self.results(f"ad.autodiff @{p.name}({', '.join(values)}) {{{attrs}}}", types, n_out)
        if p.options.with_primal:
            for k, (r, v) in enumerate(zip(outs, ref.results)):
                self.check(f"gradient's primal result {k}", r, v,
                           TOLERANCE_SLACK * PRIMAL_RTOL * max(1.0, abs(v)))
            outs = outs[len(p.results):]
        no_need = {a.buffer for a in p.args if isinstance(a, MemArg) and a.activity == "dupnoneed"}
        self.check_buffers("gradient's primal", buffers, ref.buffers, skip=no_need)
        derivatives = dict(zip(actives, outs))
        for c in coordinates(p):
            estimate = fd.estimate(c)
            if estimate is None:
                continue  # finite differences straddle a kink here
            fd1, fd2 = estimate
            if c[0] == "float":
                got = derivatives[c[1]]
            else:
                got = self.fresh("v")
                self.emit(f"{got} = memref.load {shadows[c[1]]}[{self.index(c[2])}] : memref<?xf64>")
            self.check(describe(p, c).replace("%", ""), got, fd1,
                       TOLERANCE_SLACK * fd.tolerance(fd1, fd1, fd2))
        return self.labels

    def results(self, call: str, types: list[str], n: int) -> list[str]:
        ret = ", ".join(["f64"] * n)
        signature = f"({', '.join(types)}) -> ({ret})"
        if n == 0:
            self.emit(f"{call} : {signature}")
            return []
        name = self.fresh("r")
        self.emit(f"{name}{':' + str(n) if n > 1 else ''} = {call} : {signature}")
        return [f"{name}#{k}" for k in range(n)] if n > 1 else [name]
