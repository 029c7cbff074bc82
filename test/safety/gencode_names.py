"""Jitted functions named like C library, CPython, runtime and internal
symbols (test_safety_name_clash.py): each computes the function its name
suggests through the library, which used to call the function itself."""

import math

import numpy as np

import adpasses


@adpasses.jit
def atan(x):
    return math.atan(x)


@adpasses.jit
def exp2(x):
    return math.exp2(x)


@adpasses.jit
def log1p(x):
    return math.log1p(x)


@adpasses.jit
def log2(x):
    return math.log2(x)


@adpasses.jit
def tanh(x):
    return math.tanh(x)


@adpasses.jit
def malloc(n):
    z = np.zeros(n)
    z[0] = 1.5
    return z[0] + n


@adpasses.jit
def free(n):
    z = np.ones(n)
    s = 0.0
    for i in range(n):
        s += z[i]
    return s


@adpasses.jit
def printf(x):
    return x + 1.0


@adpasses.jit
def PyFloat_AsDouble(x):
    return x * 2.0


@adpasses.jit
def __adpasses_oob(x, i):
    return x[i]


@adpasses.jit
def adpasses_error_slot(x):
    return x[0] * x[1]


@adpasses.jit
def uses_them(x):
    """Calls the jitted functions above by their clashing names."""
    return atan(x) + log1p(x) + tanh(x) + printf(x) + PyFloat_AsDouble(x)
