"""Newton-CG with adpasses' gradient and Hessian-vector products
(scipy.optimize.minimize(method="Newton-CG", jac=..., hessp=...)), and the
Hessian of the 3x3 neo-Hookean strain energy.

    python examples/newton_cg.py          # needs scipy for the first part
"""

import math

import numpy as np

import adpasses


@adpasses.jit
def rosenbrock(x):
    s = 0.0
    for i in range(len(x) - 1):
        a = x[i + 1] - x[i] * x[i]
        b = 1.0 - x[i]
        s += 100.0 * a * a + b * b
    return s


@adpasses.jit
def strain_energy(f):
    """W(F) = mu/2 (I1 - 3) - mu ln J + lambda/2 (ln J)^2, F = f.reshape(3, 3)."""
    mu, lam = 1.0, 10.0
    J = (f[0] * (f[4] * f[8] - f[5] * f[7]) - f[1] * (f[3] * f[8] - f[5] * f[6])
         + f[2] * (f[3] * f[7] - f[4] * f[6]))
    i1 = 0.0
    for k in range(9):
        i1 += f[k] * f[k]
    lnj = math.log(J)
    return 0.5 * mu * (i1 - 3.0) - mu * lnj + 0.5 * lam * lnj * lnj


def newton_cg(x0: np.ndarray):  # type: ignore[no-untyped-def]
    from scipy.optimize import minimize

    hvp = adpasses.hvp(rosenbrock)
    return minimize(rosenbrock, x0, method="Newton-CG", jac=adpasses.grad(rosenbrock),
                    hessp=lambda x, p: hvp(x, p), options={"xtol": 1e-10})


def main() -> None:
    F = np.eye(3).reshape(9) + 0.1 * np.random.default_rng(0).uniform(-1, 1, 9)
    H = adpasses.hessian(strain_energy)(F)      # (9, 9): forward over reverse, one sweep of width 9
    print("Hessian of W at F: symmetric", np.allclose(H, H.T), "eigenvalues > 0:",
          bool(np.all(np.linalg.eigvalsh(H) > 0)))
    try:
        result = newton_cg(np.full(20, -1.0))
    except ImportError:
        print("scipy is not installed: pip install scipy for the Newton-CG part")
        return
    print(f"Newton-CG on a 20-d Rosenbrock: {result.nit} iterations, {result.nhev} Hessian-vector "
          f"products, x = 1 to {np.max(np.abs(result.x - 1.0)):.1e}")


if __name__ == "__main__":
    main()
