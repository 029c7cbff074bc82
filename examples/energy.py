"""The README's main example: the gradient of an energy written as a loop.

    rho = sum_i exp(-3 (x_i + 1)),   E = rho^2 + rho^3 + rho^4 / 4

Prints E, its gradient (checked against central finite differences), what
the compiler decided to keep for the reverse sweep (the cache report), and
how long a gradient takes after the first (compiling) call.
"""

import math
import time

import numpy as np

import adpasses


@adpasses.jit
def energy(x):
    rho = 0.0
    for i in range(len(x)):
        rho += math.exp(-3.0 * (x[i] + 1.0))
    return rho**2 + rho**3 + rho**4 / 4


def main() -> None:
    x = np.linspace(-0.5, 0.5, 8)
    start = time.perf_counter()
    value, grad = adpasses.value_and_grad(energy)(x)
    compile_s = time.perf_counter() - start
    print(f"E(x) = {value:.12g}")
    print("dE/dx =", np.array2string(grad, precision=6))

    h = 1e-6
    fd = np.array([(energy(x + h * e) - energy(x - h * e)) / (2 * h) for e in np.eye(len(x))])
    print(f"max |grad - finite differences| = {np.max(np.abs(grad - fd)):.2e}")

    print()
    print(adpasses.cache_report(energy, x))

    g = adpasses.grad(energy)
    g(x)  # compiles the gradient without the value (value_and_grad compiled another)
    n = 20000
    start = time.perf_counter()
    for _ in range(n):
        g(x)
    per_call = (time.perf_counter() - start) / n
    print()
    print(f"first call (compile + run): {compile_s * 1e3:.0f} ms; then {per_call * 1e6:.2f} us per gradient")


if __name__ == "__main__":
    main()
