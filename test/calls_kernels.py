"""Kernels calling other compiled functions with keywords, omitted and
None defaults, through a module, through lambdas (test_frontend_calls.py).
Each is also run as plain Python, the oracle."""

import math

import numpy as np

import calls_helpers

square = lambda t: t * t  # noqa: E731
scale_by = lambda a, b=2.0: a * b  # noqa: E731


def energy(x, gamma=2.0, radius=None):
    s = 0.0
    for i in range(len(x)):
        s += gamma * x[i] * x[i]
    if radius is None:
        return s
    return s / radius


def keywords_and_defaults(x, g):
    return energy(x, gamma=g) + energy(x) + energy(x, 0.5) + energy(gamma=g, x=x[1:])


def none_defaults(x, g):
    return energy(x, radius=g * g) + energy(x) + energy(x, g, None)


def shifted(v, r=None, offset=None):
    r2 = 1.0 if r is None else r * r
    if r is not None and r > 0:
        v = v * r
    if not (offset is None):
        v = v + offset
    elif r is None or r < 0:
        v = v - 1.0
    return v / r2


def none_in_conditions(x, g):
    return shifted(g) + shifted(g, r=x[0]) + shifted(g, None, x[1]) + shifted(x[2], offset=g)


def apply_to_elements(fn, x, weight=None):
    s = 0.0
    for i in range(len(x)):
        s += fn(x[i]) if weight is None else weight * fn(x[i])
    return s


def functions_as_arguments(x, g):
    return apply_to_elements(math.sin, x) + apply_to_elements(square, x, g) + apply_to_elements(energy_1, x)


def energy_1(t):
    return t * t * t


def through_module(x, g):
    return (calls_helpers.soft(g, beta=0.5) * calls_helpers.SCALE + calls_helpers.cube(x[0])
            + calls_helpers.jit_soft(x[1]) + calls_helpers.np.sin(g) + calls_helpers.math.cos(x[2]))


def lambdas(x, g):
    local = lambda t, k=3.0: k * t * square(t)  # noqa: E731
    shift = lambda t: t + g  # noqa: E731  (reads g when called)
    s = square(g) + scale_by(g) + scale_by(g, b=x[1]) + local(x[2]) + local(k=g, t=x[0])
    for i in range(len(x)):
        s += shift(x[i]) * local(x[i], g)
    return s


def recursive_lambda(x):
    f = lambda t: t if t < 1.0 else f(t / 2.0)  # noqa: E731  # ERROR: recursive_lambda
    return f(x)


def passes_local_lambda(x):
    f = lambda t: t * x  # noqa: E731
    return apply_to_elements(f, np.ones(2))


def is_between_numbers(x, y):
    return 1.0 if x is y else 0.0  # ERROR: is_between_numbers


def none_used_as_number(x, r=None):
    return x * r  # ERROR: none_used_as_number


def calls_none_used_as_number(x):
    return none_used_as_number(x)


def fill(out, v=None):
    if v is None:
        return None
    for i in range(len(out)):
        out[i] = v
    return None


def calls_fill(x, g):
    fill(x)
    fill(x, g * g)
    return x[0] + x[2]
