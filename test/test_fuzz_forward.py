"""The forward and Hessian modes of the fuzzer (tools/fuzz/forward.py,
tools/fuzz/hessian.py, docs/fuzzing.md): a fast set of seeds of each, and
planted bugs of the forward rules that each check must find.
"""

from __future__ import annotations

from collections import Counter

import pytest
from xdsl.dialects import math

from adpasses.tools.fuzz import forward as fuzz_forward
from adpasses.tools.fuzz.__main__ import main as fuzz_main
from adpasses.tools.fuzz.check import FORWARD_KINDS, HESSIAN_KINDS, Outcome
from adpasses.tools.fuzz.forward import check_forward, jvp_source, run_forward_case
from adpasses.tools.fuzz.generate import generate
from adpasses.tools.fuzz.hessian import check_hessian, hvp_source, run_hessian_case
from adpasses.tools.fuzz.program import Op, program_size, stmt_exprs, sub_exprs, walk_stmts
from adpasses.tools.fuzz.runner import forget_compiled, run_seeds

FAST_SEEDS = range(20)


def _run_fast_set(case) -> None:  # type: ignore[no-untyped-def]
    results = run_seeds(FAST_SEEDS, jobs=2, timeout=120, case=case)
    assert len(results) == len(FAST_SEEDS)
    failures = [f"seed {r.seed}: {r.outcome.kind}: {r.outcome.detail}" for r in results
                if r.outcome.kind not in ("ok", "discard")]
    assert not failures, "\n".join(failures)
    kinds = Counter(r.outcome.kind for r in results)
    assert kinds["discard"] <= 2, kinds
    # Most outputs were compared with finite differences, not skipped at kinks.
    checked = sum(r.outcome.checked for r in results)
    skipped = sum(r.outcome.skipped for r in results)
    assert checked > 100 and checked > 10 * skipped, (checked, skipped)


def test_forward_mode_fast_set():
    """20 programs: each jvp matches finite differences of the oracle and
    passes the dot-product test with the gradient (2 workers)."""
    _run_fast_set(run_forward_case)


def test_hessian_mode_fast_set():
    """20 programs: Hessian-vector products and Hessian columns by forward
    over reverse match finite differences of the gradient; H is symmetric."""
    _run_fast_set(run_hessian_case)


def test_requests_are_written_in_mlir():
    p = generate(3)
    jvp = jvp_source(p)
    assert "func.func @fuzz_jvp(" in jvp and "ad.fwddiff @f(" in jvp
    hvp = hvp_source(p)
    assert "ad.autodiff @f(" in hvp and "ad.fwddiff @fuzz_grad(" in hvp


# -- planted bugs: forward rules only, so reverse mode (the other side of the
# dot-product test, and the gradient differenced in the Hessian mode) is right.


def _wrong_forward_rule(monkeypatch, op, rule_of) -> None:  # type: ignore[no-untyped-def]
    """The tangent of `op` computed with the rule of `rule_of`."""
    import adpasses.forward.rules as forward_rules

    table = dict(forward_rules.rule_table())
    table[op] = table[rule_of]
    monkeypatch.setattr(forward_rules, "_TABLE", table)


def _wrong_forward_sin_rule(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """d sin = -sin x dx (cos's rule) instead of cos x dx."""
    _wrong_forward_rule(monkeypatch, math.SinOp, math.CosOp)


def _uses_sin(p) -> bool:  # type: ignore[no-untyped-def]
    def has(e) -> bool:  # type: ignore[no-untyped-def]
        return (isinstance(e, Op) and e.op == "sin") or any(has(x) for x in sub_exprs(e))

    return any(has(e) for s in walk_stmts(p.body) for e in stmt_exprs(s)) or any(
        has(e) for e in p.results)


def _outcomes_with_sin(check, count: int) -> list[Outcome]:  # type: ignore[no-untyped-def]
    out = []
    for seed in range(200):
        p = generate(seed)
        if program_size(p) <= 60 and _uses_sin(p):
            out.append(check(p))
            forget_compiled()
            if len(out) == count:
                break
    return out


def test_planted_forward_bug_is_a_wrong_tangent(monkeypatch):
    _wrong_forward_sin_rule(monkeypatch)
    kinds = Counter(o.kind for o in _outcomes_with_sin(check_forward, 6))
    assert kinds["wrong tangent"] >= 2, kinds


def test_planted_forward_bug_fails_the_dot_product_test_alone(monkeypatch):
    """With finite differences switched off, the dot-product test against
    the (right) gradient still finds the wrong tangent rule."""
    _wrong_forward_sin_rule(monkeypatch)

    def no_fd(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise fuzz_forward._Straddles

    monkeypatch.setattr(fuzz_forward, "directional_fd", no_fd)
    kinds = Counter(o.kind for o in _outcomes_with_sin(check_forward, 6))
    assert kinds["dot-product mismatch"] >= 2, kinds


def test_planted_forward_bug_is_a_wrong_hvp(monkeypatch):
    """The gradient of a program using sin uses cos (its reverse rule); the
    Hessian differentiates that cos forward: d cos = cos x dx (sin's rule)
    instead of -sin x dx."""
    _wrong_forward_rule(monkeypatch, math.CosOp, math.SinOp)
    # Only a sin of an active value has its cos differentiated forward: 3 of
    # the first 10 small programs with sin (the scipy.special ops changed
    # what the generator draws; 1 of the first 6 now).
    kinds = Counter(o.kind for o in _outcomes_with_sin(check_hessian, 10))
    assert kinds["wrong hvp"] >= 2, kinds


def test_failure_kinds_of_the_modes():
    assert FORWARD_KINDS == ("wrong tangent", "dot-product mismatch")
    assert HESSIAN_KINDS == ("wrong hvp", "asymmetric hessian")
    assert all(Outcome(k).failed for k in FORWARD_KINDS + HESSIAN_KINDS)


def test_command_line(capsys):
    assert fuzz_main(["--mode", "forward", "--case", "2"]) == 0
    assert "seed 2: ok" in capsys.readouterr().out
    assert fuzz_main(["--mode", "hessian", "--case", "2"]) == 0
    assert "seed 2: ok" in capsys.readouterr().out
    assert fuzz_main(["--mode", "hessian", "--show", "2"]) == 0
    assert "ad.fwddiff @fuzz_grad(" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        fuzz_main(["--mode", "forward", "--aliased"])


# -- the dot-product test's absolute floor (seed 70057 of the forward volume)


def _one_result_program(result, seed: int = 1):  # type: ignore[no-untyped-def]
    """f(s0 active) -> result, a program of the fuzzer's tree written by hand."""
    from adpasses.tools.fuzz.program import FloatArg, Program

    return Program(seed=seed, args=(FloatArg("s0", "active"),), buffers=(), body=(),
                   results=(result,), ret_activity=("active",))


def _rounding_residue_programs():  # type: ignore[no-untyped-def]
    """Derivatives that are rounding residue, of order 1e-8 (f32) and 1e-16
    (f64) while u and v are of order 1: `f32(s) - s` (its tangent is
    `f32(u) - u`, its adjoint `f32(v) - v`: noise on both sides, no
    derivative), and in f64 the cancellations `tanh(s) cosh(s) - sinh(s)`
    and `exp(s) - exp(s/2)**2`."""
    from adpasses.tools.fuzz.program import F32, Const, Op, Var

    s = Var("s0")
    half = Op("exp", (Op("mulf", (s, Const(0.5))),))
    residues = [Op("subf", (F32(s), s)),
                Op("subf", (Op("mulf", (Op("tanh", (s,)), Op("cosh", (s,)))), Op("sinh", (s,)))),
                Op("subf", (Op("exp", (s,)), Op("mulf", (half, half))))]
    return [_one_result_program(r, seed=seed) for r in residues for seed in (1, 2, 3)]


def test_dot_product_test_of_rounding_residue_is_not_a_mismatch(monkeypatch):
    """Seed 70057 of the forward volume: an f32 program whose derivatives are
    all rounding residue (1e-8) failed the dot-product test (7.6e-8 vs
    3.1e-8, terms 1.2e-7) though finite differences accepted every one. The
    test's absolute floor is what the finite-difference checks of its two
    sides leave open (`known_to`); without it, most of these programs fail
    (the f64 ones by 1e-17..1e-16, terms as small)."""
    programs = _rounding_residue_programs()
    assert [check_forward(p).kind for p in programs] == ["ok"] * len(programs)
    forget_compiled()
    monkeypatch.setattr(fuzz_forward, "known_to", lambda *args, **kwargs: 0.0)
    kinds = Counter(check_forward(p).kind for p in programs)
    forget_compiled()
    assert kinds["dot-product mismatch"] >= 5, kinds


def test_symmetry_test_of_rounding_residue_is_not_an_asymmetric_hessian(monkeypatch):
    """The Hessian's symmetry test is a dot-product test too: Hessians that
    are rounding residue (the f64 cancellations above: 1e-17 on both sides)
    got the same floor."""
    import adpasses.tools.fuzz.hessian as fuzz_hessian

    programs = _rounding_residue_programs()
    assert [check_hessian(p).kind for p in programs] == ["ok"] * len(programs)
    forget_compiled()
    monkeypatch.setattr(fuzz_hessian, "known_to", lambda *args, **kwargs: 0.0)
    kinds = Counter(check_hessian(p).kind for p in programs)
    forget_compiled()
    assert kinds["asymmetric hessian"] >= 3, kinds


def test_dot_product_floor_is_the_finite_difference_tolerance():
    import numpy as np

    weights, values = np.array([2.0, -0.5]), np.array([3.0, 1e-9])
    assert fuzz_forward.known_to(1e-6, weights, values) == pytest.approx(1e-6 * (2 * 3 + 0.5 * 1))
    assert fuzz_forward.known_to(1e-8, weights, values, scale=4.0) == pytest.approx(1e-8 * 2.5 * 4)
    # A real error of a rule (order of the derivative) stays far above it.
    with pytest.raises(fuzz_forward._Failure) as failure:
        fuzz_forward.dot_product_test(np.array([1.0]), np.array([0.9]), 1e-9, "x",
                                      fuzz_forward.known_to(1e-6, weights, values))
    assert failure.value.kind == "dot-product mismatch"


def test_finite_differences_are_known_only_to_the_rounding_of_the_largest_value(monkeypatch):
    """Issue-15 seeds 73425 and 73653 (forward volume): the compiled tangents
    were right (finite differences with steps 100..10^4 times larger agree
    with them: -0.0520568 and -3.80e-6) but FD(h) was quantized by the
    rounding of a value of 1.4e5 (an output) and 3.2e5 (`s - sqrt(s*s +
    0.25)`, then small outputs), and FD(2h) landed on the same multiple of
    that ulp, so |FD(h) - FD(2h)| = 0 estimated no error. The checks now
    allow `fd_rounding` (a few ulps of the run's largest value over h);
    without it both seeds fail in forward mode and 73653 in reverse mode."""
    import adpasses.tools.fuzz.check as fuzz_check

    seeds = [73425, 73653]
    assert [check_forward(generate(s)).kind for s in seeds] == ["ok", "ok"]
    assert fuzz_check.check_program(generate(73653)).kind == "ok"
    forget_compiled()
    monkeypatch.setattr(fuzz_forward, "fd_rounding", lambda *args: 0.0)
    monkeypatch.setattr(fuzz_check, "fd_rounding", lambda *args: 0.0)
    assert [check_forward(generate(s)).kind for s in seeds] == ["wrong tangent"] * 2
    assert fuzz_check.check_program(generate(73653)).kind == "wrong gradient"
    forget_compiled()


def test_rounding_allowance_bounds_a_cancellation_and_no_more():
    """The allowance against its cause: central differences of
    g(s) = s - sqrt(s*s + 0.25) (exact derivative 0.25 / (r (s + r)),
    r = sqrt(s*s + 0.25), about 1e-12 at s = 3e5) are off by up to the
    allowance and by more than a tenth of it somewhere (FD is mostly 0
    there), while a wrong rule (the derivative of s + sqrt(...): 2) is far
    outside it."""
    import math

    import numpy as np

    from adpasses.tools.fuzz.check import fd_rounding
    from adpasses.tools.fuzz.inputs import Evaluation

    h = fuzz_forward.STEP
    errors, allowances = [], []
    for s in np.random.default_rng(15).uniform(1e4, 9e5, 200):
        s = float(s)
        r = math.sqrt(s * s + 0.25)
        exact = 0.25 / (r * (s + r))
        fd = ((s + h) - math.sqrt((s + h) ** 2 + 0.25) - ((s - h) - math.sqrt((s - h) ** 2 + 0.25))) / (2 * h)
        errors.append(abs(fd - exact))
        allowances.append(fd_rounding(Evaluation((s - r,), [], [], peak=s), h))
    ratios = np.array(errors) / np.array(allowances)
    assert ratios.max() <= 1.0 and ratios.max() > 0.1, ratios.max()
    assert max(allowances) < 1e-2  # a derivative of order 1 off by 1 is still found


def _hessian_with_fd_moved(monkeypatch, seed: int, allowances: float):  # type: ignore[no-untyped-def]
    """check_hessian of `seed` with every finite difference of the gradient
    (FD(h) and FD(2h) alike, as a quantised gradient moves both to the same
    step) moved by `allowances` times the rounding allowance of the
    program's gradient at the point (`gradient_rounding`, step h)."""
    import adpasses.tools.fuzz.hessian as fuzz_hessian

    seen: list[float] = []
    fd = fuzz_hessian.gradient_fd

    def moved_fd(p, gradient, oracle, point, ref, u, step):  # type: ignore[no-untyped-def]
        if not seen:
            g = fuzz_hessian.run_gradient(p, gradient, point.floats, point.buffers, point)
            seen.append(fuzz_hessian.gradient_rounding(ref, g, fuzz_hessian.STEP))
        return fd(p, gradient, oracle, point, ref, u, step) + allowances * seen[0]

    monkeypatch.setattr(fuzz_hessian, "gradient_fd", moved_fd)
    outcome = check_hessian(generate(seed))
    return outcome, seen


def test_hessian_mode_allows_the_rounding_of_the_gradients_finite_differences(monkeypatch):
    """The Hessian mode's finite differences of the compiled gradient get
    the allowance the forward and reverse checks got (`fd_rounding`): the
    gradient is known to a few ulps of the largest value its run computes,
    so a gradient quantised by that rounding (FD(h) and FD(2h) on the same
    step, |FD(h) - FD(2h)| = 0, as seeds 73425/73653 in forward mode) is not
    a wrong Hessian, while a difference three allowances away still is.
    Seed 73653 computes values of 3.2e5: the allowance is 3e-5."""
    outcome, seen = _hessian_with_fd_moved(monkeypatch, 73653, 0.9)
    assert outcome.kind == "ok" and outcome.checked > 20, outcome
    assert seen and 1e-5 < seen[0] < 1e-4, seen
    forget_compiled()
    outcome, _ = _hessian_with_fd_moved(monkeypatch, 73653, 3.0)
    assert outcome.kind == "wrong hvp", outcome
    forget_compiled()


def test_gradient_rounding_bounds_a_cancellation_in_the_gradient_and_no_more():
    """`hessian.gradient_rounding` against its cause: a gradient computed as
    g(s) = s - sqrt(s*s + 0.25) (its run computes s and r = sqrt(s*s +
    0.25), the largest values) has the Hessian 0.25 / (r (s + r)), about
    1e-12 at s = 3e5; central differences of g with the Hessian mode's
    step are off by up to the allowance and by more than a tenth of it
    somewhere, while a wrong Hessian rule (the derivative of s + r: 2) is far
    outside it. The allowance follows the gradient's own size where it
    exceeds the primal values."""
    import math

    import numpy as np

    from adpasses.tools.fuzz.hessian import STEP, gradient_rounding
    from adpasses.tools.fuzz.inputs import Evaluation

    h = STEP
    errors, allowances = [], []
    for s in np.random.default_rng(16).uniform(1e4, 9e5, 200):
        s = float(s)
        r = math.sqrt(s * s + 0.25)
        exact = 0.25 / (r * (s + r))
        fd = ((s + h) - math.sqrt((s + h) ** 2 + 0.25) - ((s - h) - math.sqrt((s - h) ** 2 + 0.25))) / (2 * h)
        errors.append(abs(fd - exact))
        allowances.append(gradient_rounding(Evaluation((0.5,), [], [], peak=r), np.array([s - r]), h))
    ratios = np.array(errors) / np.array(allowances)
    assert ratios.max() <= 1.0 and ratios.max() > 0.1, ratios.max()
    assert max(allowances) < 1e-3  # a Hessian of order 1 off by 1 is still found
    small = Evaluation((1.0,), [], [], peak=1.0)
    assert gradient_rounding(small, np.array([3e5, -1.0]), h) == pytest.approx(
        gradient_rounding(Evaluation((3e5,), [], [], peak=3e5), np.array([1.0]), h))
    assert gradient_rounding(small, np.array([3e5, -1.0]), h) > 1e3 * gradient_rounding(small, np.array([1.0]), h)
