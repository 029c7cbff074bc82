"""Central finite differences of plain Python functions: the oracle of the
frontend and API tests (it never goes through adpasses).

Step: h = 1e-6 * max(1, |x|) per input element. With double precision the
truncation error is O(h^2 f''') and the rounding error O(eps |f| / h), both
far below 1e-6 relative for the smooth test functions, so gradients are
compared with RTOL = 1e-6 relative to the largest component and ATOL = 1e-8
(`assert_matches`); float32 inputs use FLOAT32_RTOL / FLOAT32_ATOL (the
compiled gradient rounds to float32, the oracle runs in float64).
"""

from __future__ import annotations

import numpy as np

RTOL, ATOL = 1e-6, 1e-8
FLOAT32_RTOL, FLOAT32_ATOL = 1e-4, 1e-5


def copy_args(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def finite_differences(f, args, argnums):
    """d f(*args) / d args[n] for n in argnums, by central differences in
    float64 (inputs are copied: f may mutate them)."""
    grads = []
    for n in argnums:
        a = args[n]
        if isinstance(a, np.ndarray):
            base = [x.astype(np.float64) if isinstance(x, np.ndarray) and x.dtype.kind == "f" else x
                    for x in args]
            g = np.zeros(a.shape)
            for idx in np.ndindex(a.shape):
                h = 1e-6 * max(1.0, abs(float(base[n][idx])))
                plus, minus = copy_args(base), copy_args(base)
                plus[n][idx] += h
                minus[n][idx] -= h
                g[idx] = (f(*plus) - f(*minus)) / (2 * h)
            grads.append(g)
        else:
            h = 1e-6 * max(1.0, abs(a))
            plus, minus = copy_args(args), copy_args(args)
            plus[n] = a + h
            minus[n] = a - h
            grads.append((f(*plus) - f(*minus)) / (2 * h))
    return grads


def central_fd(f, args, k):
    """d f(*args) / d args[k] (`finite_differences` of one argument)."""
    return finite_differences(f, list(args), (k,))[0]


def assert_matches(got, expected, *, float32: bool = False, what: str = "") -> None:
    """|got - expected| <= ATOL + RTOL * max(1, max |expected|), elementwise."""
    rtol, atol = (FLOAT32_RTOL, FLOAT32_ATOL) if float32 else (RTOL, ATOL)
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    err = float(np.max(np.abs(got - expected))) if expected.size else 0.0
    assert np.all(np.isfinite(got)) and err <= atol + rtol * scale, (
        f"{what}: gradient differs from finite differences by {err:.3e}\n"
        f"got      = {got}\nexpected = {expected}")
