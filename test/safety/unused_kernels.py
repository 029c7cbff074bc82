"""Functions for test_safety_unused_values.py: each computes a value that
nothing uses, at the line marked `# ERROR: name`, where Python raises."""

import adpasses


@adpasses.jit
def unused_read(x, i):
    t = x[i]  # ERROR: unused_read
    return x[0]


@adpasses.jit
def scan_past_the_end(x):
    i = 0
    while x[i] > 0:  # ERROR: scan_past_the_end
        i += 1
    return x[0]


@adpasses.jit
def loop_of_unused_reads(x, n):
    s = x[0]
    for i in range(n):
        t = x[i]  # ERROR: loop_of_unused_reads
    return s


@adpasses.jit
def unused_read_2d(a, i, j):
    t = a[i, j]  # ERROR: unused_read_2d
    return a[0, 0]


@adpasses.jit
def unused_division(x, k):
    t = 7 // k  # ERROR: unused_division
    u = 7 % k
    return x[0]


@adpasses.jit
def unused_int_of(x, v):
    t = int(v)  # ERROR: unused_int_of
    return x[0]
