"""Differential testing (adpasses.tools.fuzz, docs/fuzzing.md): the fast set of
seeds, and tests of the generator, the oracle, the runner and the shrinker.
"""

from __future__ import annotations

import math as pymath
import os
import signal
import time
from collections import Counter

from xdsl.dialects import math

import adpasses.reverse.rules
from adpasses.tools.fuzz.check import KINDS, Outcome, check_program
from adpasses.ops import DOMAINS
from adpasses.ops.entry import INTEGER_DOMAINS
from adpasses.tools.fuzz.generate import _Generator, generate
from adpasses.tools.fuzz.ops import OPS
from adpasses.tools.fuzz.program import (
    Alloc,
    Assign,
    Const,
    Dim,
    For,
    Idx,
    If,
    IndexArg,
    Let,
    Load,
    MemArg,
    Op,
    Program,
    Select,
    Store,
    Var,
    View,
    While,
    program_size,
    stmt_exprs,
    sub_exprs,
    validate,
    walk_stmts,
)
from adpasses.tools.fuzz.runner import forget_compiled, run_seeds
from adpasses.tools.fuzz.shrink import shrink
from adpasses.tools.fuzz.to_mlir import mlir_function
from adpasses.tools.fuzz.to_python import Oracle

FAST_SEEDS = range(200)


def test_fast_set_of_seeds():
    """Every program of the fast set compiles, and its primal and gradient
    match the oracle (2 worker processes, about a minute)."""
    results = run_seeds(FAST_SEEDS, jobs=2, timeout=120)
    assert len(results) == len(FAST_SEEDS)
    kinds = Counter(r.outcome.kind for r in results)
    failures = [f"seed {r.seed}: {r.outcome.kind}: {r.outcome.detail}" for r in results
                if r.outcome.kind not in ("ok", "discard")]
    assert not failures, "\n".join(failures)
    # Discarded programs (no usable input point) test nothing: keep them rare.
    assert kinds["discard"] <= len(FAST_SEEDS) // 20, kinds
    # Most derivative coordinates were compared with finite differences.
    checked = sum(r.outcome.checked for r in results)
    skipped = sum(r.outcome.skipped for r in results)
    assert checked > 10 * skipped, (checked, skipped)


# -- the generator ----------------------------------------------------------------------


def test_generation_is_deterministic():
    for seed in (0, 7, 123):
        a, b = generate(seed), generate(seed)
        assert a == b
        assert mlir_function(a) == mlir_function(b)
        assert Oracle(a).source == Oracle(b).source
    assert generate(1) != generate(2)


def test_generated_programs_verify_and_differentiate():
    """The MLIR parses and passes xDSL's verifier and the dominance check,
    before and after adding the gradient."""
    from adpasses.core.context import parse_module
    from adpasses.transforms.reverse_pass import ReverseOptions, differentiate
    from adpasses.core.verify import verify_all

    for seed in range(40):
        p = generate(seed)
        validate(p)
        module = parse_module(mlir_function(p), f"seed{seed}.mlir")
        verify_all(module)
        differentiate(module, p.name, p.activity, list(p.ret_activity),
                      with_primal=p.options.with_primal,
                      options=ReverseOptions(cache_policy=p.options.policy,
                                             activity=p.options.activity))
        verify_all(module)


def _features(seeds) -> Counter:  # type: ignore[no-untyped-def]
    seen: Counter = Counter()

    def expr(e) -> None:  # type: ignore[no-untyped-def]
        if isinstance(e, Op):
            seen["op:" + e.op] += 1
        seen[type(e).__name__] += 1
        if isinstance(e, Select):
            seen["select on " + type(e.cond).__name__] += 1
        for x in sub_exprs(e):
            expr(x)

    for seed in seeds:
        p = generate(seed)
        o = p.options
        seen.update([f"policy:{o.policy}", f"activity:{o.activity}", f"primal:{o.with_primal}",
                     f"O{o.opt_level}", f"boundscheck:{o.boundscheck}"])
        mems = [a for a in p.args if isinstance(a, MemArg)]
        seen.update("arg:" + a.activity for a in p.args if not isinstance(a, IndexArg))
        seen.update(f"rank{len(a.shape)}" for a in mems)
        seen.update("strided" for a in mems if a.strided)
        seen.update("static shape" for a in mems if a.static_shape)
        seen.update("noalias" for a in mems if a.noalias)
        seen.update("index arg" for a in p.args if isinstance(a, IndexArg))
        if len({a.buffer for a in mems}) < len(mems):
            seen["aliased arguments"] += 1
        seen.update(f"ret:{r}" for r in p.ret_activity)
        seen[f"{len(p.results)} results"] += 1
        for s in walk_stmts(p.body):
            seen[type(s).__name__] += 1
            if isinstance(s, For):
                seen[f"step {s.step}"] += 1
                if any(isinstance(t, Dim) for _, t in s.ub.terms):
                    seen["dim bound"] += 1
                if any(isinstance(t, str) and t.startswith(("i", "k")) for _, t in s.lb.terms):
                    seen["triangular loop"] += 1
                if any(isinstance(t, For) for t in walk_stmts(s.body)):
                    if any(isinstance(u, For) for t in walk_stmts(s.body) if isinstance(t, For)
                           for u in walk_stmts(t.body)):
                        seen["3 nested loops"] += 1
            if isinstance(s, If):
                seen["if on " + type(s.cond).__name__] += 1
            if isinstance(s, While) and s.cond is not None:
                seen["while on data"] += 1
            if isinstance(s, View):
                seen["dynamic view offset" if any(o.terms for o in s.offsets) else "static view"] += 1
                if not all(s.keep):
                    seen["rank-reducing view"] += 1
            if isinstance(s, Alloc):
                seen[s.kind] += 1
            for e in stmt_exprs(s):
                expr(e)
        for e in p.results:
            expr(e)
    return seen


def test_generator_covers_the_plan():
    seen = _features(range(400))
    wanted = [f"op:{name}" for name in OPS] + [
        "PowI", "Select", "IndexToFloat", "F32", "Load", "select on FCmp", "select on ICmp",
        "policy:minimal", "policy:min-memory", "policy:tape-all", "activity:True", "activity:False", "primal:True",
        "O0", "O3", "boundscheck:False", "arg:const", "arg:active", "arg:dup", "arg:dupnoneed",
        "rank1", "rank2", "strided", "static shape", "noalias", "index arg", "aliased arguments",
        "ret:active", "ret:const", "0 results", "2 results", "Let", "Assign", "Store", "For",
        "If", "While", "alloc", "alloca", "View", "Copy", "step 2", "step 3", "dim bound",
        "triangular loop", "3 nested loops", "if on FCmp", "if on ICmp", "while on data",
        "dynamic view offset", "static view", "rank-reducing view",
    ]
    missing = [w for w in wanted if not seen[w]]
    assert not missing, missing


# What a guarded operand of each domain must satisfy (adpasses.ops.entry.DOMAINS;
# integer ("int", "order") and "cond" operands are built by their own nodes, never guarded).
GUARDED = {
    "any": lambda v: pymath.isfinite(v),
    "pos": lambda v: v > 0,
    "nonzero": lambda v: v != 0,
    "unit": lambda v: abs(v) < 0.9 + 1e-12,
    "small": lambda v: abs(v) <= 2.5,
    "above1": lambda v: v > 1,
    "prob": lambda v: 0 < v < 1,
}


def _value(e) -> float:  # type: ignore[no-untyped-def]
    if isinstance(e, Const):
        return e.value
    args = [repr(_value(a)) for a in e.args]
    return eval(OPS[e.op].python.format(*args), {"_m": pymath, "_abs": abs})


def test_every_domain_has_a_fuzz_guard_into_it():
    """A domain added to the op table without a generator guard (or with one
    that leaves it) fails here, not in the middle of a fuzz run."""
    assert set(DOMAINS) - {*INTEGER_DOMAINS, "cond"} == set(GUARDED), "a domain without a guard (or a stale one)"
    gen = _Generator(0)
    for domain, inside in GUARDED.items():
        for x in (-40.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 40.0):
            for _ in range(20):
                v = _value(gen.guard(Const(x), domain))
                assert inside(v), f"guard({x}, {domain!r}) = {v}"


# -- the oracle and the checker ------------------------------------------------------------


def test_oracle_agrees_with_compiled_primal_on_a_seed():
    p = generate(3)
    outcome = check_program(p)
    forget_compiled()
    assert outcome.kind == "ok", outcome
    assert outcome.checked > 0


def test_oracle_powi_is_the_compiled_fpowi_bit_for_bit():
    """The oracle computes math.fpowi as the lowering does (repeated
    squaring, 1/x**|n| for n < 0), not as libm pow (an ulp apart): seeds 54
    and 9038 of the long run amplified that ulp (sin of a huge argument, a
    chaotic recurrence) into a "wrong primal" the compiler did not make."""
    import numpy as np

    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module

    powi = Oracle(generate(3))._helpers()["_powi"]
    exponents = list(range(-5, 9))
    body = "\n".join(
        f"  %n{k} = arith.constant {n} : i32\n  %p{k} = math.fpowi %x, %n{k} : f64, i32\n"
        f"  memref.store %p{k}, %out[%i{k}] : memref<{len(exponents)}xf64>\n"
        f"  %i{k + 1} = arith.addi %i{k}, %one : index"
        for k, n in enumerate(exponents))
    text = f"""func.func @f(%x: f64, %out: memref<{len(exponents)}xf64>) {{
  %i0 = arith.constant 0 : index
  %one = arith.constant 1 : index
{body}
  func.return
}}"""
    f = compile_module(parse_module(text))["f"]
    rng = np.random.default_rng(0)
    for x in [*rng.uniform(-1.5, 1.5, 50), *rng.uniform(-1e4, 1e4, 50)]:
        out = np.zeros(len(exponents))
        f(float(x), out)
        assert [powi(float(x), n) for n in exponents] == out.tolist(), x


def test_f32_finite_differences_replay_the_roundings():
    """Finite differences of f32 programs replay the reference run's
    rounding residuals (docs/fuzzing.md): `x - f32(x)` (seed 525) is pure
    rounding noise whose finite differences on the real staircase were
    taken for a derivative (seeds 525, 1345, 4621, 4801, 5377, 8237, 9845
    of the long run). The frozen oracle equals the real one at the point."""
    import numpy as np

    from adpasses.tools.fuzz.check import choose_point
    from adpasses.tools.fuzz.inputs import evaluate

    for seed in (525, 1345):
        p = generate(seed)
        assert check_program(p).kind == "ok", seed
    p = generate(525)
    oracle = Oracle(p)
    point, ref = choose_point(p, oracle)
    assert ref.roundings
    oracle.frozen = ref.roundings
    again = evaluate(oracle, p, point.buffers, point.floats)
    oracle.frozen = None
    assert again.results == ref.results
    assert all(np.array_equal(a, b) for a, b in zip(again.buffers, ref.buffers))


def _exploding(trips: int) -> Program:
    """`s = 2 + x[0]^2`, then `trips` times `s = 0.75 s + log1p(s*s + 0.25) s`
    (22 trips reach 6e35, which absorbs the finite-difference step of x[0]),
    and only `sin(s)` is stored: the result stays bounded."""
    s, zero = Var("s"), Idx(0, ())
    x0 = Load("x", (zero,))
    grow = Op("addf", (Op("mulf", (s, Const(0.75))),
                       Op("mulf", (Op("log1p", (Op("addf", (Op("mulf", (s, s)), Const(0.25))),)), s))))
    body = (Let("s", Op("addf", (Const(2.0), Op("mulf", (x0, x0))))),
            For("i", zero, Idx(trips, ()), 1, (Assign("s", grow),)),
            Store("x", (zero,), Op("sin", (s,))))
    return Program(seed=0, args=(MemArg("x", (1,), "dup", buffer=0, strides=(1,), static_shape=True, noalias=True),),
                   buffers=(1,), body=body, results=(), ret_activity=())


def test_exploding_intermediates_are_not_checked():
    """A recurrence that grows to 1e35 absorbs the finite-difference step;
    only `sin(s)` is stored. Intermediate magnitudes (`Oracle.peak`) are
    bounded like results, so the program is discarded instead of failing.
    (Built by hand, not by seed: adding an op to the table changes what
    every seed generates.)"""
    assert check_program(_exploding(3)).kind == "ok"
    outcome = check_program(_exploding(22))
    assert (outcome.kind, outcome.detail) == ("discard", "values not finite or too large")

def _wrong_sin_rule(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Plant a bug: differentiate sin as cos (d sin = -sin instead of cos)."""
    table = dict(adpasses.reverse.rules.rule_table())
    table[math.SinOp] = table[math.CosOp]
    monkeypatch.setattr(adpasses.reverse.rules, "_TABLE", table)


def _uses_sin(p) -> bool:  # type: ignore[no-untyped-def]
    def has(e) -> bool:  # type: ignore[no-untyped-def]
        return (isinstance(e, Op) and e.op == "sin") or any(has(x) for x in sub_exprs(e))

    return any(has(e) for s in walk_stmts(p.body) for e in stmt_exprs(s)) or any(
        has(e) for e in p.results)


def _first_failing_small_seed(predicate):  # type: ignore[no-untyped-def]
    for seed in range(200):
        p = generate(seed)
        if program_size(p) <= 60 and predicate(p):
            outcome = check_program(p)
            forget_compiled()
            if outcome.kind == "wrong gradient":
                return p, outcome
    raise AssertionError("no seed failed")


def test_planted_wrong_rule_is_found_and_shrunk(monkeypatch, tmp_path, capfd):
    _wrong_sin_rule(monkeypatch)
    p, outcome = _first_failing_small_seed(_uses_sin)

    def check(candidate):  # type: ignore[no-untyped-def]
        result = check_program(candidate)
        forget_compiled()
        return result

    small, small_outcome = shrink(p, check, max_checks=400)
    assert small_outcome.kind == "wrong gradient"
    assert program_size(small) <= 8 < program_size(p), (program_size(small), mlir_function(small))
    assert _uses_sin(small)

    # The reproducer is a lit test that fails with the bug and passes without.
    from adpasses.tools.fuzz.reproducer import lit_test
    from adpasses.tools.ad_run import main as ad_run

    path = tmp_path / "repro.mlir"
    path.write_text(lit_test(small, small_outcome))
    text = path.read_text()
    assert text.startswith("// RUN: ad-run %s | filecheck %s")
    assert "CHECK:" in text and "math.sin" in text

    capfd.readouterr()
    assert ad_run([str(path)]) == 0
    assert ": ok 0" in capfd.readouterr().out
    monkeypatch.undo()
    forget_compiled()
    assert ad_run([str(path)]) == 0
    printed = capfd.readouterr().out
    assert ": ok 1" in printed and ": ok 0" not in printed, printed
    assert check_program(small).kind == "ok"
    forget_compiled()


# -- the runner: crashes and hangs in workers -------------------------------------------------
# Module-level functions, so that the spawned workers can import them.

_RAN: list[int] = []


def crash_on_two(item) -> Outcome:  # type: ignore[no-untyped-def]
    if item == 2:
        os.kill(os.getpid(), signal.SIGSEGV)
    if item == 3:
        time.sleep(60)
    return Outcome("ok")


def crash_after_four(item) -> Outcome:  # type: ignore[no-untyped-def]
    """Crashes on 5 only when 4 ran before it in the same process (like
    memory corrupted by an earlier program)."""
    if item == 5 and 4 in _RAN:
        os.kill(os.getpid(), signal.SIGSEGV)
    _RAN.append(item)
    return Outcome("ok")


def test_runner_reports_crashes_and_hangs_and_goes_on():
    # The timeout also covers a worker's start (spawn, imports): 5 s failed
    # an ok seed on a loaded machine (load 15); seed 3 sleeps 60 s.
    results = {r.seed: r.outcome for r in run_seeds(range(6), jobs=2, timeout=20, batch=3,
                                                         case=crash_on_two)}
    assert sorted(results) == list(range(6))
    assert results[2].kind == "crash" and "SIGSEGV" in results[2].detail
    assert results[3].kind == "crash" and "timeout" in results[3].detail
    assert all(results[s].kind == "ok" for s in (0, 1, 4, 5))


def test_runner_tells_a_crash_caused_by_an_earlier_seed():
    results = {r.seed: r.outcome for r in run_seeds(range(3, 8), jobs=1, batch=5,
                                                         case=crash_after_four)}
    assert results[5].kind == "crash"
    assert "after seeds [3, 4]" in results[5].detail and "alone it gives: ok" in results[5].detail
    assert all(results[s].kind == "ok" for s in (3, 4, 6, 7))


def test_failure_kinds():
    assert KINDS == ("wrong primal", "wrong gradient", "compiler error", "crash")
    assert Outcome("crash").failed and not Outcome("discard").failed


def test_ill_conditioned_points_are_discarded_not_failed():
    """Seed 78's first point: 4 ulps on the inputs move its second result
    by about 1e-6 relative (a factor that grows every iteration, then a sin
    of it), so rounding alone (fma contraction, vector libm) made the
    compiled primal differ by 4e-7 and the fast set failed on no compiler
    bug. Such a point is refused with the reason; a well-conditioned one
    (the first point of seed 0) is kept."""
    from adpasses.tools.fuzz.check import ATTEMPTS, _ill_conditioned, evaluate, magnitude_ok
    from adpasses.tools.fuzz.inputs import random_point

    def first_point(seed: int):  # type: ignore[no-untyped-def]
        """The first point the oracle evaluates to moderate values."""
        p = generate(seed)
        oracle = Oracle(p)
        for attempt in range(ATTEMPTS):
            point = random_point(p, attempt)
            try:
                ev = evaluate(oracle, p, point.buffers, point.floats)
            except (ArithmeticError, ValueError):
                continue
            if magnitude_ok(ev):
                return oracle, p, point, ev
        raise AssertionError(f"seed {seed}: no point")

    reason = _ill_conditioned(*first_point(78))
    assert reason is not None and reason.startswith("ill-conditioned: 4 ulps on the inputs move result 1"), reason
    assert _ill_conditioned(*first_point(0)) is None
    assert check_program(generate(78)).kind == "discard"


def test_oracle_library_functions_are_the_compiled_ones_bit_for_bit():
    """Every op of the table the oracle evaluates by a library function gives
    the compiled scalar op's result to the last bit. CPython's math.gamma and
    math.lgamma are CPython's own code, a few ulps from the C library's
    tgamma and lgamma_r that the lowering calls, and seed 70052 of the
    forward volume amplified one such ulp (gamma(12.43) = 1.1e8, then a sin)
    into a "wrong primal" of 2e-7: the oracle calls the C library's. The
    oracle's digamma is its own series (the compiled one is generated code):
    within 8 ulps."""
    import numpy as np

    from adpasses.core.context import parse_module
    from adpasses.native.llvm_jit import compile_module

    ranges = {"any": (-3.0, 3.0), "pos": (0.05, 25.0), "nonzero": (0.5, 3.0), "unit": (-0.9, 0.9),
              "small": (-2.5, 2.5), "above1": (1.1, 20.0), "prob": (0.02, 0.98)}
    ops = {name: spec for name, spec in OPS.items() if all(d in ranges for d in spec.domains)}
    assert {"gamma", "lgamma", "exp", "sin", "atan2", "erf", "cbrt"} <= set(ops)
    text = "\n".join(
        f"func.func @{name}({', '.join(f'%x{k}: f64' for k in range(spec.arity))}) -> f64 {{\n"
        f"  %r = {spec.mlir} {', '.join(f'%x{k}' for k in range(spec.arity))} : f64\n"
        f"  func.return %r : f64\n}}" for name, spec in ops.items())
    compiled = compile_module(parse_module(text))
    env = Oracle(generate(3))._helpers()
    env["_m"] = pymath
    rng = np.random.default_rng(70052)
    for name, spec in ops.items():
        points = list(zip(*(rng.uniform(*ranges[d], 40).tolist() for d in spec.domains)))
        ours = [compiled[name](*x) for x in points]
        oracle = [eval(spec.python.format(*map(repr, x)), env) for x in points]
        if name == "digamma":
            assert all(abs(a - b) <= 8 * pymath.ulp(b) for a, b in zip(ours, oracle)), name
        else:
            assert ours == oracle, (name, [(x, a, b) for x, a, b in zip(points, ours, oracle) if a != b][:3])


def _hand_written(body, results=()):  # type: ignore[no-untyped-def]
    """f(x0: memref<2xf64> dup, s0 active) with this body and results."""
    from adpasses.tools.fuzz.program import FloatArg, MemArg, Program

    return Program(seed=5, args=(MemArg("x0", (2,), "dup", 0, 0, (1,)), FloatArg("s0", "active")),
                   buffers=(2,), body=tuple(body), results=tuple(results),
                   ret_activity=("active",) * len(results))


def test_rounding_inside_the_library_makes_a_point_ill_conditioned():
    """Seed 70052 of the forward volume: a contracting recurrence forgets the
    inputs (4 ulps on them move nothing), then `lgamma(1.5 + sin(gamma(s)))`
    with gamma(s) = 1.1e8 is stored: an ulp of gamma moves the stored value
    by 2e-7 relative. Ill-conditioning is also measured with every library
    result moved by 4 ulps, and on buffers as well as results (a stored
    value moved by the inputs alone is refused too)."""
    from adpasses.tools.fuzz.check import _ill_conditioned, choose_point
    from adpasses.tools.fuzz.inputs import evaluate, random_point
    from adpasses.tools.fuzz.program import Const, Idx, Op, Store, Var

    def reason(p):  # type: ignore[no-untyped-def]
        oracle = Oracle(p)
        point = random_point(p, 0)
        return _ill_conditioned(oracle, p, point, evaluate(oracle, p, point.buffers, point.floats))

    gamma_of = lambda x: Op("sin", (Op("gamma", (Const(x),)),))  # noqa: E731
    stored = _hand_written([Store("x0", (Idx(0),), gamma_of(12.429491541603491))], [Var("s0")])
    found = reason(stored)
    assert found is not None and found.startswith(
        "ill-conditioned: 4 ulps on library results move buffer 0 element 0"), found
    assert reason(_hand_written([Store("x0", (Idx(0),), gamma_of(2.5))], [Var("s0")])) is None
    amplified = _hand_written([Store("x0", (Idx(1),), Op("sin", (Op("mulf", (Var("s0"), Const(1e9))),)))],
                              [Var("s0")])
    found = reason(amplified)
    assert found is not None and found.startswith("ill-conditioned: 4 ulps on the inputs move buffer 0 element 1"), found
    assert isinstance(choose_point(stored, Oracle(stored)), str)  # every attempt: discarded
    assert check_program(generate(70052)).kind == "discard"
