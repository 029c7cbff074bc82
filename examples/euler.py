"""An explicit Euler integration with in-place state, differentiated with
respect to the initial state and the time step.

    du_i/dt = -u_i^3 + 0.1 u_{i-1}

The state is overwritten every step, so the reverse sweep needs one state
per step: the cache report shows n doubles per step taped, and nothing more.
"""

import numpy as np

import adpasses


@adpasses.jit
def euler(u, steps, dt):
    n = len(u)
    du = np.zeros(n)
    for t in range(steps):
        for i in range(1, n):
            du[i] = -u[i] ** 3 + 0.1 * u[i - 1]
        for i in range(1, n):
            u[i] = u[i] + dt * du[i]
    s = 0.0
    for i in range(n):
        s += u[i] * u[i]
    return s


def main() -> None:
    n, steps, dt = 6, 50, 0.01
    u0 = np.linspace(0.2, 1.0, n)
    value, (du0, ddt) = adpasses.value_and_grad(euler, (0, 2))(u0.copy(), steps, dt)
    print(f"|u(T)|^2 = {value:.10g}")
    print("d/du0 =", np.array2string(du0, precision=6))
    print(f"d/ddt = {ddt:.6g}")

    h = 1e-6
    fd = (euler(u0.copy(), steps, dt + h) - euler(u0.copy(), steps, dt - h)) / (2 * h)
    print(f"finite differences d/ddt = {fd:.6g}")

    print()
    report = adpasses.cache_report(euler, u0.copy(), steps, dt)
    print(report)
    print(f"-> {report.taped_bytes} bytes = {steps} steps x {n - 1} states x 8 bytes (d/du0)")
    both = adpasses.cache_report(euler, u0.copy(), steps, dt, argnums=(0, 2))
    print(f"-> {both.taped_bytes} bytes for d/du0 and d/ddt: dt * du[i] also needs du per step")


if __name__ == "__main__":
    main()
