"""A user module that calls_kernels.py reaches through its name
(`import calls_helpers; calls_helpers.soft(x)`)."""

import math

import numpy as np  # noqa: F401  (read as `calls_helpers.np` by a kernel)

import adpasses

SCALE = 3.0
cube = lambda t: t * t * t  # noqa: E731  (a global lambda, compiled like a def)


def soft(x, beta=1.0):
    return math.log1p(math.exp(beta * x)) / beta


@adpasses.jit
def jit_soft(x):
    return soft(x, beta=2.0)
