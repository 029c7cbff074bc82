"""Kernels of test_strided_shadows.py (a module of their own: the frontend
reads their source)."""

import math

import numpy as np


def row_broadcast(X):
    """X[i, :] * X[i, :]: a broadcast view (reinterpret_cast) of each row."""
    s = 0.0
    for i in range(X.shape[0]):
        r = np.sum(X[i, :] * X[i, :])
        s += math.sin(r)
    return s


def transposed(X):
    """X.T: a reinterpret_cast with the strides swapped."""
    Y = X.T
    s = 0.0
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            s += Y[i, j] * Y[i, j] * (i + 1.0)
    return s


def reversed_rows(X):
    """X[:, ::-1]: a reinterpret_cast whose offset is computed from the strides."""
    Y = X[:, ::-1]
    s = 0.0
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            s += math.sin(Y[i, j]) * (j + 1.0)
    return s
