"""Functions in the language adpasses compiles, used by test_frontend.py.

Each is plain Python: the tests run it as Python (the oracle) and compiled.
"""

import math

import numpy as np

SCALE = 2.5  # a global number, frozen at compile time
COEFFS = (0.5, -1.25, 2.0)


def dot(x, y):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]
    return s


def strided_diff(x):
    s = 0.0
    for i in range(0, len(x) - 1, 2):
        d = x[i + 1] - x[i]
        s += d * d
    return s


def energy(x):
    rho = 0.0
    for i in range(x.shape[0]):
        rho += math.exp(-3.0 * (x[i] + 1.0))
    return rho**2 + rho**3 + rho**4 / 4


def small3(v, w):
    # a small function of a 3-vector and a 2-vector with constant coefficients
    a = 0.5 * v[0] * v[1] - 1.25 * v[2] * w[0]
    b = math.sin(v[0] + 2.0 * w[1]) + 3.0 * v[1] * v[1]
    return a * b + math.exp(0.1 * v[2]) * w[1]


def inplace_square(x):
    for i in range(len(x)):
        x[i] = x[i] * x[i]
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


def transposed_quad(A, v):
    B = A.T
    s = 0.0
    for i in range(B.shape[0]):
        t = 0.0
        for j in range(B.shape[1]):
            t += B[i, j] * v[j]
        s += math.tanh(t) ** 2
    return s


def even_odd(x):
    a = x[::2]
    b = x[1:]
    s = 0.0
    for i in range(len(a)):
        s += a[i] * b[i] + b[i]
    return s


def newton_sqrt(a):
    x = a
    dx = a
    while abs(dx) > 1e-12:
        xn = 0.5 * (x + a / x)
        dx = xn - x
        x = xn
    return x


def branches(x, w):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.3:
            s += math.exp(x[i]) * w
        elif x[i] < -0.3:
            s -= x[i] * x[i]
        else:
            s += w * w * x[i]
    return s


def product(x, w):
    p = 1.0
    for i in range(len(x)):
        p *= x[i] * w
    return p


def helper(a, b):
    return a * b + math.sin(a)


def uses_helper(x):
    s = 0.0
    for i in range(len(x)):
        s += helper(x[i], SCALE)
    return s


def scratch(x):
    t = np.zeros(3)
    s = 0.0
    for i in range(len(x)):
        for j in range(3):
            t[j] = math.sin(x[i] * (j + 1))
        for j in range(3):
            s += t[j] ** 2
    return s


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


def softmax_xent(logits, label):
    m = logits[0]
    for i in range(1, len(logits)):
        m = max(m, logits[i])
    z = 0.0
    for i in range(len(logits)):
        z += math.exp(logits[i] - m)
    return math.log(z) + m - logits[label]


def float32_sum(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i] * 0.5
    return s


def reverse_range(x):
    s = 0.0
    k = 1.0
    for i in range(len(x) - 1, -1, -1):
        s += k * x[i]
        k = k * 0.5
    return s


def min_max_abs(x):
    s = 0.0
    for i in range(len(x)):
        s += max(x[i], 0.1) + min(x[i], -0.2, 0.3 * x[i]) + abs(x[i] - 0.05)
    return s


def conditional_expr(x, t):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * t if x[i] > 0 else -x[i] * x[i]
    return s


def reversed_view(x):
    r = x[::-1]
    s = 0.0
    for i in range(len(r)):
        s += r[i] * (i + 1)
    return s


def matvec_rows(M, v):
    s = 0.0
    for i in range(M.shape[0]):
        row = M[i]
        t = 0.0
        for j in range(len(row)):
            t += row[j] * v[j]
        s += t * t
    return s


def column_view(M):
    s = 0.0
    for j in range(M.shape[1]):
        c = M[:, j]
        for i in range(len(c)):
            s += c[i] * (j + 1) * c[0]
    return s


def ones_local(x):
    w = np.ones(len(x))
    s = 0.0
    for i in range(len(x)):
        w[i] = w[i] + x[i]
        s += w[i] * w[i]
    return s


def while_counter(x):
    i = 0
    s = 0.0
    while i < len(x):
        s += math.sqrt(x[i] * x[i] + 1.0)
        i += 1
    return s


def swap(a, b):
    for k in range(3):
        a, b = b, a * b + 0.5
    return a + 2 * b


def int_index_math(x):
    n = len(x)
    s = 0.0
    for i in range(2 * n):
        j = (i * 3) % n
        k = i // 2
        s += x[j] * x[k % n]
    return s


def float_power(x, p):
    s = 0.0
    for i in range(len(x)):
        s += x[i] ** p + x[i] ** 3
    return s


def math_soup(x):
    s = 0.0
    for i in range(len(x)):
        v = x[i]
        s += math.sin(v) * math.cos(v) + math.tanh(v) + math.log1p(v * v)
        s += math.expm1(0.3 * v) + math.atan(v) + math.sqrt(v * v + 2.0) + math.erf(v)
    return s


def atan2_angles(x, y):
    s = 0.0
    for i in range(len(x)):
        s += math.atan2(y[i], x[i] + 2.0)
    return s


def early_return(x):
    if x > 1.0:
        return x * x
    return math.sin(x)


def nested_if(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0:
            if x[i] > 0.5:
                s += x[i] * 3.0
            else:
                s += x[i] * x[i]
        else:
            s -= x[i]
    return s


def short_circuit(x, n):
    s = 0.0
    for i in range(n + 2):
        if i < len(x) and x[i] > 0:
            s += x[i] * x[i]
    return s


def chained_compare(x):
    s = 0.0
    for i in range(len(x)):
        if -0.5 < x[i] < 0.5:
            s += x[i] * 2.0
        else:
            s += x[i] ** 2
    return s


def int_power_literal(x):
    s = 0.0
    n = len(x)
    for i in range(n):
        s += x[i] * (i ** 2 + n ** 3)
    return s


def norm(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return math.sqrt(s)


def logsumexp(x):
    m = x[0]
    for i in range(len(x)):
        m = max(m, x[i])
    s = 0.0
    for i in range(len(x)):
        s += math.exp(x[i] - m)
    return m + math.log(s)


def horner(c, t):
    r = 0.0
    for i in range(len(c) - 1, -1, -1):
        r = r * t + c[i]
    return r


def sum3d(T):
    s = 0.0
    for i in range(T.shape[0]):
        for j in range(T.shape[1]):
            for k in range(T.shape[2]):
                s += T[i, j, k] * T[i, j, k] * (i + j + k + 1)
    return s


def closure_factory(scale):
    def scaled(x):
        s = 0.0
        for i in range(len(x)):
            s += scale * x[i] * x[i]
        return s
    return scaled


closure_scaled = closure_factory(1.5)


def numpy_names(x):
    s = 0.0
    for i in range(len(x)):
        s += np.exp(x[i]) * np.log(x[i] + 2.0) + np.sqrt(np.abs(x[i]) + 1.0) + np.pi
    return s


def conversions(x):
    s = 0.0
    for i in range(len(x)):
        j = int(float(i) * 0.5)
        s += x[j] * float(i)
    return s


def negative_index(x):
    return x[-1] * x[0] + x[-2] ** 2


def negative_slice(x):
    tail = x[-3:]
    s = 0.0
    for i in range(len(tail)):
        s += tail[i] * tail[i] * (i + 1)
    return s


def mlp_loss(X, W1, W2):
    # a 2-layer MLP written as loops: tanh hidden layer, squared output
    h = np.zeros(W1.shape[1])
    loss = 0.0
    for b in range(X.shape[0]):
        for j in range(W1.shape[1]):
            t = 0.0
            for i in range(X.shape[1]):
                t += X[b, i] * W1[i, j]
            h[j] = math.tanh(t)
        o = 0.0
        for j in range(W1.shape[1]):
            o += h[j] * W2[j]
        loss += o * o
    return loss / X.shape[0]


def global_tuple_coeffs(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i] * SCALE
    return s


def loop_with_local_array(x):
    s = 0.0
    for i in range(len(x)):
        tmp = np.zeros(2)
        tmp[0] = x[i]
        tmp[1] = x[i] * x[i]
        s += tmp[0] * tmp[1]
    return s


def writes_output(x, out):
    for i in range(len(x)):
        out[i] = math.sin(x[i]) * 2.0


def sum_until_negative(x):
    # break: a for loop with break is compiled as scf.while
    s = 0.0
    for i in range(len(x)):
        if x[i] < -0.6:
            break
        s += x[i] * x[i]
    return s


def skip_small(x):
    s = 0.0
    for i in range(len(x)):
        if abs(x[i]) < 0.3:
            continue
        s += math.sin(x[i]) * x[i]
    return s


def break_and_continue_reversed(x):
    s = 0.0
    for i in range(len(x) - 1, -1, -2):
        if x[i] < -0.8:
            break
        elif x[i] < 0:
            continue
        s = s * 1.5 + x[i]
        if s > 3.0:
            break
    return s


def first_above(x, t):
    # return inside a loop
    for i in range(len(x)):
        if x[i] > t:
            return x[i] * t
    return t * t


def find_in_matrix(M, t):
    for i in range(M.shape[0]):
        for j in range(M.shape[1]):
            if M[i, j] > t:
                return M[i, j] * (i + 1) + j
    return 0.0


def for_else(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.9:
            break
        s += x[i]
    else:
        s = s * s
    return s


def while_break_true(x):
    i = 0
    s = 0.0
    while True:
        if i >= len(x):
            break
        s += math.exp(x[i])
        i += 1
        if s > 4.0:
            break
    return s


def elif_returns(x, y):
    if x > 1.0:
        return x * y
    elif x < -1.0:
        return -x
    t = x * x
    if y > 0:
        t = t + y
    return t


def shape_unpacking(M):
    n, m = M.shape
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += M[i, j] * M[i, j] * (j - i)
    return s


def int_then_float(x):
    s = 0  # an int that the loop turns into a float
    for i in range(len(x)):
        s = s + x[i] * x[i]
    return s


def and_or_values(x, t):
    # `and`/`or` return operands, as in Python
    s = 0.0
    for i in range(len(x)):
        s += (x[i] > t and x[i] * x[i]) or t * x[i]
    return s


def guarded_chain(x, i):
    # Python stops a chained comparison at the first false link: x[i] is
    # never read when i is out of range
    return 1.0 if 0 <= i < len(x) < x[i] + 10 else 0.0


def inplace_square_mirrored(x):
    """The in-place square whose reading loop pairs x[i] with x[n-1-i]: the
    loops cannot be fused (iteration i reads what the first loop writes at
    n-1-i), so the overwritten x is taped (n values)."""
    n = len(x)
    for i in range(n):
        x[i] = x[i] * x[i]
    s = 0.0
    for i in range(n):
        s += x[i] * x[n - 1 - i]
    return s
