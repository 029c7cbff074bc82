"""Python functions using the statements of docs/frontend.md ("Statements"):
iteration over arrays, enumerate, zip, reversed, slice assignment, Python
scoping, swapped array variables. test/test_frontend_statements.py compiles
them and checks them against plain Python and finite differences."""

import math

import numpy as np


def iterate_elements(x):
    s = 0.0
    for v in x:
        s += v * v
    return s


def iterate_rows(M, w):
    s = 0.0
    for row in M:
        t = 0.0
        for j in range(len(w)):
            t += row[j] * w[j]
        s += math.tanh(t)
    return s


def enumerate_weighted(x):
    s = 0.0
    for i, v in enumerate(x):
        s += (i + 1) * v * v
    return s


def enumerate_start(x):
    s = 0.0
    for i, v in enumerate(x, 2):
        s += i * math.sin(v)
    return s


def zip_dot(x, y):
    s = 0.0
    for a, b in zip(x, y):  # the shorter length
        s += a * b
    return s


def enumerate_zip(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        s += i * a * b + a
    return s


def zip_range_rows(M, y):
    s = 0.0
    for k, row, b in zip(range(1, 10, 2), M, y):
        s += k * row[0] * b + row[1]
    return s


def reversed_recurrence(x):
    s = 0.0
    for i in reversed(range(len(x))):
        s = s * 0.5 + x[i]
    return s


def reversed_array(x):
    s = 0.0
    for v in reversed(x):
        s = s * 0.5 + v
    return s


def reversed_range_steps(x):
    s = 0.0
    for i in reversed(range(1, len(x), 3)):
        s = s * 0.7 + x[i] * i
    return s


def iterate_view(x):
    s = 0.0
    for v in x[1::2]:
        s += math.exp(v)
    for i, v in enumerate(x[::-1]):
        s += i * v
    return s


def iterate_with_break(x):
    s = 0.0
    for v in x:
        if v < -0.5:
            break
        s += v * v
    return s


# -- Python scoping: variables that may be unbound --------------------------------


def loop_variable_after(x):
    for i in range(len(x)):
        x[i] = x[i] * 2.0
    return x[i] * i  # the last i; unbound when x is empty


def loop_variable_after_break(x):
    for i in range(len(x)):
        if x[i] < 0.0:
            break
    return i * x[i]


def element_after_loop(x):
    s = 0.0
    for v in x:
        s += v
    return s * v  # the last element


def assigned_in_loop_read_after(x):
    for i in range(len(x)):
        t = math.sin(x[i]) * 2.0
    return t * t


def first_iteration_branch(x):
    s = 0.0
    for i in range(len(x)):
        if i == 0:
            prev = x[0]
        else:
            s += (x[i] - prev) ** 2
            prev = x[i]
    return s


def branch_only_then_read(x, flag):
    if flag > 0.0:
        y = x[0] * 3.0
    return y * x[1]  # unbound when flag <= 0


def nested_first_iteration(M):
    s = 0.0
    for t in range(M.shape[0]):
        for j in range(M.shape[1]):
            if t == 0 and j == 0:
                ref = M[0, 0]
            s += math.tanh(M[t, j] - ref)
    return s


def while_assigned_read_after(x):
    k = 0
    while k < len(x):
        last = x[k] * x[k]
        k += 1
    return last + k


def int_assigned_in_loop(x):
    for i in range(len(x)):
        m = i * 2
    return x[m // 2] * m


def unbound_in_branch_of_loop(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.5:
            big = x[i]
        s += x[i]
    return s * big


def while_break_else(x):
    # `hit` first assigned just before the break and in the else clause:
    # bound after the loop on both paths
    k = 0
    while k < len(x):
        if x[k] > 1.0:
            hit = x[k] * x[k]
            break
        k += 1
    else:
        hit = 2.0 * x[0]
    return hit * x[1]


def for_break_else(x):
    for v in x:
        if v > 1.0:
            hit = v * x[0]
            break
    else:
        hit = x[1] ** 3
    return hit


def nested_break_else(M):
    total = 0.0
    for row in M:
        for v in row:
            if v > 0.8:
                first = v * v
                break
        else:
            first = row[0] * 0.5
        total += first
    return total


def continue_break_else(x):
    for v in x:
        if v < 0.0:
            skipped = v
            continue
        if v > 1.0:
            hit = v * skipped if False else v * v
            break
    else:
        hit = x[0] * 3.0
    return hit


def return_in_loop_else(x):
    for v in x:
        if v > 1.0:
            found = v * v
            break
        if v < -1.0:
            return v * 4.0
    else:
        found = x[0] * 2.0
    return found


def break_in_else_of_if(x):
    # the branch that does not break assigns a variable read later in the loop
    s = 0.0
    for v in x:
        if v > 1.0:
            hit = v
            break
        else:
            y = v * v
        s += y
    else:
        hit = s
    return hit + s


def dot_like_temporaries(x):
    s = 0.0
    for i in range(len(x)):
        t = x[i] * 2.0
        s += t * x[i]
    for i in range(len(x)):  # i is bound again before any read: nothing carried out of the first
        s += x[i]
    return s


# -- slice assignment ---------------------------------------------------------------


def fill_tail(x):
    x[1:] = 0.0
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s + x[0] * 3.0


def column_inf(R):
    R[:, 0] = np.inf
    R[0, :] = 2.0
    s = 0.0
    for i in range(1, R.shape[0]):
        for j in range(1, R.shape[1]):
            s += R[i, j] * R[i, j] * math.exp(-1.0 / R[i, 0]) * R[0, j]
    return s


def set_rows(x, out):
    for i in range(out.shape[0]):
        out[i, :] = x  # a row from an array of the row's shape
        out[i] *= i + 1.0
    s = 0.0
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            s += math.sin(out[i, j])
    return s


def add_slices(x, y):
    x[1:4] += y[0:3]
    x[::2] -= 0.5 * y[0]
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i] * x[i]
    return s


def shift_right(x):
    x[1:] = x[:-1]  # numpy reads the source as if copied first
    s = 0.0
    for i in range(len(x)):
        s += (i + 1) * x[i] * x[i]
    return s


def shift_left_add(x):
    x[:-1] += x[1:]
    s = 0.0
    for i in range(len(x)):
        s += (i + 1) * math.sin(x[i])
    return s


def broadcast_row(M, v):
    M[:, :] = v  # v of shape (m,) into each row
    M[1:, 1:] *= M[:-1, :-1]
    s = 0.0
    for i in range(M.shape[0]):
        for j in range(M.shape[1]):
            s += M[i, j] * (i + j + 1)
    return s


def local_buffer_slices(x):
    buf = np.zeros(len(x) + 2)
    buf[1:-1] = x
    buf[0] = x[-1]
    buf[-1] = x[0]
    s = 0.0
    for i in range(1, len(buf) - 1):
        s += (buf[i - 1] - 2.0 * buf[i] + buf[i + 1]) ** 2
    return s


def reversed_slice_store(x, y):
    x[::-1] = y
    s = 0.0
    for i in range(len(x)):
        s += (i + 1) * x[i] * y[i]
    return s


def mismatched_slice(x, y):
    x[1:] = y
    return x[0]


def mismatched_update(M, y):
    M[:, 1:] += y
    return M[0, 0]


# -- rebinding array variables ------------------------------------------------------


def heat_two_buffers(u0, work, steps, nu):
    u, unew = u0, work
    n = len(u)
    for t in range(steps):
        for i in range(1, n - 1):
            unew[i] = u[i] + nu * (u[i - 1] - 2.0 * u[i] + u[i + 1]) + 0.1 * math.sin(u[i])
        unew[0] = u[0]
        unew[n - 1] = u[n - 1]
        u, unew = unew, u
    s = 0.0
    for i in range(n):
        s += u[i] * u[i] * (i + 1)
    return s


def rebind_to_other(a, b, steps):
    u = a
    for t in range(steps):
        for i in range(len(u)):
            b[i] = u[i] * u[i] * 0.5 + 0.1
        u = b  # from the second step on, square b in place
    return u[0] + u[len(u) - 1] * 2.0


def swap_in_branch(a, b, steps):
    u, v = a, b
    for t in range(steps):
        for i in range(len(u)):
            v[i] = math.tanh(u[i] + v[i])
        if t % 2 == 0:
            u, v = v, u
    s = 0.0
    for i in range(len(u)):
        s += u[i] * (i + 1) + v[i]
    return s


def swap_while(a, b):
    u, v = a, b
    k = 0
    while k < 3:
        for i in range(len(u)):
            v[i] = u[i] * 0.9 + math.cos(u[i])
        u, v = v, u
        k += 1
    return u[0] * u[1]


def swap_local_buffers(x, steps):
    u = np.zeros(len(x))
    w = np.empty(len(x))
    u[:] = x
    for t in range(steps):
        for i in range(len(x)):
            w[i] = math.sin(u[i]) + x[i] * u[i]
        u, w = w, u
    s = 0.0
    for i in range(len(x)):
        s += u[i]
    return s


def rebinds_to_new_array(x):
    u = x
    for t in range(2):
        u = np.zeros(len(x))  # ERROR: a new array each step
    return u[0]


def choose_buffer(a, b, flag):
    if flag > 0.0:
        u = a
    else:
        u = b
    s = 0.0
    for i in range(len(u)):
        u[i] = u[i] * 2.0
        s += u[i] * u[i]
    return s + a[0] * b[1]


def rebind_in_if(a, b, flag):
    u = a
    if flag > 0.0:
        u = b
    for i in range(len(u)):
        u[i] = math.sin(u[i])
    return u[0] + a[1] + b[1]


def branch_view_used_after(a, flag):
    u = a
    if flag > 0.0:
        u = a[1:]
    return u[0]


def power_iteration(A, x, steps):
    # two buffers swapped while a 2-D array (another rank) is only read
    n = len(x)
    u = np.zeros(n)
    unew = np.zeros(n)
    u[:] = x
    for t in range(steps):
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += A[i, j] * u[j]
            unew[i] = math.tanh(s)
        u, unew = unew, u
    return u[0] + 2.0 * u[n - 1]


def smooth_gather(x, idx, w, steps):
    # an int index array and a float array only read beside the swapped buffers
    n = len(x)
    u = np.zeros(n)
    unew = np.zeros(n)
    u[:] = x
    for t in range(steps):
        for i in range(n):
            unew[i] = 0.5 * (u[i] + u[idx[i]]) * w[i]
        u, unew = unew, u
    return u[0] * u[1]


def rebinds_to_computed_with_a_matrix(W, x, T):
    """h = tanh(W @ h) in a time loop: W (2-D) is mentioned beside h (1-D)."""
    h = x.copy()
    for t in range(T):
        h = np.tanh(W @ h)
    return h @ h
