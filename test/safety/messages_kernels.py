"""Functions for test_safety_messages.py: each error's message is checked
against the line marked `# ERROR` here (compiled functions must live in a
file). Not jitted at import: each test wraps what it needs."""

import math

import numpy as np

import adpasses
import messages_helpers
from messages_helpers import two


@adpasses.jit
def read_at(x, i):
    return x[i]  # ERROR: read_at


@adpasses.jit
def read_literal(x):
    return x[-6]  # ERROR: read_literal


@adpasses.jit
def write_at(x, i):
    x[i] = 1.0  # ERROR: write_at
    return 0.0


@adpasses.jit
def read_2d(M, i, j):
    return M[i, j]  # ERROR: read_2d


@adpasses.jit
def row_first(M, i):
    r = M[i]  # ERROR: row_first
    return r[0]


@adpasses.jit
def reversed_row_first(M, i):
    r = M[i, ::-1]  # ERROR: reversed_row_first
    return r[0]


@adpasses.jit
def square_at(x, i):
    return x[i] * x[i]  # ERROR: square_at


@adpasses.jit
def sumsq(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


@adpasses.jit
def weighted(x, scale=2.0):
    return scale * x[0]


def uses_print(x):
    print(x)  # ERROR: uses_print
    return x


def print_value(x):
    y = print(x)  # ERROR: print_value
    return x + y
