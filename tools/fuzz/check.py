"""Check one program: our primal against the Python oracle, our gradient
against central finite differences of the oracle.

Steps (docs/fuzzing.md, "The oracle" and "Tolerances"):

1. pick an input point where the oracle runs and stays finite and below
   `MAX_MAGNITUDE` (up to `ATTEMPTS` random points; otherwise the case is
   *discarded*, not failed);
2. print the program as MLIR, `differentiate` and `compile_module` it
   (any exception: *compiler error*);
3. run the compiled primal: results and final buffer contents must match
   the oracle to `PRIMAL_RTOL` (else, or on an exception: *wrong primal*);
4. run the gradient function: its primal results (`with_primal`) and final
   primal buffers must match too (*wrong primal*); every derivative must
   match central differences of L (inputs.py) within the tolerance below
   (else, or on an exception: *wrong gradient*).

A crash (signal) or a hang of the process is detected by the runner.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np

from adpasses.tools.fuzz.inputs import (
    Evaluation,
    Point,
    as_tuple,
    call_args,
    covered,
    dup_buffers,
    evaluate,
    functional,
    magnitude_ok,
    random_point,
)
from adpasses.tools.fuzz.program import F32, FloatArg, MemArg, Program, stmt_exprs, sub_exprs, walk_stmts
from adpasses.tools.fuzz.to_mlir import mlir_function
from adpasses.tools.fuzz.to_python import Oracle

KINDS = ("wrong primal", "wrong gradient", "compiler error", "crash")
ALIASED_KINDS = ("missed error", "needless error", "wrong error", "changed argument")
"""Failure kinds of the aliased-arguments mode only (tools/fuzz/aliased.py)."""
THREAD_KINDS = ("thread mismatch", "thread error")
"""Failure kinds of the threads mode only (tools/fuzz/threads.py)."""
FORWARD_KINDS = ("wrong tangent", "dot-product mismatch")
"""Failure kinds of the forward mode only (tools/fuzz/forward.py)."""
HESSIAN_KINDS = ("wrong hvp", "asymmetric hessian")
"""Failure kinds of the Hessian mode only (tools/fuzz/hessian.py)."""
PARALLEL_KINDS = ("parallel mismatch", "parallel error", "parallel nondeterminism")
"""Failure kinds of the parallel mode (tools/fuzz/parallel.py) and of the
array mode's `jit(parallel=True)` check (tools/fuzz/arrays.py)."""
ARRAY_KINDS = ("vmap mismatch",)
"""Failure kinds of the array mode only (tools/fuzz/arrays.py)."""
"""Failure kinds; an outcome is one of these, `ok` or `discard`."""

ATTEMPTS = 5
PRIMAL_RTOL = 1e-9
FD_RTOL = 1e-6
FD_ATOL = 1e-8
"""Times max(1, sum of |terms of L|): the rounding error of L divided by
the step is about 1e-10 of that."""
FD_NOISE_FACTOR = 10.0
F32_RTOL = 1e-3
F32_ATOL = 1e-6
"""Programs rounding through f32 (`F32` nodes) make L a staircase with steps
of 6e-8 relative, whose finite differences are noise (`x - f32(x)` has
none worth the name). Finite differences therefore replay the reference
run's rounding residuals (`Oracle.frozen`: the k-th conversion adds the
k-th residual), a smooth function equal to L at the point, with the
derivative the reverse rule of extf(truncf) computes. The gradient itself
is rounded through f32 too (the adjoint of truncf is truncated), so these
programs get a relative tolerance of 1e-3 and an absolute one of 1e-6
(times max(1, S))."""
FD_ROUNDING_ULPS = 4.0
"""Finite differences cannot see a change smaller than the rounding of the
largest value the program computes on the way: F(x + h u) and F(x - h u)
are each off by a few ulps of that value (times what the code after it
multiplies it by), so FD(h) is only known to about
`FD_ROUNDING_ULPS * eps * peak / h` (`fd_rounding`). |FD(h) - FD(2h)| does
not estimate this error: F is then a staircase of steps of an ulp of the
peak, and both differences can land on the same multiple of it (equal to
the last bit, or both 0). Issue-15 seeds 73425 (an output of -1.4e5 with a
tangent of -0.052: FD off by 4.6e-6, one step of 1.5e-5) and 73653
(`s - sqrt(s*s + 0.25)` at s = 3.2e5: tangent -3.8e-6, FD exactly 0)."""
NOT_SMOOTH = 1e-3
"""FD(h) and FD(2h) further apart than this (relative): L is not smooth
enough there for finite differences; that coordinate is not checked."""


@dataclass(frozen=True)
class Outcome:
    kind: str  # ok | discard | one of KINDS
    detail: str = ""
    checked: int = 0  # derivative coordinates compared with finite differences
    skipped: int = 0  # coordinates where finite differences were not smooth

    @property
    def failed(self) -> bool:
        return self.kind in (*KINDS, *ALIASED_KINDS, *THREAD_KINDS, *FORWARD_KINDS, *HESSIAN_KINDS,
                             *PARALLEL_KINDS, *ARRAY_KINDS)


class _Failure(Exception):
    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


def check_program(p: Program) -> Outcome:
    oracle = Oracle(p)
    found = choose_point(p, oracle)
    if isinstance(found, str):
        return Outcome("discard", found)
    point, reference = found
    try:
        primal, gradient = compile_case(p)
    except Exception as err:  # noqa: BLE001 - any compiler exception is a finding
        return Outcome("compiler error", f"{type(err).__name__}: {_first_line(err)}")
    try:
        check_primal(p, primal, point, reference)
        checked, skipped = check_gradient(p, gradient, oracle, point, reference)
    except _Failure as f:
        return Outcome(f.kind, f.detail)
    return Outcome("ok", checked=checked, skipped=skipped)


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else ""


def choose_point(p: Program, oracle: Oracle) -> tuple[Point, Evaluation] | str:
    reason = ""
    for attempt in range(ATTEMPTS):
        point = random_point(p, attempt)
        try:
            ev = evaluate(oracle, p, point.buffers, point.floats)
        except (ArithmeticError, ValueError) as err:
            reason = f"oracle raised {type(err).__name__}: {err}"
            continue
        if not magnitude_ok(ev):
            reason = "values not finite or too large"
            continue
        moved = _ill_conditioned(oracle, p, point, ev)
        if moved is None:
            return point, ev
        reason = moved
    return reason


CONDITION_ULPS = 4
"""Inputs moved by this many units in the last place, and separately every
library function's result moved by as many, must move no result and no
buffer element by more than PRIMAL_RTOL: otherwise rounding alone (an fma
contraction, libmvec in a vectorised loop, a C library's gamma against
CPython's, another order of additions) can move it further than the
tolerance, and a mismatch would say nothing about the compiler. Seed 78 of
the fast set: 1e-15 relative on the inputs moves a result by 2e-6, through
a factor that grows every iteration and a sin of it. Seed 70052 of the
forward volume: the inputs do not matter (a contracting recurrence forgets
them), but an ulp of gamma(12.43) = 1.1e8 moves sin of it by 1.5e-8, and a
stored lgamma of that by 2e-7 relative."""


def _ill_conditioned(oracle: Oracle, p: Program, point: Point, ev: Evaluation) -> str | None:
    """Why `point` cannot be checked at PRIMAL_RTOL, or None."""
    def nudge(b: np.ndarray) -> np.ndarray:
        if b.dtype.kind != "f":
            return b.copy()
        return (b * (1 + CONDITION_ULPS * np.finfo(b.dtype).eps)).astype(b.dtype)

    floats = {k: v * (1 + CONDITION_ULPS * np.finfo(np.float64).eps) if isinstance(v, float) else v
              for k, v in point.floats.items()}
    try:
        moved = evaluate(oracle, p, [nudge(b) for b in point.buffers], floats)
    except (ArithmeticError, ValueError) as err:
        return f"ill-conditioned: the oracle raised {type(err).__name__} near the point"
    found = _moved_output(ev, moved)
    if found is not None:
        return f"ill-conditioned: {CONDITION_ULPS} ulps on the inputs move {found}"
    oracle.library_ulps = CONDITION_ULPS
    try:
        moved = evaluate(oracle, p, point.buffers, point.floats)
    except (ArithmeticError, ValueError) as err:
        return f"ill-conditioned: the oracle raised {type(err).__name__} with library results moved"
    finally:
        oracle.library_ulps = 0
    found = _moved_output(ev, moved)
    if found is not None:
        return f"ill-conditioned: {CONDITION_ULPS} ulps on library results move {found}"
    return None


def _moved_output(ev: Evaluation, moved: Evaluation) -> str | None:
    """The first result or buffer element of `moved` not within PRIMAL_RTOL
    of `ev`'s, described; None if all are."""
    for k, (a, b) in enumerate(zip(ev.results, moved.results)):
        if not _close(b, a):
            return f"result {k} from {a!r} to {b!r}"
    for n, (a, b) in enumerate(zip(ev.buffers, moved.buffers)):
        if a.dtype.kind != "f":
            continue
        bad = np.flatnonzero(~(np.abs(b - a) <= PRIMAL_RTOL * np.maximum(1.0, np.abs(a))))
        if bad.size:
            e = int(bad[0])
            return f"buffer {n} element {e} from {float(a[e])!r} to {float(b[e])!r}"
    return None


def compile_case(p: Program):  # type: ignore[no-untyped-def]
    """The compiled primal and gradient functions of `p`."""
    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import ReverseOptions, differentiate

    o = p.options
    module = parse_module(mlir_function(p), f"fuzz_{p.seed}.mlir")
    grad = differentiate(
        module, p.name, p.activity, list(p.ret_activity), with_primal=o.with_primal,
        options=ReverseOptions(cache_policy=o.policy, activity=o.activity, simplify=o.simplify),
    )
    compiled = compile_module(module, boundscheck=o.boundscheck, opt_level=o.opt_level)
    return compiled[p.name], compiled[grad.name]


def _close(ours: float, ref: float, rtol: float = PRIMAL_RTOL) -> bool:
    return abs(ours - ref) <= rtol * max(1.0, abs(ref))


def _compare_results(ours: tuple, ref: tuple[float, ...], what: str) -> None:
    if len(ours) != len(ref):
        raise _Failure("wrong primal", f"{what}: {len(ours)} results, expected {len(ref)}")
    for k, (a, b) in enumerate(zip(ours, ref)):
        if not _close(float(a), b):
            raise _Failure("wrong primal", f"{what}: result {k} = {float(a)!r}, expected {b!r}")


def _compare_buffers(p: Program, ours: list[np.ndarray], ref: list[np.ndarray], what: str,
                     skip: set[int] = frozenset()) -> None:  # type: ignore[assignment]
    for b, (a, r) in enumerate(zip(ours, ref)):
        if b in skip:
            continue
        bad = np.flatnonzero(np.abs(a - r) > PRIMAL_RTOL * np.maximum(1.0, np.abs(r)))
        if bad.size:
            e = int(bad[0])
            raise _Failure("wrong primal", f"{what}: buffer {b} ({_arg_names(p, b)}) element {e} = "
                           f"{a[e]!r}, expected {r[e]!r}")


def _arg_names(p: Program, b: int) -> str:
    return ", ".join(f"%{a.name}" for a in p.args if isinstance(a, MemArg) and a.buffer == b)


def check_primal(p: Program, primal, point: Point, ref: Evaluation) -> None:  # type: ignore[no-untyped-def]
    work = [b.copy() for b in point.buffers]
    try:
        out = as_tuple(primal(*call_args(p, work, point.floats)))
    except Exception as err:  # noqa: BLE001
        raise _Failure("wrong primal", f"primal raised {type(err).__name__}: {_first_line(err)}")
    _compare_results(out, ref.results, "primal")
    _compare_buffers(p, work, ref.buffers, "primal")


def check_gradient(p: Program, gradient, oracle: Oracle, point: Point, ref: Evaluation) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    work = [b.copy() for b in point.buffers]
    shadows = [point.shadow_seeds[b].copy() if b in point.shadow_seeds else np.zeros(0)
               for b in range(len(work))]
    args = call_args(p, work, point.floats, shadows)
    args += [s for s, act in zip(point.result_seeds, p.ret_activity) if act == "active"]
    try:
        out = list(as_tuple(gradient(*args)))
    except Exception as err:  # noqa: BLE001
        raise _Failure("wrong gradient", f"gradient raised {type(err).__name__}: {_first_line(err)}")
    if p.options.with_primal:
        _compare_results(tuple(out[: len(p.results)]), ref.results, "gradient's primal")
        out = out[len(p.results):]
    no_need = {a.buffer for a in p.args if isinstance(a, MemArg) and a.activity == "dupnoneed"}
    _compare_buffers(p, work, ref.buffers, "gradient's primal", skip=no_need)

    actives = [a.name for a in p.args if isinstance(a, FloatArg) and a.activity == "active"]
    if len(out) != len(actives):
        raise _Failure("wrong gradient", f"{len(out)} derivatives returned, expected {len(actives)}")
    for b in dup_buffers(p):
        untouched = np.setdiff1d(np.arange(len(work[b])), reached_elements(p, b))
        if np.any(shadows[b][untouched] != point.shadow_seeds[b][untouched]):
            raise _Failure("wrong gradient", f"shadow of buffer {b} ({_arg_names(p, b)}) changed "
                           "outside the arguments' views")
    fd = FiniteDifferences(p, oracle, point, ref)
    derivatives = dict(zip(actives, out))
    for c in coordinates(p):
        fd.compare(float(derivatives[c[1]]) if c[0] == "float" else float(shadows[c[1]][c[2]]), c)
    return fd.checked, fd.skipped


Coordinate = tuple
"""("float", name) for an active float argument, ("element", b, e) for
element e of the buffer b of a dup argument."""


def coordinates(p: Program) -> list[Coordinate]:
    out: list[Coordinate] = [("float", a.name) for a in p.args
                             if isinstance(a, FloatArg) and a.activity == "active"]
    for b in dup_buffers(p):
        out += [("element", b, e) for e in reached_elements(p, b)]
    return out


def reached_elements(p: Program, b: int) -> list[int]:
    """Elements of buffer b that some dup argument's view reaches."""
    return sorted({e for a in p.args if isinstance(a, MemArg) and a.buffer == b
                   and a.activity != "const" for e in covered(a)})


def describe(p: Program, c: Coordinate) -> str:
    if c[0] == "float":
        return f"d/d%{c[1]}"
    return f"shadow of buffer {c[1]} ({_arg_names(p, c[1])}) element {c[2]}"


class FiniteDifferences:
    """Central differences of L at `point`, one coordinate at a time.

    A coordinate is skipped (not compared) when a step changes the oracle's
    trace (a branch, a max, a floor... went the other way: the difference
    straddles a kink) or when FD(h) and FD(2h) disagree (not smooth)."""

    def __init__(self, p: Program, oracle: Oracle, point: Point, reference: Evaluation):
        self.p, self.oracle, self.point = p, oracle, point
        self.trace = reference.trace
        self.roundings = reference.roundings
        rounds = uses_f32(p)
        self.step = 1e-6
        self.rtol, atol = (F32_RTOL, F32_ATOL) if rounds else (FD_RTOL, FD_ATOL)
        self.atol = atol * max(1.0, functional(p, point, reference)[1])
        self.rounding = fd_rounding(reference, self.step)  # h >= step: an upper bound
        self.checked = self.skipped = 0

    def value(self, floats: dict[str, float], buffers: list[np.ndarray]) -> float:
        self.oracle.frozen = self.roundings
        try:
            ev = evaluate(self.oracle, self.p, buffers, floats)
        finally:
            self.oracle.frozen = None
        if (not magnitude_ok(ev) or ev.trace != self.trace
                or len(ev.roundings) != len(self.roundings)):
            raise _Straddles
        return functional(self.p, self.point, ev)[0]

    def difference(self, c: Coordinate, scale: float) -> float:
        """(L(x + s h) - L(x - s h)) / (2 s h) along coordinate c."""
        point = self.point
        if c[0] == "float":
            x = point.floats[c[1]]

            def at(v: float) -> float:
                return self.value({**point.floats, c[1]: v}, point.buffers)
        else:
            b, e = c[1], c[2]
            x = float(point.buffers[b][e])

            def at(v: float) -> float:
                moved = [buf.copy() if k == b else buf for k, buf in enumerate(point.buffers)]
                moved[b][e] = v
                return self.value(point.floats, moved)

        h = scale * self.step * max(1.0, abs(x))
        return (at(x + h) - at(x - h)) / (2 * h)

    def estimate(self, c: Coordinate) -> tuple[float, float] | None:
        """FD(h), FD(2h); None where the finite differences are not usable."""
        try:
            fd1, fd2 = self.difference(c, 1.0), self.difference(c, 2.0)
        except (_Straddles, ArithmeticError, ValueError):
            return None
        return None if abs(fd1 - fd2) > NOT_SMOOTH * max(1.0, abs(fd1)) else (fd1, fd2)

    def tolerance(self, analytic: float, fd1: float, fd2: float | None = None) -> float:
        tol = self.rtol * max(abs(analytic), abs(fd1)) + self.atol + self.rounding
        return tol if fd2 is None else tol + FD_NOISE_FACTOR * abs(fd1 - fd2)

    def compare(self, analytic: float, c: Coordinate) -> None:
        try:
            fd1 = self.difference(c, 1.0)
        except (_Straddles, ArithmeticError, ValueError):
            self.skipped += 1
            return
        if math.isfinite(analytic) and abs(analytic - fd1) <= self.tolerance(analytic, fd1):
            self.checked += 1
            return
        found = self.estimate(c)  # FD(2h) only when needed: half the oracle runs
        if found is None:
            self.skipped += 1
            return
        self.checked += 1
        fd1, fd2 = found
        if not (abs(analytic - fd1) <= self.tolerance(analytic, fd1, fd2)):
            raise _Failure("wrong gradient", f"{describe(self.p, c)}: ours {analytic!r}, finite "
                           f"differences {fd1!r} (|FD(h)-FD(2h)| = {abs(fd1 - fd2):.1e})")


class _Straddles(Exception):
    """A finite-difference step crossed a kink (or overflowed)."""


def fd_rounding(ev: Evaluation, h: float) -> float:
    """How far the rounding of the values of the run `ev` can move a
    central difference of step h of its outputs (FD_ROUNDING_ULPS)."""
    outputs = [*(abs(r) for r in ev.results), *(float(np.max(np.abs(b))) for b in ev.buffers if b.size)]
    peak = max([ev.peak, *outputs])
    return FD_ROUNDING_ULPS * sys.float_info.epsilon * peak / h


def uses_f32(p: Program) -> bool:
    def has(e) -> bool:  # type: ignore[no-untyped-def]
        return isinstance(e, F32) or any(has(x) for x in sub_exprs(e))

    return any(has(e) for s in walk_stmts(p.body) for e in stmt_exprs(s)) or any(
        has(e) for e in p.results)
