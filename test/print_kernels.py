"""Kernels that print (test_frontend_print.py); plain Python is the oracle
for the text."""

import numpy as np


def report(x, a, M):
    print("loss", x)
    print(a, x * 2, 3, True, -0.0, 1e16, 1 / 3, sep=", ", end=";\n")
    print(f"val={x:.3f} r={x!r} n={len(a)} {x:>10.2e}|")
    print(a[::2])
    print(M)
    print(M.T, M[1])
    print()
    s = 0.0
    for i in range(len(a)):
        s += a[i] * x
        if i == 1:
            print("step", i, s)
    print("s", s)
    return s


def elements(x, k):
    print(x[0], x, k, k > 1)
    return x[0] * x[1]


def elements_2d(x, k):
    print(x[0, 0], x, x[1], k)
    return x[0, 0] * x[1, 1]


def callee_prints(t):
    print("callee", t)
    return t * t


def calls_a_printing_function(x):
    y = callee_prints(x) + callee_prints(2.0 * x)
    print("caller", y)
    return y


def formats_fields(x32, x, k):
    """f-string fields are format(v, spec): for float32 values f"{v}" is the
    widened float's text (0.10000000149011612) while print(v) is str (0.1)."""
    y = x32[0] * x32[1]
    print(f"{x32[0]}", x32[0], f"{y}", y)
    print(f"a={x32[0]} b={x32[0]:.3f} c={x32[0]!r} d={x32[1] * 2.0} e={x32[1]!s}")
    print(f"{x[0]} {k} {k > 1} {x32} {x} {k!r}")
    return x[0] * y


def numpy_reprs(x, k, b, a):
    """{v!r} of numpy scalars (array elements, arithmetic with them) is the
    numpy scalar's repr, np.float64(0.1); of Python numbers, 0.1."""
    y = x[0]
    print(f"{y!r} {0.1!r} {a!r} {y * 2.0!r} {-y!r} {abs(y)!r} {k[0]!r} {k[0] + 1!r} {k[0] / 2!r}")
    print(f"{b[0]!r} {y + k[1]!r} {len(x)!r} {1.5 * a!r} {y!r:>20} {k[1]!r:>12}|")
    s = 0.0
    for i in range(len(x)):
        s += x[i]
        print(f"{s!r}")
    return y


def element_times_two(x, i):
    return x[i] * 2.0


def plus_one(k):
    return k[0] + 1


def scaled(t):
    return t * 2.0


def followed_reprs(x, k, t):
    """Issue 16: numpy scalars followed through loops (carried values), out
    of calls, np.int32 elements (their arithmetic wraps as numpy's), and
    the builtins repr() and str() as print arguments and f-string fields."""
    s = 0.0
    u = x[0]
    w = 1.0
    j = 0
    for i in range(len(x)):
        s = s + x[i]
        u = u * 1.5
        w = w * 2.0
    while j < 2:
        s += 1.0
        j += 1
    r, q, m = element_times_two(x, 1), scaled(t), plus_one(k)
    p = k[0] * k[1]
    c = 0
    for i in range(len(k)):
        c += k[i]
    print(f"{s!r} {u!r} {w!r} {j!r} {r!r} {q!r} {m!r}")
    print(f"{k[0]!r} {p!r} {-k[1]!r} {abs(k[0])!r} {k[0] // 3!r} {k[1] + 1!r} {c!r} {p:>14}|")
    print(repr(s), str(s), repr(t), repr(p), str(p), repr(x[1]), repr(k), repr(x[0] > 0), repr(t > 0),
          f"{k[0] < 0!r} {x[1] <= x[0]!r}")
    print(f"{repr(u)} {str(k[1])} {repr(p):>20}|{repr(t)}")
    if t > 1.0:
        y, z, v = x[0], k[1] * 3, 1.0
    else:
        y, z, v = x[1], k[0], x[0]
    print(f"{y!r} {z!r} {v!r}")
    return s + u * t
