"""The kernel of examples/dask_gradients.py: a module of its own, because
workers find a jitted function by importing its module (docs/deployment.md,
"Pickling")."""

import math

import numpy as np

import adpasses


@adpasses.jit(cache=True)
def loss(w, x, y):
    """Sum over the rows of x of (tanh(x_i . w) - y_i)^2."""
    s = 0.0
    for i in range(x.shape[0]):
        p = 0.0
        for j in range(x.shape[1]):
            p += w[j] * x[i, j]
        r = math.tanh(p) - y[i]
        s += r * r
    return s


def loss_reference(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    return float(np.sum((np.tanh(x @ w) - y) ** 2))


def add(a, b):  # type: ignore[no-untyped-def]
    """Reduce two (value, gradient) pairs."""
    return a[0] + b[0], a[1] + b[1]
