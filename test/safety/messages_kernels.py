"""Functions for test_safety_messages.py: each error's message is checked
against the line marked `# ERROR` here (compiled functions must live in a
file). Not jitted at import: each test wraps what it needs."""

import math
import os

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


def uses_input(x):
    input(x)  # ERROR: uses_input
    return x


def print_value(x):
    y = print(x)  # print returns None
    return x + y  # ERROR: print_value


def sign_of_number(x):
    return np.sign(x)  # ERROR: sign_of_number


def sum_of_array(x):
    return np.median(x)  # ERROR: sum_of_array


def clip_number(x):
    return np.clip(x, 0.0, 1.0)  # ERROR: clip_number


def unknown_numpy_on_number(x):
    return np.spacing(x)  # ERROR: unknown_numpy_on_number


def full_array(n):
    a = np.full_like(n, 2.0)  # ERROR: full_array
    return a[0]


def arange_array(n):
    a = np.linspace(0.0, 1.0, n)  # ERROR: arange_array
    return a[0]


def numpy_submodule(x):
    return np.random.rand() * x  # ERROR: numpy_submodule


def helper_through_module(x):
    return messages_helpers.double(x)  # works: a user's module


def jit_helper_through_module(x):
    return messages_helpers.plus_one(x)  # works: a user's module


def number_through_module(x):
    return messages_helpers.SCALE * x  # works: a user's module


def list_through_module(x):
    return messages_helpers.TABLE[0] * x  # ERROR: list_through_module


def builtin_through_module(x):
    return os.getpid() * x  # ERROR: builtin_through_module


def module_through_module(x):
    return messages_helpers.np.sin(x)  # works: a user's module


def too_few_for_callee(x):
    return two(x)  # ERROR: too_few_for_callee


def too_many_for_callee(x):
    return two(x, x, x)  # ERROR: too_many_for_callee


def unexpected_keyword_for_callee(x):
    return two(x, c=x)  # ERROR: unexpected_keyword_for_callee


def duplicate_for_callee(x):
    return two(x, a=x)  # ERROR: duplicate_for_callee


def keywords_for_callee(x):
    return two(b=x, a=2.0 * x)


def scale(x, factor=3.0, offset=1):
    return factor * x + offset


def defaults_for_callee(x):
    return scale(x) + scale(x, offset=2) + scale(x, 0.5)


def tuple_for_callee(x):
    return two((x, x), x)  # ERROR: tuple_for_callee


def sorted_numbers(x):
    return sorted(x)  # ERROR: sorted_numbers


def open_file(x):
    f = open("data.txt")  # ERROR: open_file
    return x


def keyword_for_math(x):
    return math.copysign(1.0, x) + math.exp(x=x)  # ERROR: keyword_for_math


def invert_bits(n):
    return ~n  # ERROR: invert_bits


def assign_attribute(x):
    x.shape = (3,)  # ERROR: assign_attribute
    return 0.0


def update_attribute(x):
    x.size += 1  # ERROR: update_attribute
    return 0.0


def uses_del(x):
    y = x
    del y  # ERROR: uses_del
    return x
