"""Kernels of test_safety_nogil.py (its isolated cases run `python -c`,
whose functions have no source for the frontend)."""

from __future__ import annotations


def inplace_square(x):  # type: ignore[no-untyped-def]
    """A gradient whose tape (the overwritten x) is a workspace buffer;
    d/dx = 4 x**3."""
    for i in range(len(x)):
        x[i] = x[i] * x[i]
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


def inplace_square_at(x, k):  # type: ignore[no-untyped-def]
    """The same plus x[k] read after the tape is taken: a bounds error on
    demand; d/dx = 4 x**3, plus 2 x[k] at k."""
    for i in range(len(x)):
        x[i] = x[i] * x[i]
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s + x[k]
