"""Custom derivatives (adpasses.custom_vjp / custom_jvp, docs/custom_rules.md):
the rules are used instead of the derived derivative (a deliberately wrong
rule shows it), every derivative matches central finite differences on
random inputs, residuals are taped in loops, and bad rules are `file:line`
errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from finite_diff import assert_matches, finite_differences

import adpasses

RNG = np.random.default_rng(18)


# -- log1pexp: a stable derivative -------------------------------------------------


@adpasses.custom_vjp
def log1pexp(x):
    if x > 30.0:
        return x + math.exp(-x)  # log(1 + e^x) without overflow
    return math.log(1.0 + math.exp(x))


def log1pexp_fwd(x):
    return log1pexp(x), x


def log1pexp_bwd(x, g):
    return (g / (1.0 + math.exp(-x)),)  # sigmoid(x): never inf/inf


log1pexp.defvjp(log1pexp_fwd, log1pexp_bwd)


def log1pexp_naive(x):
    if x > 30.0:
        return x + math.exp(-x)
    return math.log(1.0 + math.exp(x))


def naive_softplus(x):
    return math.log(1.0 + math.exp(x))


def uses_log1pexp(x, y):
    return log1pexp(x * y) * math.sin(x) + 2.0 * log1pexp(-y)


def test_log1pexp_stable_where_the_derived_derivative_is_nan():
    # The derived derivative of log(1 + e^x) at 1000: e^x / (1 + e^x) = inf/inf.
    assert math.isnan(adpasses.grad(naive_softplus)(1000.0))
    assert adpasses.grad(log1pexp)(1000.0) == 1.0
    assert adpasses.grad(log1pexp)(-1000.0) == 0.0
    value, d = adpasses.value_and_grad(log1pexp)(1000.0)
    assert value == 1000.0 and d == 1.0


def test_log1pexp_matches_finite_differences():
    for _ in range(5):
        x, y = RNG.uniform(-3, 3, size=2)
        got = adpasses.grad(uses_log1pexp, (0, 1))(x, y)
        assert_matches(got, finite_differences(uses_log1pexp, [x, y], [0, 1]), what="uses_log1pexp")


def test_without_differentiation_the_primal_runs():
    assert log1pexp(2.0) == math.log(1.0 + math.exp(2.0))  # plain Python
    jitted = adpasses.jit(uses_log1pexp)
    assert jitted(0.7, -0.4) == pytest.approx(uses_log1pexp(0.7, -0.4), rel=1e-15)
    assert adpasses.jit(log1pexp)(1000.0) == 1000.0


# -- the rule, not the body -------------------------------------------------------


@adpasses.custom_vjp
def cube(x):
    return x * x * x


def cube_fwd(x):
    return cube(x), x * x


def cube_bwd(x2, g):
    return (4.0 * x2 * g,)  # deliberately 4x^2, not 3x^2


cube.defvjp(cube_fwd, cube_bwd)


def cubes_in_a_loop(x):
    s = 0.0
    for i in range(len(x)):
        s = s + cube(x[i] + s * 0.1)
    return s


def test_the_rule_is_called_not_the_derived_derivative():
    assert adpasses.grad(cube)(1.5) == 4.0 * 1.5 * 1.5
    x = np.array([0.5, -0.25, 0.75])
    # with d cube(u)/du := 4u^2, by hand (the loop carries s):
    s, dsdx = 0.0, np.zeros(3)
    us = []
    for i in range(3):
        u = x[i] + s * 0.1
        us.append(u)
        s = s + u**3
    g = 1.0
    for i in reversed(range(3)):
        du = g * 4.0 * us[i] ** 2
        dsdx[i] = du
        g = g + du * 0.1
    assert_matches(adpasses.grad(cubes_in_a_loop)(x), dsdx, what="rule in a loop")


def test_residuals_are_taped_in_a_loop_and_reported():
    x = np.array([0.5, -0.25, 0.75, 0.1])
    report = adpasses.cache_report(cubes_in_a_loop, x)
    residuals = [e for e in report.entries if "residual 0 of the custom rule of @cube" in e.reason]
    assert residuals and residuals[0].decision == "tape"
    assert "returned by @cube_0_fwd for @cube_0_bwd" in residuals[0].reason
    # the residual (x^2, 8 bytes per iteration) and the loop-carried s
    assert report.taped_bytes == 8 * len(x) * len([e for e in report.entries if e.decision == "tape"])


# -- several arguments, an int, tuple residuals ---------------------------------------


@adpasses.custom_vjp
def scaled_power(x, n, a):
    return a * x**n


def scaled_power_fwd(x, n, a):
    p = x**n
    return a * p, (p, (x, n), a)


def scaled_power_bwd(res, g):
    p, (x, n), a = res
    return (g * a * n * p / x, None, g * p)


scaled_power.defvjp(scaled_power_fwd, scaled_power_bwd)


def power_sum(x, a):
    s = 0.0
    for i in range(len(x)):
        s += scaled_power(x[i], i + 1, a)
    return s


def test_tuple_residuals_and_an_int_argument():
    for _ in range(3):
        x = RNG.uniform(0.5, 2.0, size=4)
        a = float(RNG.uniform(-2, 2))
        got = adpasses.grad(power_sum, (0, 1))(x, a)
        expected = finite_differences(power_sum, [x, a], [0, 1])
        assert_matches(got[0], expected[0], what="d/dx")
        assert_matches(got[1], expected[1], what="d/da")


# -- implicit differentiation of a Newton solve --------------------------------------


def newton_root(a, b):
    """The real root y of y^3 + a*y - b = 0 (a > 0), by Newton's method."""
    y = 1.0
    for _ in range(60):
        y = y - (y * y * y + a * y - b) / (3.0 * y * y + a)
    return y


@adpasses.custom_vjp
def cubic_root(a, b):
    return newton_root(a, b)


def cubic_root_fwd(a, b):
    y = newton_root(a, b)
    return y, (y, a)


def cubic_root_bwd(res, g):
    y, a = res
    fy = 3.0 * y * y + a  # dF/dy at the solution
    return (-g * y / fy, g / fy)  # implicit function theorem


cubic_root.defvjp(cubic_root_fwd, cubic_root_bwd)


def fit_loss(a, bs, targets):
    loss = 0.0
    for i in range(len(bs)):
        r = cubic_root(a, bs[i]) - targets[i]
        loss += r * r
    return loss


def test_implicit_differentiation_of_a_newton_solve():
    for _ in range(3):
        a = float(RNG.uniform(0.5, 3.0))
        bs = RNG.uniform(-4, 4, size=5)
        targets = RNG.uniform(-1, 1, size=5)
        got = adpasses.grad(fit_loss, (0, 1))(a, bs, targets)
        expected = finite_differences(fit_loss, [a, bs, targets], [0, 1])
        assert_matches(got[0], expected[0], what="d loss/d a")
        assert_matches(got[1], expected[1], what="d loss/d b")


def test_implicit_rule_in_an_independent_loop_tapes_nothing_not_the_newton_iterations():
    bs = np.linspace(-2, 2, 7)
    report = adpasses.cache_report(fit_loss, 1.5, bs, np.zeros(7), argnums=(0, 1))
    # The iterations are independent: each is reversed right after its
    # forward (docs/parallel.md), the residual y and r = y - t still in
    # registers; the 60 Newton steps are neither taped nor differentiated.
    # (Reversed after the forward loop, the residual and r are taped, 2 * 8
    # bytes per iteration: test/lit/custom/reverse.mlir, --no-loop-local.)
    assert report.taped_bytes == 0
    assert [local for _, local, _ in report.loops] == [True]
    residual = [e for e in report.entries if "residual 0" in e.reason]
    assert residual and all(e.decision == "reuse" for e in residual)


# -- custom_jvp --------------------------------------------------------------------


@adpasses.custom_jvp
def softplus(x):
    if x > 30.0:
        return x + math.exp(-x)
    return math.log(1.0 + math.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    return softplus(x), t / (1.0 + math.exp(-x))


@adpasses.custom_jvp
def weighted(x, k, w):
    return w * math.sin(x) ** k


@weighted.defjvp
def weighted_jvp(primals, tangents):
    x, k, w = primals
    tx, tk, tw = tangents  # tk: 0.0 for the int argument
    s = math.sin(x)
    return w * s**k, w * k * s ** (k - 1) * math.cos(x) * tx + s**k * tw + tk


def softplus_sum(x):
    s = 0.0
    for i in range(len(x)):
        s += softplus(x[i] * x[i]) + weighted(x[i], 3, x[0])
    return s


def test_custom_jvp_in_forward_reverse_and_hessian():
    assert adpasses.jvp(softplus, (1000.0,), (2.0,)) == (1000.0, 2.0)
    assert adpasses.grad(softplus)(1000.0) == 1.0  # reverse mode by the jvp rule
    for _ in range(3):
        x = RNG.uniform(-1.5, 1.5, size=4)
        assert_matches(adpasses.grad(softplus_sum)(x), finite_differences(softplus_sum, [x], [0])[0],
                       what="grad through the jvp rule")
        v = RNG.normal(size=4)
        _, tangent = adpasses.jvp(softplus_sum, (x,), (v,))
        fd = finite_differences(softplus_sum, [x], [0])[0]
        assert tangent == pytest.approx(float(fd @ v), rel=1e-6, abs=1e-8)
        H = adpasses.hessian(softplus_sum)(x)
        grad = adpasses.grad(softplus_sum)
        fd_h = np.array([finite_differences(lambda y: grad(y)[j], [x], [0])[0] for j in range(4)])
        assert_matches(H, fd_h, what="hessian")


def test_hessian_through_a_custom_vjp_when_its_value_is_not_needed():
    def g(x):
        s = 0.0
        for i in range(len(x)):
            s += log1pexp(x[i] * x[i])
        return s

    x = RNG.uniform(-1, 1, size=3)
    sig = 1 / (1 + np.exp(-x * x))
    assert_matches(adpasses.hessian(g)(x), np.diag(2 * sig + 4 * x * x * sig * (1 - sig)),
                   what="hessian of a sum of custom_vjp calls")


def squared_log1pexp(x):
    return log1pexp(x[0]) ** 2


def test_forward_mode_of_a_custom_vjp_function_is_a_clear_error():
    with pytest.raises(adpasses.CompileError, match="custom reverse rule .* but no forward rule"):
        adpasses.jvp(log1pexp, (1.0,), (1.0,))
    with pytest.raises(adpasses.CompileError, match=r"test_custom_rules.py:\d+:\d+: .*defjvp"):
        adpasses.hessian(squared_log1pexp)(np.array([0.5]))


# -- errors ---------------------------------------------------------------------------

import custom_rules_bad as bad  # noqa: E402


def _line(marker_function, text="# BAD"):
    import inspect

    lines, first = inspect.getsourcelines(marker_function)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("caller, rule, message", [
    (bad.call_two_args, bad.two_args_bwd,
     r"two_args_bwd returns 1 cotangents, but two_args takes 2 arguments: return one per argument"),
    (bad.call_with_int, bad.with_int_bwd, r"argument 1 of with_int is an int or a bool: its cotangent must be None"),
    (bad.call_bare, bad.bare_bwd, r"returns a tuple with one cotangent per argument of bare \(1\), like JAX"),
    (bad.call_not_a_pair, bad.not_a_pair_fwd, r"returns a pair \(output, residuals\), but not_a_pair_fwd returns 1 value"),
    (bad.call_array_residual, bad.array_residual_fwd, r"residuals must be numbers, the function.s own array arguments, or tuples of them, but array_residual_fwd returns an array"),
    (bad.call_uncompilable, bad.uncompilable_bwd, r"dict"),
    (bad.call_jvp_wrong, bad.jvp_wrong_rule, r"returns a pair \(output, tangent of the output\), but jvp_wrong_rule returns 3 values"),

    (bad.call_early_if, bad.early_if_bwd, r"a custom_vjp bwd rule returns once, at its end, but this `return` is "
                                          r"inside an `if`: assign the values to variables there and `return` "
                                          r"the tuple once, as the rule's last statement"),
    (bad.call_early_for, bad.early_for_fwd, r"fwd rule returns once, .* is inside a `for` loop"),
    (bad.call_early_while, bad.early_while_bwd, r"returns once, .* is inside a `while` loop"),
    (bad.call_dead_tail, bad.dead_tail_bwd, r"returns once, .* is before the end of the rule \(statements follow it\)"),
    (bad.call_early_jvp, bad.early_jvp_rule, r"a custom_jvp rule returns once, .* is inside an `if`"),
])
def test_bad_rules_are_located_errors(caller, rule, message):
    with pytest.raises(adpasses.CompileError) as info:
        adpasses.grad(caller)(0.5)
    text = str(info.value)
    assert f"custom_rules_bad.py:{_line(rule)}:" in text, text
    assert __import__("re").search(message, text), text


def test_missing_rule_and_defvjp_twice():
    with pytest.raises(adpasses.CompileError, match=r"custom_rules_bad.py:\d+: error: no_rule is a custom_vjp "
                                                     r"function without a rule: call no_rule.defvjp\(fwd, bwd\)"):
        adpasses.grad(bad.call_no_rule)(0.5)
    with pytest.raises(ValueError, match=r"two_args.defvjp was already called at .*custom_rules_bad.py:\d+"):
        bad.two_args.defvjp(bad.two_args_fwd, bad.two_args_bwd)
    with pytest.raises(TypeError, match="must be a Python function"):
        adpasses.custom_vjp(bad.two_args)
    with pytest.raises(TypeError, match="must be a Python function"):
        bad.no_rule.defvjp(math.sin, bad.two_args_bwd)


# -- extern: a C function (ctypes lgamma) with a Python rule ---------------------------

import ctypes  # noqa: E402
import ctypes.util  # noqa: E402

LIBM = ctypes.CDLL(ctypes.util.find_library("m"))


def digamma(x):
    """psi(x), x > 0: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 6,
    then the asymptotic series."""
    r = 0.0
    while x < 6.0:
        r -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132)))))
    return r + math.log(x) - 0.5 / x - series


def lgamma_vjp(x, g):
    return (g * digamma(x),)


lgamma = adpasses.extern(LIBM.lgamma, "double(double)", vjp=lgamma_vjp)


def gamma_loglik(x, k):
    s = 0.0
    for i in range(len(x)):
        s += lgamma(x[i] * k) * (i + 1.0)
    return s


def test_extern_lgamma_runs_and_differentiates_with_its_rule():
    x = RNG.uniform(0.3, 8.0, size=6)
    assert lgamma(3.5) == pytest.approx(math.lgamma(3.5), rel=1e-14)  # from Python: through ctypes
    assert adpasses.jit(gamma_loglik)(x, 1.5) == pytest.approx(
        sum(math.lgamma(v * 1.5) * (i + 1) for i, v in enumerate(x)), rel=1e-14)
    for k in (1.0, 0.7):
        got = adpasses.grad(gamma_loglik, (0, 1))(x, k)
        expected = finite_differences(gamma_loglik, [x, k], [0, 1])
        assert_matches(got[0], expected[0], what="d/dx")
        assert_matches(got[1], expected[1], what="d/dk")


def test_extern_hessian_differentiates_the_compiled_digamma():
    x = RNG.uniform(0.5, 5.0, size=3)
    grad = adpasses.grad(gamma_loglik)
    fd = np.array([finite_differences(lambda y: grad(y, 1.0)[j], [x], [0])[0] for j in range(3)])
    assert_matches(adpasses.hessian(gamma_loglik)(x, 1.0), fd, what="trigamma")


def test_extern_calls_tape_nothing_and_the_report_says_why():
    x = np.linspace(0.5, 3.0, 5)
    report = adpasses.cache_report(gamma_loglik, x, 1.0)
    # lgamma writes no memory (ad.no_memory): the loop's iterations are
    # independent, reversed loop-locally; x[i] * k is still in a register.
    assert report.taped_bytes == 0
    [(_, local, reason)] = report.loops
    assert local and "iterations independent" in reason


def digamma_c(x, g):
    return g * digamma(x)


def test_extern_with_an_extern_rule_and_a_jvp_rule():
    # The rule may itself be a C function: here a ctypes callback of Python's.
    proto = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double)
    callback = proto(lambda x, g: g * _py_digamma(x))
    rule = adpasses.extern(ctypes.cast(callback, ctypes.c_void_p).value, "double(double, double)",
                           name="digamma_times")
    lg = adpasses.extern(LIBM.lgamma, "double(double)", vjp=rule, jvp=lgamma_jvp, name="lgamma2")
    globals()["lgamma2"] = lg
    globals()["_keep_callback"] = callback
    x = RNG.uniform(0.5, 4.0, size=4)
    assert_matches(adpasses.grad(uses_lgamma2)(x), finite_differences(uses_lgamma2, [x], [0])[0],
                   what="extern rule")
    v = RNG.normal(size=4)
    _, t = adpasses.jvp(uses_lgamma2, (x,), (v,))
    assert t == pytest.approx(float(finite_differences(uses_lgamma2, [x], [0])[0] @ v), rel=1e-6)


def _py_digamma(x):
    return digamma(x)


def lgamma_jvp(primals, tangents):
    (x,) = primals
    (t,) = tangents
    return lgamma2(x), digamma(x) * t  # noqa: F821 (set by the test)


def uses_lgamma2(x):
    s = 0.0
    for i in range(len(x)):
        s += lgamma2(x[i]) * x[i]  # noqa: F821
    return s


def test_extern_errors():
    with pytest.raises(ValueError, match="signature must be a string like"):
        adpasses.extern(LIBM.lgamma, "double")
    with pytest.raises(ValueError, match="unknown type 'char'"):
        adpasses.extern(LIBM.lgamma, "double(char)")
    with pytest.raises(TypeError, match="ctypes function or an address"):
        adpasses.extern(math.lgamma, "double(double)")
    with pytest.raises(adpasses.CompileError, match=r"test_custom_rules.py:\d+:\d+: .*takes 1 argument"):
        adpasses.jit(calls_lgamma_badly)(1.0)
    # what to do names the extern and its keyword, not the IR (was "define it
    # in the module", which a Python user cannot do for a C function)
    with pytest.raises(adpasses.CompileError, match=r"has no body to differentiate.*adpasses.extern "
                       r"'bare_lgamma' \(a C function\) has no reverse rule; give one with "
                       r"adpasses.extern\(\.\.\., vjp=rule\)"):
        adpasses.grad(uses_bare_extern)(1.5)
    with pytest.raises(adpasses.CompileError, match=r"adpasses.extern 'bare_lgamma' \(a C function\) has "
                       r"no forward rule; give one with adpasses.extern\(\.\.\., jvp=rule\)"):
        adpasses.jvp(uses_bare_extern, (1.5,), (1.0,))
    with pytest.raises(adpasses.CompileError, match=r"no forward rule.*give it with "
                       r"adpasses.extern\(lgamma, \.\.\., jvp=rule\)"):
        adpasses.jvp(uses_lgamma, (1.5,), (1.0,))
    from adpasses.core.custom_rules import EXTERN_PREFIX
    from adpasses.native import externs

    assert externs.PREFIX == EXTERN_PREFIX  # the IR layer recognises externs by it


BARE = adpasses.extern(LIBM.lgamma, "double(double)", name="bare_lgamma")


def calls_lgamma_badly(x):
    return lgamma(x, 2.0)


def uses_bare_extern(x):
    return BARE(x) * 2.0


def uses_lgamma(x):
    return lgamma(x) * 2.0


def test_the_disk_cache_key_covers_the_rules():
    # jit(cache=True) keys compiled code by the sources it was compiled from:
    # the rules' sources are part of it (a changed bwd is a new entry).
    assert {"log1pexp", "log1pexp_fwd", "log1pexp_bwd"} <= set(_fingerprinted_names(uses_log1pexp))
    assert {"softplus_jvp", "weighted_jvp"} <= set(_fingerprinted_names(softplus_sum))
    assert "lgamma_vjp" in _fingerprinted_names(gamma_loglik)
    assert "log1pexp_bwd" in _fingerprinted_names(log1pexp.fun)  # the custom function itself


def _fingerprinted_names(fn):
    """The functions source_fingerprint reads, by name (its todo walk)."""
    from adpasses.api import disk_cache

    names = []
    real = disk_cache._source

    def spy(f):
        names.append(f.__name__)
        return real(f)

    disk_cache._source = spy
    try:
        disk_cache.source_fingerprint(fn)
    finally:
        disk_cache._source = real
    return names


# -- array arguments: the cotangent is accumulated into the shadow ---------------------


@adpasses.custom_vjp
def scaled_norm(x, p):
    s = 0.0
    for i in range(len(x)):
        s += x[i] ** 2
    return p * math.sqrt(s)


def scaled_norm_fwd(x, p):
    n = scaled_norm(x, 1.0)
    return p * n, (x, n, p)  # x: the argument itself, read again by bwd (not copied)


def scaled_norm_bwd(res, g):
    x, n, p = res
    ct = np.zeros(len(x))
    for i in range(len(x)):
        ct[i] = g * p * x[i] / n
    return (ct, g * n)


scaled_norm.defvjp(scaled_norm_fwd, scaled_norm_bwd)


def norm_loss(x, w):
    return scaled_norm(x, w) ** 2 + x[0] * w


def test_array_argument_cotangent_accumulates_into_the_shadow():
    for _ in range(3):
        x = RNG.normal(size=5)
        w = float(RNG.uniform(0.5, 2))
        got = adpasses.grad(norm_loss, (0, 1))(x, w)
        expected = finite_differences(norm_loss, [x, w], [0, 1])
        assert_matches(got[0], expected[0], what="d/dx")
        assert_matches(got[1], expected[1], what="d/dw")
        # x const: the rule accumulates into a scratch shadow
        assert adpasses.grad(norm_loss, 1)(x, w) == pytest.approx(expected[1], rel=1e-6)
    dx = np.full(5, 10.0)
    x = RNG.normal(size=5)
    adpasses.autodiff(norm_loss, adpasses.Duplicated(x, dx), 1.3)
    assert_matches(dx - 10.0, finite_differences(norm_loss, [x, 1.3], [0])[0], what="autodiff adds")


EXTERN_MODULE = '''
import ctypes, ctypes.util, adpasses
libm = ctypes.CDLL(ctypes.util.find_library("m"))
def lgamma_vjp(x, g):
    return (g * 3.0,)
lg = adpasses.extern(libm.lgamma, "double(double)", vjp=lgamma_vjp)

@adpasses.jit(cache=True)
def f(x):
    return lg(x) * 2.0
'''


def test_extern_code_kept_on_disk_is_loaded_by_another_process(tmp_path):
    import subprocess
    import sys

    (tmp_path / "extmod.py").write_text(EXTERN_MODULE)
    script = ("import extmod, adpasses, math; "
              "print(extmod.f(3.5) == 2 * extmod.lg(3.5), adpasses.grad(extmod.f)(3.5))")
    env = {**__import__("os").environ, "ADPASSES_CACHE_DIR": str(tmp_path / "cache"),
           "ADPASSES_LOG": "info", "PYTHONPATH": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert run.stdout.split() == ["True", "6.0"]  # the rule's 3.0, times 2
    assert "disk cache miss" in runs[0].stderr and "disk cache hit" in runs[1].stderr


# Rule bodies with control flow compile like any function body (they share
# FunctionCompiler.prepare_body): an `if` and a `for` directly in a rule.
@adpasses.custom_jvp
def _norm2(x, y):
    return math.sqrt(x * x + y * y)


@_norm2.defjvp
def _norm2_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    r = math.sqrt(x * x + y * y)
    t = 0.0
    if r != 0.0:
        t = (x * tx + y * ty) / r
    for _ in range(2):
        t = t * 1.0
    return r, t


@adpasses.custom_vjp
def _clipped_sq(x):
    return x * x


def _clipped_sq_fwd(x):
    return x * x, x


def _clipped_sq_bwd(x, g):
    d = 2.0 * x
    if d > 1.0:
        d = 1.0
    s = 0.0
    for k in range(3):
        s += 0.0 * k
    return (g * d + s,)


_clipped_sq.defvjp(_clipped_sq_fwd, _clipped_sq_bwd)


def _uses_norm2(a, b):
    return _norm2(a, b) * 2.0


def test_rules_with_if_and_for_in_their_bodies():
    a, b = 3.0, -4.0
    assert adpasses.jit(_uses_norm2)(a, b) == pytest.approx(_uses_norm2(a, b))
    h = 1e-6
    fd = [(_uses_norm2(a + h, b) - _uses_norm2(a - h, b)) / (2 * h),
          (_uses_norm2(a, b + h) - _uses_norm2(a, b - h)) / (2 * h)]
    _, t = adpasses.jvp(_uses_norm2, (a, b), (1.0, 0.0))
    assert t == pytest.approx(fd[0], rel=1e-6)
    assert adpasses.grad(_uses_norm2, (0, 1))(a, b) == pytest.approx(fd, rel=1e-6)
    for v in (0.3, 2.0):  # the bwd rule's branch: the clipped derivative it defines
        assert adpasses.grad(_clipped_sq)(v) == pytest.approx(min(2.0 * v, 1.0), rel=1e-12)


def test_grad_of_the_custom_function_itself_from_python_numbers():
    """docs/custom_rules.md's first example, `adpasses.grad(log1pexp)(1000.0)`:
    the entry is compiled for a Python float (weak, NEP 50) and fwd calls
    log1pexp with its own (strong) parameter; a second version of log1pexp
    compiled its rules again inside fwd's ("rules cannot recurse")."""
    assert adpasses.grad(log1pexp)(1000.0) == 1.0
    assert adpasses.grad(log1pexp)(0.3) == pytest.approx(1.0 / (1.0 + math.exp(-0.3)), rel=1e-14)
    assert adpasses.value_and_grad(log1pexp)(np.float64(-2.0))[1] == pytest.approx(
        1.0 / (1.0 + math.exp(2.0)), rel=1e-14)
