"""Kernels of test_parallel_report.py (a module of their own, so the
frontend reads their source and the tests can name their lines)."""

import adpasses
from adpasses import prange


@adpasses.jit
def double_into(x, y):
    for i in prange(len(x)):
        y[i] = 2.0 * x[i]


@adpasses.jit
def weighted_sum(x, w):
    s = 0.0
    for i in prange(len(x)):
        s += w[i] * x[i] * x[i]
    return s


@adpasses.jit
def shifted(x):
    for i in prange(1, len(x)):
        x[i] = x[i] * x[i - 1]


@adpasses.jit
def scattered(x, idx):
    for i in prange(len(idx)):
        j = idx[i]
        x[j] = x[i] * 2.0


@adpasses.jit
def product(x):
    p = 1.0
    for i in prange(len(x)):
        p *= x[i]
    return p


@adpasses.jit
def shared_slot(x, acc):
    for i in prange(len(x)):
        acc[0] = acc[0] * 0.5 + x[i]


def auto_two_loops(x, y):
    s = 0.0
    for i in range(len(x)):
        y[i] = x[i] * x[i]
    for i in range(1, len(x)):
        x[i] = x[i] + x[i - 1]
    for i in range(len(x)):
        s += y[i] * x[i]
    return s


def line_of(fn, text):
    """The line of `fn`'s source that contains `text`."""
    import inspect

    lines, first = inspect.getsourcelines(fn.py_func if hasattr(fn, "py_func") else fn)
    return first + next(k for k, line in enumerate(lines) if text in line)
