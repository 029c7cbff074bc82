"""Integer divisions whose quotient overflows: the most negative int by -1
(test_safety_int_division.py runs them in a fresh process: x86's idiv
traps on it, which killed the interpreter)."""

import numpy as np


def floordiv(a, b):
    return a // b


def mod(a, b):
    return a % b


def both_arrays(x, y):
    return np.sum(x // y) + np.sum(x % y)


def elements(x, y):
    s = 0
    for i in range(len(x)):
        s += x[i] // y[i] - x[i] % y[i]
    return s


def by_minus_one_literal(a):
    return a // -1 + a % -1
