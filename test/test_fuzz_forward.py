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
