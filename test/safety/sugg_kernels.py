"""The rewrites the compiler's messages suggest (test_safety_messages.py
checks that they compile and agree with numpy), and the builtins that
replaced earlier suggestions (math.isnan, np.isinf, round)."""

import math

import numpy as np

import adpasses
from messages_helpers import double


@adpasses.jit
def sign_int(x):
    return (x > 0) - (x < 0)


@adpasses.jit
def sign_float(x):
    return math.copysign(1.0, x)


@adpasses.jit
def clip(x):
    return min(max(x, 0.0), 1.0)


@adpasses.jit
def isnan(x):
    return math.isnan(x)


@adpasses.jit
def isinf(x):
    return np.isinf(x)


@adpasses.jit
def rounded(x):
    return round(x)


@adpasses.jit
def total(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


@adpasses.jit
def via_import(x):
    return double(x)


@adpasses.jit
def carried(x):
    s = 0.5
    for i in range(len(x)):
        u = s + x[i]
        s = u * u
    return s
