"""A module that messages_kernels.py imports, to check the messages about
calls into other modules (`import messages_helpers; messages_helpers.f(x)`:
functions and numbers compile, other objects are errors)."""

import numpy as np  # noqa: F401  (read as `messages_helpers.np` by a kernel: a module through a module)

import adpasses

SCALE = 3.0
TABLE = [1.0, 2.0]  # not readable by compiled code: a list


def double(x):
    return x * 2.0


@adpasses.jit
def plus_one(x):
    return x + 1.0


def two(a, b):  # DEF: two
    return a + b
