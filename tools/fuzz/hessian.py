"""The Hessian mode of the fuzzer (`--mode hessian`): Hessian-vector
products of each random program by forward over reverse, checked against
finite differences of the gradient (docs/fuzzing.md, "The forward and
Hessian modes").

The Hessian is that of the default mode's functional
`L = sum seed_k result_k + sum <shadow seed_b, final buffer b>` (the seeds
held fixed). The request is written in MLIR:

    func.func @fuzz_grad(<the gradient's operands>) -> (<dL/da per active float>) {
      %g = ad.autodiff @f(...) {activity = ..., ret_activity = ...}
    }
    func.func @fuzz_hvp(...) {
      ad.fwddiff @fuzz_grad(...)   // x and its shadow dup, floats dup, seeds const
    }

run through `ad-opt --forward`'s pipeline (ad-reverse, then ad-forward:
forward over the generated gradient, its tapes and workspaces). The tangent
of a primal buffer (or active float) is the direction u; the tangent of its
shadow starts at 0 (the seeds are constants) and ends as H u on the
elements the gradient defines, and each returned derivative's tangent is
(H u)_a. Per program:

1. H u for a random u, and the Hessian columns H e_i for up to
   `COLUMNS` random coordinates i, each against central differences of the
   compiled gradient (the one the default mode checks against the oracle)
   along the same direction, `(g(x + h u) - g(x - h u)) / 2h`, known only
   to the rounding of the gradient's largest values (`gradient_rounding`,
   the default and forward modes' `check.fd_rounding`); a step whose
   oracle run takes another branch somewhere (a kink) skips that
   direction;
2. symmetry: `<w, H u> == <u, H w>` for a second random direction w, to
   rounding (H is the Hessian of a scalar function).
"""

from __future__ import annotations

import numpy as np
from adpasses.tools.fuzz.check import (
    Outcome,
    fd_rounding,
    _Failure,
    _first_line,
    choose_point,
    compile_case,
    reached_elements,
    uses_f32,
)
from adpasses.tools.fuzz.forward import (
    Direction,
    Tolerances,
    _run,
    _Straddles,
    compare_with_fd,
    compile_request,
    direction_vector,
    dot_product_test,
    function_types,
    fwddiff_wrapper,
    known_to,
    moved,
    random_direction,
    run_gradient,
)
from adpasses.tools.fuzz.inputs import (
    Evaluation,
    Point,
    as_tuple,
    dup_buffers,
    evaluate,
    magnitude_ok,
    view,
)
from adpasses.tools.fuzz.program import FloatArg, IndexArg, MemArg, Program
from adpasses.tools.fuzz.to_mlir import mlir_function
from adpasses.tools.fuzz.to_python import Oracle

COLUMNS = 2
STEP = 1e-5
"""Finite differences of the gradient (itself the compiled reverse mode):
a larger step than the default mode's, the gradient being one derivative
closer to the rounding noise."""
STEP_F32 = 1e-3
"""Programs rounding through f32: the compiled gradient is a staircase
with steps of 6e-8 relative (no frozen residuals here, it is compiled
code), so the step must dwarf them."""

GRAD_NAME, HVP_NAME = "fuzz_grad", "fuzz_hvp"


def _actives(p: Program) -> list[FloatArg]:
    return [a for a in p.args if isinstance(a, FloatArg) and a.activity == "active"]


def hvp_source(p: Program, width: int = 1) -> str:
    """The program, the gradient wrapper and the forward-over-reverse request
    (`width` directions per sweep)."""
    types, result_types = function_types(p)
    grad_types, grad_acts, fwd_acts = [], [], []
    operands = []
    for k, (a, t) in enumerate(zip(p.args, types)):
        grad_types.append(t)
        operands.append(f"%a{k}")
        if isinstance(a, MemArg) and a.activity != "const":
            grad_types.append(t)
            operands.append(f"%s{k}")
            fwd_acts += ["dup", "dup"]  # the primal (tangent u) and its shadow (tangent 0 -> H u)
        elif isinstance(a, FloatArg) and a.activity == "active":
            fwd_acts.append("dup")
        else:
            fwd_acts.append("const")
        grad_acts.append("const" if isinstance(a, IndexArg) else a.activity)
    for j, (t, act) in enumerate(zip(result_types, p.ret_activity)):
        if act == "active":
            grad_types.append(t)
            operands.append(f"%seed{j}")
            fwd_acts.append("const")
    outs = ["f64"] * len(_actives(p))
    signature = ", ".join(f"{o}: {t}" for o, t in zip(operands, grad_types))
    call = (f"ad.autodiff @{p.name}({', '.join(operands)}) {{activity = [{', '.join(grad_acts)}], "
            f"ret_activity = [{', '.join(p.ret_activity)}]}} : ({', '.join(grad_types)}) -> "
            f"({', '.join(outs)})")
    if outs:
        body = (f"  %g:{len(outs)} = {call}\n"
                f"  func.return {', '.join(f'%g#{k}' for k in range(len(outs)))} : {', '.join(outs)}\n")
    else:
        body = f"  {call}\n  func.return\n"
    grad = f"func.func @{GRAD_NAME}({signature}) -> ({', '.join(outs)}) {{\n{body}}}\n"
    hvp = fwddiff_wrapper(HVP_NAME, GRAD_NAME, grad_types, fwd_acts, outs, ["dup"] * len(outs), width)
    return mlir_function(p) + "\n" + grad + "\n" + hvp


def call_hvp(p: Program, hvp, point: Point, us: list[Direction]) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    """H u for each direction u (one lane each), in the coordinates' order
    (active floats, then reached elements)."""
    work = [b.copy() for b in point.buffers]
    shadows = [point.shadow_seeds[b].copy() if b in point.shadow_seeds else np.zeros(0)
               for b in range(len(work))]
    du = [[u.buffers[b].copy() if b in u.buffers else np.zeros(0) for b in range(len(work))] for u in us]
    dshadow = [[np.zeros_like(s) for s in shadows] for _ in us]
    args: list = []
    for a in p.args:
        if isinstance(a, MemArg):
            args.append(view(a, work[a.buffer]))
            if a.activity != "const":
                args += [view(a, lane[a.buffer]) for lane in du]
                args.append(view(a, shadows[a.buffer]))
                args += [view(a, lane[a.buffer]) for lane in dshadow]
        elif isinstance(a, FloatArg):
            args.append(point.floats[a.name])
            if a.activity == "active":
                args += [u.floats[a.name] for u in us]
        else:
            args.append(a.value)
    args += [s for s, act in zip(point.result_seeds, p.ret_activity) if act == "active"]
    try:
        out = list(as_tuple(hvp(*args)))
    except Exception as err:  # noqa: BLE001
        raise _Failure("wrong hvp", f"hvp raised {type(err).__name__}: {_first_line(err)}")
    n, actives = len(us), len(_actives(p))
    if len(out) != (1 + n) * actives:
        raise _Failure("wrong hvp", f"hvp returned {len(out)} values, expected {(1 + n) * actives}")
    lanes = []
    for lane in range(n):
        parts = [np.asarray([float(out[k * (1 + n) + 1 + lane]) for k in range(actives)], dtype=float)]
        parts += [dshadow[lane][b][reached_elements(p, b)] for b in dup_buffers(p)]
        lanes.append(np.concatenate(parts))
    return lanes


def gradient_fd(p: Program, gradient, oracle: Oracle, point: Point, ref: Evaluation, u: Direction,
                step: float) -> np.ndarray:  # type: ignore[no-untyped-def]
    """(g(x + h u) - g(x - h u)) / 2h for the compiled gradient g; a step
    where the oracle takes another branch (or leaves the magnitude bound)
    straddles a kink."""

    def at(t: float) -> np.ndarray:
        floats, buffers = moved(p, point, u, t)
        try:
            ev = evaluate(oracle, p, buffers, floats)
        except (ArithmeticError, ValueError) as err:
            raise _Straddles from err
        if not magnitude_ok(ev) or ev.trace != ref.trace:
            raise _Straddles
        return run_gradient(p, gradient, floats, buffers, point)

    return (at(step) - at(-step)) / (2 * step)


def gradient_rounding(ref: Evaluation, g: np.ndarray, h: float) -> float:
    """How far rounding can move a central difference of step h of the
    compiled gradient (`check.fd_rounding` for the gradient's run): the
    gradient recomputes the primal values (the reference run's peak and
    outputs) and accumulates adjoints (the gradient at the point stands for
    their size), each known to a few ulps of the largest of them, so
    (g(x + h u) - g(x - h u)) / 2h is known to FD_ROUNDING_ULPS * eps *
    max(peak, |g|) / h."""
    adjoints = float(np.max(np.abs(g))) if g.size else 0.0
    return max(fd_rounding(ref, h), fd_rounding(Evaluation((adjoints,), [], []), h))


def coordinate_names(p: Program) -> list[str]:
    names = [f"d/d%{a.name}" for a in _actives(p)]
    for b in dup_buffers(p):
        names += [f"d/d buffer {b} element {e}" for e in reached_elements(p, b)]
    return names


def unit_direction(p: Program, k: int) -> Direction:
    """e_k in the coordinates' order."""
    u = random_direction(p, 0)
    floats = {name: 0.0 for name in u.floats}
    buffers = {b: np.zeros_like(v) for b, v in u.buffers.items()}
    actives = _actives(p)
    if k < len(actives):
        floats[actives[k].name] = 1.0
    else:
        k -= len(actives)
        for b in dup_buffers(p):
            reached = reached_elements(p, b)
            if k < len(reached):
                buffers[b][reached[k]] = 1.0
                break
            k -= len(reached)
    return Direction(floats, buffers)


def check_hessian(p: Program) -> Outcome:
    oracle = Oracle(p)
    found = choose_point(p, oracle)
    if isinstance(found, str):
        return Outcome("discard", found)
    point, ref = found
    names = coordinate_names(p)
    if not names:
        return Outcome("ok")  # nothing active: no Hessian
    rng = np.random.default_rng([p.seed, 104729])
    columns = sorted(rng.choice(len(names), size=min(COLUMNS, len(names)), replace=False).tolist())
    directions = [("H u", random_direction(p, 0))]
    directions += [(f"Hessian column {names[k]}", unit_direction(p, k)) for k in columns]
    directions.append(("H w", random_direction(p, 1)))
    vector = bool(rng.random() < 0.5)  # all directions in one sweep (width N), or one sweep each
    try:
        hvp = compile_request(p, hvp_source(p, len(directions) if vector else 1), HVP_NAME)
        _, gradient = compile_case(p)
    except Exception as err:  # noqa: BLE001 - any compiler exception is a finding
        return Outcome("compiler error", f"{type(err).__name__}: {_first_line(err)}")
    tol = Tolerances.of(p)
    step = STEP_F32 if uses_f32(p) else STEP
    checked = skipped = 0
    try:
        g0 = run_gradient(p, gradient, point.floats, point.buffers, point)  # raises as gradient_fd's runs
        rounding = gradient_rounding(ref, g0, step)  # 2h differences: h bounds it
        us = [u for _, u in directions]
        products = call_hvp(p, hvp, point, us) if vector else [call_hvp(p, hvp, point, [u])[0] for u in us]
        for (what, u), hu in zip(directions[:-1], products):
            try:
                fd = gradient_fd(p, gradient, oracle, point, ref, u, step)
            except _Straddles:
                skipped += len(hu)
                continue
            c, s = compare_with_fd(hu, fd, names, "wrong hvp", tol,
                                   lambda u=u: gradient_fd(p, gradient, oracle, point, ref, u, 2 * step),
                                   what, rounding)
            checked, skipped = checked + c, skipped + s
        (_, u), (_, w) = directions[0], directions[-1]
        hu, hw = products[0], products[-1]
        try:
            dw, du = direction_vector(p, w), direction_vector(p, u)
            dot_product_test(dw * hu, du * hw, tol.dot_rtol, "<w, H u> vs <u, H w>",
                             known_to(tol.atol, dw, hu) + known_to(tol.atol, du, hw))
        except _Failure as f:
            raise _Failure("asymmetric hessian", f.detail)
    except _Failure as f:
        return Outcome(f.kind, f.detail)
    return Outcome("ok", checked=checked, skipped=skipped)


def run_hessian_case(item: int | Program) -> Outcome:
    """One seed (or program) of the Hessian mode, for the runner's workers."""
    return _run(item, check_hessian)
