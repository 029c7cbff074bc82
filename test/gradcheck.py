"""Check a generated gradient against central finite differences.

For a function f with activities (const/active/dup per argument, active/
const per result) and a seed per active result, the reverse-mode derivative
computes the gradient of the scalar functional

    L(inputs) = sum_k seed_k * result_k + sum_dup <s_x, final contents of x>

where s_x is the initial content of the shadow of each dup argument x
(Enzyme's semantics: shadows are output seeds on entry and accumulate input
derivatives). So with random seeds and random shadows:

    shadow_x after the call == s_x-part + dL/d(initial x)  (i.e. dL/dx0, as
                                 final contents depend on x0)
    returned derivative of an active scalar == dL/da

and both sides are checked against central differences of L evaluated with
the compiled primal (a different function than the gradient). Tests that use
this would fail on any wrong rule, wrong accumulation or wrong tape order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass
class GradCheckResult:
    analytic: list[np.ndarray | float]
    numeric: list[np.ndarray | float]
    primal: object
    max_error: float


def _copy(v):
    return v.copy() if isinstance(v, np.ndarray) else v


def functional(call, args, activity, ret_activity, seeds, shadow_seeds) -> float:
    """L(args) for the compiled primal `call`."""
    work = [_copy(a) for a in args]
    out = call(*work)
    outs = out if isinstance(out, tuple) else (() if out is None else (out,))
    total = 0.0
    for value, act, seed in zip(outs, ret_activity, seeds):
        if act == "active":
            total += seed * float(value)
    for k, (a, act) in enumerate(zip(work, activity)):
        if act in ("dup", "dupnoneed"):
            total += float(np.sum(shadow_seeds[k] * a))
    return total


def check_gradient(
    module,
    func_name: str,
    activity: Sequence[str],
    ret_activity: Sequence[str],
    args: Sequence[object],
    *,
    rng: np.random.Generator | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-8,
    policy: str = "minimal",
    use_activity: bool = True,
    boundscheck: bool = True,
) -> GradCheckResult:
    """Differentiate `@func_name` of `module` (text or ModuleOp), run it, and
    assert it matches finite differences."""
    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module
    from adpasses.transforms.reverse_pass import ReverseOptions, differentiate

    rng = rng or np.random.default_rng(0)
    if isinstance(module, str):
        module = parse_module(module, "test.mlir")
    grad = differentiate(
        module, func_name, activity, ret_activity,
        options=ReverseOptions(cache_policy=policy, activity=use_activity),
    )
    compiled = compile_module(module, boundscheck=boundscheck)
    primal, gradient = compiled[func_name], compiled[grad.name]

    seeds = [float(rng.uniform(0.5, 1.5)) for _ in ret_activity]
    shadow_seeds = {
        k: rng.standard_normal(np.shape(a)).astype(np.asarray(a).dtype)
        for k, (a, act) in enumerate(zip(args, activity))
        if act in ("dup", "dupnoneed")
    }

    # Analytic: the gradient function.
    call_args: list[object] = []
    shadows: dict[int, np.ndarray] = {}
    for k, (a, act) in enumerate(zip(args, activity)):
        call_args.append(_copy(a))
        if act in ("dup", "dupnoneed"):
            shadows[k] = shadow_seeds[k].copy()
            call_args.append(shadows[k])
    call_args += [s for s, act in zip(seeds, ret_activity) if act == "active"]
    out = gradient(*call_args)
    outs = list(out) if isinstance(out, tuple) else ([] if out is None else [out])
    active_derivs = iter(outs)

    analytic: list[np.ndarray | float] = []
    numeric: list[np.ndarray | float] = []
    L = lambda xs: functional(primal, xs, activity, ret_activity, seeds, shadow_seeds)  # noqa: E731
    worst = 0.0
    for k, (a, act) in enumerate(zip(args, activity)):
        if act == "active":
            d = float(next(active_derivs))
            h = 1e-6 * max(1.0, abs(a))
            plus = list(args); plus[k] = a + h
            minus = list(args); minus[k] = a - h
            fd = (L(plus) - L(minus)) / (2 * h)
            analytic.append(d); numeric.append(fd)
            worst = max(worst, _check(d, fd, rtol, atol, f"d/d(arg {k})"))
        elif act in ("dup", "dupnoneed"):
            arr = np.asarray(a)
            fd = np.zeros(arr.shape)
            for idx in np.ndindex(arr.shape):
                h = 1e-6 * max(1.0, abs(float(arr[idx])))
                plus = [_copy(x) for x in args]; plus[k][idx] += h
                minus = [_copy(x) for x in args]; minus[k][idx] -= h
                fd[idx] = (L(plus) - L(minus)) / (2 * h)
            analytic.append(shadows[k]); numeric.append(fd)
            worst = max(worst, _check(shadows[k], fd, rtol, atol, f"shadow of arg {k}"))
    return GradCheckResult(analytic, numeric, out, worst)


def _check(analytic, numeric, rtol: float, atol: float, what: str) -> float:
    a = np.asarray(analytic, dtype=float)
    n = np.asarray(numeric, dtype=float)
    scale = max(1.0, float(np.max(np.abs(n))) if n.size else 1.0)
    err = float(np.max(np.abs(a - n))) if a.size else 0.0
    if not np.all(np.isfinite(a)) or err > atol + rtol * scale * 10:
        raise AssertionError(
            f"{what}: gradient differs from central finite differences by {err:.3e}\n"
            f"analytic = {a}\nnumeric  = {n}"
        )
    return err
