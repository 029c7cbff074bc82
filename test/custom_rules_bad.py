"""Bad custom rules for test_custom_rules.py (each error names a line here)."""

import math

import numpy as np

import adpasses


@adpasses.custom_vjp
def two_args(x, y):
    return x * y


def two_args_fwd(x, y):
    return x * y, (x, y)


def two_args_bwd(res, g):
    x, y = res
    return (g * y,)  # BAD: one cotangent for two arguments


two_args.defvjp(two_args_fwd, two_args_bwd)


@adpasses.custom_vjp
def with_int(x, n):
    return x * n


def with_int_fwd(x, n):
    return x * n, n


def with_int_bwd(n, g):
    return (g * n, g)  # BAD: a cotangent for the int argument


with_int.defvjp(with_int_fwd, with_int_bwd)


@adpasses.custom_vjp
def bare(x):
    return x * x


def bare_fwd(x):
    return x * x, x


def bare_bwd(x, g):
    return 2.0 * x * g  # BAD: not a tuple


bare.defvjp(bare_fwd, bare_bwd)


@adpasses.custom_vjp
def not_a_pair(x):
    return x * x


def not_a_pair_fwd(x):
    return x * x  # BAD: no residuals


def not_a_pair_bwd(x, g):
    return (g,)


not_a_pair.defvjp(not_a_pair_fwd, not_a_pair_bwd)


@adpasses.custom_vjp
def array_residual(x):
    return x * x


def array_residual_fwd(x):
    a = np.zeros(3)
    return x * x, a  # BAD: an array residual


def array_residual_bwd(a, g):
    return (g,)


array_residual.defvjp(array_residual_fwd, array_residual_bwd)


@adpasses.custom_vjp
def uncompilable(x):
    return x * x


def uncompilable_fwd(x):
    return x * x, x


def uncompilable_bwd(x, g):
    d = {"g": g}  # BAD: a dict
    return (d["g"] * 2.0 * x,)


uncompilable.defvjp(uncompilable_fwd, uncompilable_bwd)


@adpasses.custom_vjp
def no_rule(x):
    return x * x


@adpasses.custom_jvp
def jvp_wrong(x):
    return math.sin(x)


@jvp_wrong.defjvp
def jvp_wrong_rule(primals, tangents):
    (x,) = primals
    (t,) = tangents
    return math.sin(x), math.cos(x) * t, 1.0  # BAD: three values


# Early returns in rules (F8): one located error each, at the first early `return`.
@adpasses.custom_vjp
def early_if(x):
    return x * x


def early_if_fwd(x):
    return x * x, x


def early_if_bwd(x, g):
    if x > 0.0:
        return (2.0 * x * g,)  # BAD: in an if
    return (-2.0 * x * g,)


early_if.defvjp(early_if_fwd, early_if_bwd)


@adpasses.custom_vjp
def early_for(x):
    return x * x


def early_for_fwd(x):
    for _ in range(2):
        return x * x, x  # BAD: in a for loop
    return x * x, x


def early_for_bwd(x, g):
    return (2.0 * x * g,)


early_for.defvjp(early_for_fwd, early_for_bwd)


@adpasses.custom_vjp
def early_while(x):
    return x * x


def early_while_fwd(x):
    return x * x, x


def early_while_bwd(x, g):
    while x > 0.0:
        return (2.0 * x * g,)  # BAD: in a while loop
    return (2.0 * x * g,)


early_while.defvjp(early_while_fwd, early_while_bwd)


@adpasses.custom_vjp
def dead_tail(x):
    return x * x


def dead_tail_fwd(x):
    return x * x, x


def dead_tail_bwd(x, g):
    return (2.0 * x * g,)  # BAD: statements follow
    y = g  # noqa: F841


dead_tail.defvjp(dead_tail_fwd, dead_tail_bwd)


@adpasses.custom_jvp
def early_jvp(x):
    return math.sin(x)


@early_jvp.defjvp
def early_jvp_rule(primals, tangents):
    (x,) = primals
    (t,) = tangents
    if x > 1.0:
        if x > 2.0:
            return math.sin(x), math.cos(x) * t  # BAD: in an if
    return math.sin(x), math.cos(x) * t


def calls(f, x):
    return f(x)


def call_two_args(x):
    return two_args(x, 2.0)


def call_with_int(x):
    return with_int(x, 3)


def call_bare(x):
    return bare(x)


def call_not_a_pair(x):
    return not_a_pair(x)


def call_array_residual(x):
    return array_residual(x)


def call_uncompilable(x):
    return uncompilable(x)


def call_no_rule(x):
    return no_rule(x)


def call_jvp_wrong(x):
    return jvp_wrong(x)


def call_early_if(x):
    return early_if(x)


def call_early_for(x):
    return early_for(x)


def call_early_while(x):
    return early_while(x)


def call_dead_tail(x):
    return dead_tail(x)


def call_early_jvp(x):
    return early_jvp(x)
