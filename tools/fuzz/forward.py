"""The forward mode of the fuzzer (`--mode forward`): the jvp of each random
program, checked two ways (docs/fuzzing.md, "The forward and Hessian modes"):

1. against central finite differences of the oracle along the tangent
   direction u, output by output (every result, every element of every
   buffer a dup argument reaches), kinks skipped as in the default mode;
2. by the dot-product test against reverse mode:
   `<jvp(f)(x, u), v> == <u, vjp(f)(x, v)>` to rounding, v being the
   default mode's seeds (result seeds and shadow seeds), so the reverse
   side is the gradient the default mode checks.

The jvp is asked for in MLIR, as a user of `ad-opt --forward` would: a
wrapper function `@fuzz_jvp` whose body is one `ad.fwddiff` of the program,
run through the pass `ad-forward`, compiled, and called. Active float
arguments become `dup` (their tangent follows them), memref arguments keep
their activity (const / dup / dupnoneed), and every result is `dup` (its
primal and its tangent are returned), so const results get their tangent
checked too. Shadows alias like the primals (the same views of one tangent
buffer per base buffer), which is Enzyme's rule for aliased arguments.

The helpers here (wrapper text, argument lists, the ad-forward pipeline)
are shared with the Hessian mode (`tools/fuzz/hessian.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from adpasses.tools.fuzz.check import (
    F32_ATOL,
    F32_RTOL,
    FD_ATOL,
    FD_NOISE_FACTOR,
    FD_RTOL,
    NOT_SMOOTH,
    Outcome,
    _compare_buffers,
    _compare_results,
    _Failure,
    _first_line,
    choose_point,
    compile_case,
    fd_rounding,
    reached_elements,
    uses_f32,
)
from adpasses.tools.fuzz.inputs import (
    Evaluation,
    Point,
    as_tuple,
    call_args,
    dup_buffers,
    evaluate,
    functional,
    magnitude_ok,
    view,
)
from adpasses.tools.fuzz.program import FloatArg, IndexArg, MemArg, Program
from adpasses.tools.fuzz.to_mlir import mlir_function
from adpasses.tools.fuzz.to_python import Oracle

DOT_RTOL = 1e-9
"""The dot-product test: |<jvp, v> - <u, vjp>| within this times the sum of
the magnitudes of the terms of both sides (two evaluations of the same
bilinear form in different orders: they differ by rounding only)."""
DOT_RTOL_F32 = 1e-5
"""Programs rounding through f32 round tangents and adjoints through f32
too, at different places: 6e-8 relative per rounding, a few in a row."""
STEP = 1e-6

JVP_NAME = "fuzz_jvp"


# -- the requests, in MLIR ----------------------------------------------------------------


def function_types(p: Program) -> tuple[list[str], list[str]]:
    """The MLIR argument and result types of the program's function."""
    from adpasses.core.context import parse_module

    module = parse_module(mlir_function(p), f"fuzz_{p.seed}.mlir")
    f = next(op for op in module.ops if getattr(op, "sym_name", None) is not None
             and op.sym_name.data == p.name)
    return ([str(t) for t in f.function_type.inputs.data],
            [str(t) for t in f.function_type.outputs.data])


def forward_activity(a) -> str:  # type: ignore[no-untyped-def]
    """The argument's activity in the jvp: active floats carry a tangent."""
    if isinstance(a, FloatArg):
        return "dup" if a.activity == "active" else "const"
    if isinstance(a, IndexArg):
        return "const"
    return a.activity


def fwddiff_wrapper(name: str, callee: str, types: list[str], activity: list[str],
                    result_types: list[str], ret_activity: list[str], width: int = 1) -> str:
    """`func.func @name` taking the operands of `ad.fwddiff @callee` and
    returning its results: `width` tangent operands (lane 0 first) after each
    argument whose activity is not const; per result, its primal (dup,
    const) and `width` tangents (dup, dupnoneed)."""
    operands, operand_types = [], []
    for k, (t, act) in enumerate(zip(types, activity)):
        operands.append(f"%a{k}")
        operand_types.append(t)
        if act != "const":
            operands += [f"%t{k}_{lane}" for lane in range(width)]
            operand_types += [t] * width
    results: list[str] = []
    for t, act in zip(result_types, ret_activity):
        results += [t] * ((act in ("dup", "const")) + width * (act in ("dup", "dupnoneed")))
    signature = ", ".join(f"{o}: {t}" for o, t in zip(operands, operand_types))
    lanes = f", width = {width}" if width != 1 else ""
    call = (f"ad.fwddiff @{callee}({', '.join(operands)}) {{activity = [{', '.join(activity)}], "
            f"ret_activity = [{', '.join(ret_activity)}]{lanes}}} : ({', '.join(operand_types)}) -> "
            f"({', '.join(results)})")
    if not results:
        return (f"func.func @{name}({signature}) {{\n  {call}\n  func.return\n}}\n")
    names = ", ".join(f"%r#{k}" for k in range(len(results)))
    return (f"func.func @{name}({signature}) -> ({', '.join(results)}) {{\n"
            f"  %r:{len(results)} = {call}\n"
            f"  func.return {names} : {', '.join(results)}\n}}\n")


@dataclass(frozen=True)
class Request:
    """How the jvp is asked for: the vector width (tangents per sweep) and
    each result's activity (dup: primal and tangents; dupnoneed: tangents)."""

    width: int
    ret_activity: tuple[str, ...]


def draw_request(p: Program) -> Request:
    """Drawn from a generator of its own (the programs of the default mode
    stay the same): width 1 in half the programs, 2 or 3 otherwise; each
    result dup (3 in 4) or dupnoneed."""
    rng = np.random.default_rng([p.seed, 31337])
    width = int(rng.choice([1, 1, 2, 3]))
    return Request(width, tuple("dup" if rng.random() < 0.75 else "dupnoneed" for _ in p.results))


def jvp_source(p: Program, request: Request | None = None) -> str:
    request = request or draw_request(p)
    types, result_types = function_types(p)
    wrapper = fwddiff_wrapper(JVP_NAME, p.name, types, [forward_activity(a) for a in p.args],
                              result_types, list(request.ret_activity), request.width)
    return mlir_function(p) + "\n" + wrapper


def run_forward_pipeline(p: Program, module) -> None:  # type: ignore[no-untyped-def]
    """`ad-opt --forward`: the reverse pipeline first if the module asks for
    a gradient (a forward-over-reverse request differentiates the gradient,
    built with the program's cache policy, activity analysis and
    simplification), then `ad-forward`, then the elision of shadow checks
    (last, as always)."""
    from adpasses.dialects.ad import AutodiffOp

    from adpasses.core.context import make_context
    from adpasses.transforms.registry import AD_PASSES

    ctx = make_context()
    if any(isinstance(op, AutodiffOp) for op in module.walk()):
        o = p.options
        AD_PASSES["ad-reverse"]()(cache_policy=o.policy, activity=o.activity,
                                  simplify=o.simplify).apply(ctx, module)
    AD_PASSES["ad-forward"]()().apply(ctx, module)
    AD_PASSES["ad-elide-shadow-checks"]()().apply(ctx, module)


def compile_request(p: Program, source: str, name: str):  # type: ignore[no-untyped-def]
    """Parse `source`, run the forward pipeline, compile; the function `name`."""
    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module

    module = parse_module(source, f"fuzz_{p.seed}.mlir")
    run_forward_pipeline(p, module)
    compiled = compile_module(module, boundscheck=p.options.boundscheck,
                              opt_level=p.options.opt_level)
    return compiled[name]


# -- tangent directions -------------------------------------------------------------------


@dataclass
class Direction:
    """A tangent direction: per active float argument, per dup buffer (zero
    outside the elements its arguments' views reach, where no derivative is
    defined)."""

    floats: dict[str, float]
    buffers: dict[int, np.ndarray]


def random_direction(p: Program, salt: int) -> Direction:
    rng = np.random.default_rng([p.seed, 7919, salt])
    floats = {a.name: float(rng.standard_normal()) for a in p.args
              if isinstance(a, FloatArg) and a.activity == "active"}
    buffers = {}
    for b in dup_buffers(p):
        u = np.zeros(p.buffers[b])
        reached = reached_elements(p, b)
        u[reached] = rng.standard_normal(len(reached))
        buffers[b] = u
    return Direction(floats, buffers)


def moved(p: Program, point: Point, u: Direction, t: float) -> tuple[dict[str, float], list[np.ndarray]]:
    """The input point x + t u."""
    floats = {k: v + t * u.floats.get(k, 0.0) for k, v in point.floats.items()}
    buffers = [b + t * u.buffers[k] if k in u.buffers else b.copy()
               for k, b in enumerate(point.buffers)]
    return floats, buffers


def tangent_args(p: Program, buffers: list[np.ndarray], floats: dict[str, float],
                 tangents: list[list[np.ndarray]], us: list[Direction]) -> list:
    """Arguments of `ad.fwddiff @f`: each argument, then its tangent per lane
    when it has one (memref: the same view of that lane's tangent buffer)."""
    out: list = []
    for a in p.args:
        if isinstance(a, MemArg):
            out.append(view(a, buffers[a.buffer]))
            if a.activity != "const":
                out += [view(a, lane[a.buffer]) for lane in tangents]
        elif isinstance(a, FloatArg):
            out.append(floats[a.name])
            if a.activity == "active":
                out += [u.floats[a.name] for u in us]
        else:
            out.append(a.value)
    return out


# -- finite differences along a direction -------------------------------------------------


class _Straddles(Exception):
    """A step changed the oracle's trace (crossed a kink) or overflowed."""


@dataclass
class Tolerances:
    rtol: float
    atol: float
    dot_rtol: float

    @classmethod
    def of(cls, p: Program) -> Tolerances:
        if uses_f32(p):
            return cls(F32_RTOL, F32_ATOL, DOT_RTOL_F32)
        return cls(FD_RTOL, FD_ATOL, DOT_RTOL)


def outputs(p: Program, ev: Evaluation) -> np.ndarray:
    """Every result, then every reached element of every dup buffer."""
    parts = [np.asarray(ev.results, dtype=float)]
    parts += [ev.buffers[b][reached_elements(p, b)] for b in dup_buffers(p)]
    return np.concatenate(parts) if parts else np.zeros(0)


def output_names(p: Program) -> list[str]:
    names = [f"result {k}" for k in range(len(p.results))]
    for b in dup_buffers(p):
        names += [f"buffer {b} element {e}" for e in reached_elements(p, b)]
    return names


def directional_fd(p: Program, oracle: Oracle, point: Point, ref: Evaluation, u: Direction,
                   scale: float) -> np.ndarray:
    """(F(x + s h u) - F(x - s h u)) / (2 s h) for the oracle's outputs F;
    rounding residuals of f32 conversions replayed, kinks detected."""
    h = scale * STEP

    def at(t: float) -> np.ndarray:
        floats, buffers = moved(p, point, u, t)
        oracle.frozen = ref.roundings
        try:
            ev = evaluate(oracle, p, buffers, floats)
        finally:
            oracle.frozen = None
        if (not magnitude_ok(ev) or ev.trace != ref.trace
                or len(ev.roundings) != len(ref.roundings)):
            raise _Straddles
        return outputs(p, ev)

    try:
        return (at(h) - at(-h)) / (2 * h)
    except (ArithmeticError, ValueError) as err:
        raise _Straddles from err


def compare_with_fd(ours: np.ndarray, reference: np.ndarray, names: list[str], kind: str,
                    tol: Tolerances, second, what: str,
                    rounding: float = 0.0) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Compare `ours` with finite differences `reference` (FD(h)) output by
    output; where one is off, FD(2h) (`second()`) widens the tolerance by
    the finite-difference error estimate, or shows the function is not
    smooth there (skipped). `rounding` is what the rounding of the values
    leaves FD(h) unknown (`check.fd_rounding`). Returns (checked, skipped)."""
    bad = [k for k in range(len(ours))
           if not (math.isfinite(ours[k]) and abs(ours[k] - reference[k])
                   <= tol.rtol * max(abs(ours[k]), abs(reference[k])) + tol.atol * max(1.0, abs(reference[k]))
                   + rounding)]
    if not bad:
        return len(ours), 0
    try:
        fd2 = second()
    except _Straddles:
        return len(ours) - len(bad), len(bad)
    skipped = 0
    for k in bad:
        noise = abs(reference[k] - fd2[k])
        if noise > NOT_SMOOTH * max(1.0, abs(reference[k])):
            skipped += 1
            continue
        allowed = (tol.rtol * max(abs(ours[k]), abs(reference[k]))
                   + tol.atol * max(1.0, abs(reference[k])) + FD_NOISE_FACTOR * noise + rounding)
        if not (abs(ours[k] - reference[k]) <= allowed):
            raise _Failure(kind, f"{what} of {names[k]}: ours {float(ours[k])!r}, finite differences "
                           f"{float(reference[k])!r} (|FD(h)-FD(2h)| = {noise:.1e})")
    return len(ours) - skipped, skipped


# -- the reverse-mode side of the dot-product test ----------------------------------------


def run_gradient(p: Program, gradient, floats: dict[str, float], buffers: list[np.ndarray],
                 point: Point) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The compiled gradient (compile_case) at (floats, buffers) with the
    point's seeds: dL/da for every active float, then dL/d(initial element)
    for every reached element of every dup buffer (the coordinates' order
    of `random_direction`)."""
    work = [b.copy() for b in buffers]
    shadows = [point.shadow_seeds[b].copy() if b in point.shadow_seeds else np.zeros(0)
               for b in range(len(work))]
    args = call_args(p, work, floats, shadows)
    args += [s for s, act in zip(point.result_seeds, p.ret_activity) if act == "active"]
    out = list(as_tuple(gradient(*args)))
    if p.options.with_primal:
        out = out[len(p.results):]
    parts = [np.asarray([float(v) for v in out], dtype=float)]
    parts += [shadows[b][reached_elements(p, b)] for b in dup_buffers(p)]
    return np.concatenate(parts)


def direction_vector(p: Program, u: Direction) -> np.ndarray:
    """u in the coordinates' order: active floats, then reached elements."""
    parts = [np.asarray([u.floats[a.name] for a in p.args
                         if isinstance(a, FloatArg) and a.activity == "active"], dtype=float)]
    parts += [u.buffers[b][reached_elements(p, b)] for b in dup_buffers(p)]
    return np.concatenate(parts)


def seed_vector(p: Program, point: Point) -> np.ndarray:
    """v in the outputs' order: seeds of active results (0 for const ones),
    then the shadow seeds of the reached elements."""
    parts = [np.asarray([s if act == "active" else 0.0
                         for s, act in zip(point.result_seeds, p.ret_activity)], dtype=float)]
    parts += [point.shadow_seeds[b][reached_elements(p, b)] for b in dup_buffers(p)]
    return np.concatenate(parts)


def dot_product_test(lhs_terms: np.ndarray, rhs_terms: np.ndarray, rtol: float, what: str,
                     atol: float = 0.0) -> None:
    """Both sides equal to rtol times the magnitudes of their terms, plus
    `atol` (`known_to`: what the finite-difference checks of the two sides
    leave open)."""
    lhs, rhs = float(np.sum(lhs_terms)), float(np.sum(rhs_terms))
    scale = float(np.sum(np.abs(lhs_terms)) + np.sum(np.abs(rhs_terms)))
    if not (abs(lhs - rhs) <= rtol * scale + atol + 1e-300):
        raise _Failure("dot-product mismatch", f"{what}: {lhs!r} vs {rhs!r} (difference "
                       f"{abs(lhs - rhs):.2e}, terms {scale:.2e}, absolute floor {atol:.1e})")


def known_to(atol: float, weights: np.ndarray, values: np.ndarray,
             scale: float | None = None) -> float:
    """How far `<weights, values>` may be off when each value is known only to
    its finite-difference check's absolute tolerance, `atol * max(1, |value|)`
    (`atol * max(1, scale)` for a gradient, whose check scales with L's terms).

    The relative part of the dot-product test measures rounding against the
    terms, which is right unless the terms are themselves rounding residue:
    the tangent of `f32(x) - x` is `f32(u) - u` (2^-24 |u|, no derivative at
    all), and the adjoint is rounded through f32 elsewhere, so both sides are
    noise of about 1e-8 whose terms are as small (seed 70057 of the forward
    volume: 7.6e-8 vs 3.1e-8, terms 1.2e-7, while u and v are of order 1).
    Cancellation does the same in f64 (`sin(x)**2 + cos(x)**2`). Finite
    differences accept such derivatives within their absolute tolerance; the
    dot-product test asks no more of them than that."""
    bound = np.maximum(1.0, np.abs(values)) if scale is None else max(1.0, scale)
    return float(atol * np.sum(np.abs(weights) * bound))


# -- the check ----------------------------------------------------------------------------


def check_forward(p: Program) -> Outcome:
    oracle = Oracle(p)
    found = choose_point(p, oracle)
    if isinstance(found, str):
        return Outcome("discard", found)
    point, ref = found
    request = draw_request(p)
    try:
        jvp = compile_request(p, jvp_source(p, request), JVP_NAME)
        _, gradient = compile_case(p)
    except Exception as err:  # noqa: BLE001 - any compiler exception is a finding
        return Outcome("compiler error", f"{type(err).__name__}: {_first_line(err)}")
    us = [random_direction(p, lane) for lane in range(request.width)]
    tol = Tolerances.of(p)
    names = output_names(p)
    checked = skipped = 0
    try:
        lanes = call_jvp(p, jvp, point, ref, us, request)
        try:
            grad = run_gradient(p, gradient, point.floats, point.buffers, point)
        except Exception as err:  # noqa: BLE001
            raise _Failure("wrong gradient", f"gradient raised {type(err).__name__}: {_first_line(err)}")
        v = seed_vector(p, point)
        scale = functional(p, point, ref)[1]  # the gradient's check: atol * max(1, scale)
        for lane, (u, tangents) in enumerate(zip(us, lanes)):
            what = f"tangent (lane {lane} of {request.width})" if request.width > 1 else "tangent"
            try:
                fd = directional_fd(p, oracle, point, ref, u, 1.0)
                c, s = compare_with_fd(
                    tangents, fd, names, "wrong tangent", tol,
                    lambda u=u: directional_fd(p, oracle, point, ref, u, 2.0), what,
                    fd_rounding(ref, STEP))
            except _Straddles:
                c, s = 0, len(names)
            checked, skipped = checked + c, skipped + s
            du = direction_vector(p, u)
            floor = known_to(tol.atol, v, tangents) + known_to(tol.atol, du, grad, scale)
            dot_product_test(tangents * v, du * grad, tol.dot_rtol,
                             f"<jvp(u), v> vs <u, vjp(v)> ({what})", floor)
    except _Failure as f:
        return Outcome(f.kind, f.detail)
    return Outcome("ok", checked=checked, skipped=skipped)


def call_jvp(p: Program, jvp, point: Point, ref: Evaluation, us: list[Direction],
             request: Request) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    """Call the compiled jvp; check its primal results and buffers against
    the oracle and the tangent buffers outside the views (unchanged); per
    lane, the tangents in the outputs' order."""
    work = [b.copy() for b in point.buffers]
    tangents = [[u.buffers[b].copy() if b in u.buffers else np.zeros(0) for b in range(len(work))]
                for u in us]
    try:
        out = list(as_tuple(jvp(*tangent_args(p, work, point.floats, tangents, us))))
    except Exception as err:  # noqa: BLE001
        raise _Failure("wrong tangent", f"jvp raised {type(err).__name__}: {_first_line(err)}")
    n = request.width
    expected = sum(n + (act == "dup") for act in request.ret_activity)
    if len(out) != expected:
        raise _Failure("wrong tangent", f"jvp returned {len(out)} values, expected {expected}")
    primals, result_tangents, k = [], [], 0
    for r, act in zip(ref.results, request.ret_activity):
        if act == "dup":
            primals.append((out[k], r))
            k += 1
        result_tangents.append(out[k:k + n])
        k += n
    _compare_results(tuple(o for o, _ in primals), tuple(r for _, r in primals), "jvp's primal")
    no_need = {a.buffer for a in p.args if isinstance(a, MemArg) and a.activity == "dupnoneed"}
    _compare_buffers(p, work, ref.buffers, "jvp's primal", skip=no_need)
    lanes = []
    for lane, u in enumerate(us):
        for b in dup_buffers(p):
            untouched = np.setdiff1d(np.arange(len(work[b])), reached_elements(p, b))
            if np.any(tangents[lane][b][untouched] != u.buffers[b][untouched]):
                raise _Failure("wrong tangent", f"tangent (lane {lane}) of buffer {b} changed outside "
                               "the arguments' views")
        parts = [np.asarray([float(t[lane]) for t in result_tangents], dtype=float)]
        parts += [tangents[lane][b][reached_elements(p, b)] for b in dup_buffers(p)]
        lanes.append(np.concatenate(parts))
    return lanes


def run_forward_case(item: int | Program) -> Outcome:
    """One seed (or program) of the forward mode, for the runner's workers."""
    return _run(item, check_forward)


def _run(item: int | Program, check) -> Outcome:  # type: ignore[no-untyped-def]
    import warnings

    from adpasses.tools.fuzz.generate import generate
    from adpasses.tools.fuzz.runner import forget_compiled

    warnings.simplefilter("ignore")
    try:
        program = generate(item) if isinstance(item, int) else item
        return check(program)
    except Exception as err:  # noqa: BLE001
        return Outcome("fuzzer error", f"{type(err).__name__}: {err}")
    finally:
        forget_compiled()

