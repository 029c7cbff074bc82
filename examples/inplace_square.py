"""Mutation: square an array in place, then sum it.

The reverse sweep needs the values x had before they were overwritten; the
alias analysis proves the load of x[i] is clobbered by the store to x[i],
so exactly n doubles are taped. `x[i] = x[i] + 1` instead needs nothing.
Also shows the same function differentiated Enzyme-style with autodiff.
"""

import numpy as np

import adpasses


@adpasses.jit
def square_then_sum(x):
    for i in range(len(x)):
        x[i] = x[i] * x[i]
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


@adpasses.jit
def shift_then_sum(x):
    for i in range(len(x)):
        x[i] = x[i] + 1.0
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


def main() -> None:
    x = np.arange(1.0, 6.0)
    grad = adpasses.grad(square_then_sum)(x.copy())
    print("x           =", x)
    print("d/dx sum(x^2) after squaring in place =", grad, "(expected 2x)")

    report = adpasses.cache_report(square_then_sum, x.copy())
    print()
    print(report)
    print(f"-> {report.taped_bytes} bytes taped for n = {len(x)}: the overwritten x")

    report = adpasses.cache_report(shift_then_sum, x.copy())
    print()
    print(report)
    print(f"-> {report.taped_bytes} bytes taped: x + 1 is linear, its old value is not needed")

    # Enzyme style: the shadow accumulates, nothing is allocated for it.
    dx = np.zeros_like(x)
    work = x.copy()
    derivs, value = adpasses.autodiff(square_then_sum, adpasses.Duplicated(work, dx), return_primal=True)
    print()
    print("autodiff: value =", value, " dx =", dx, " x afterwards =", work)


if __name__ == "__main__":
    main()
