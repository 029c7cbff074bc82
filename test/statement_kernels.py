"""Python functions using the statements of docs/frontend.md ("Statements"):
iteration over arrays, enumerate, zip, reversed, slice assignment, Python
scoping, swapped array variables. test/test_frontend_statements.py compiles
them and checks them against plain Python and finite differences."""

import math

import numpy as np


def iterate_elements(x):
    s = 0.0
    for v in x:
        s += v * v
    return s


def iterate_rows(M, w):
    s = 0.0
    for row in M:
        t = 0.0
        for j in range(len(w)):
            t += row[j] * w[j]
        s += math.tanh(t)
    return s


def enumerate_weighted(x):
    s = 0.0
    for i, v in enumerate(x):
        s += (i + 1) * v * v
    return s


def enumerate_start(x):
    s = 0.0
    for i, v in enumerate(x, 2):
        s += i * math.sin(v)
    return s


def zip_dot(x, y):
    s = 0.0
    for a, b in zip(x, y):  # the shorter length
        s += a * b
    return s


def enumerate_zip(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        s += i * a * b + a
    return s


def zip_range_rows(M, y):
    s = 0.0
    for k, row, b in zip(range(1, 10, 2), M, y):
        s += k * row[0] * b + row[1]
    return s


def reversed_recurrence(x):
    s = 0.0
    for i in reversed(range(len(x))):
        s = s * 0.5 + x[i]
    return s


def reversed_array(x):
    s = 0.0
    for v in reversed(x):
        s = s * 0.5 + v
    return s


def reversed_range_steps(x):
    s = 0.0
    for i in reversed(range(1, len(x), 3)):
        s = s * 0.7 + x[i] * i
    return s


def iterate_view(x):
    s = 0.0
    for v in x[1::2]:
        s += math.exp(v)
    for i, v in enumerate(x[::-1]):
        s += i * v
    return s


def iterate_with_break(x):
    s = 0.0
    for v in x:
        if v < -0.5:
            break
        s += v * v
    return s
