"""Functions outside the compiled language, one construct each
(test_frontend_errors.py checks the message and the line)."""

import math
import os

import numpy as np

TABLE = [1.0, 2.0]


def uses_list(x):
    a = [1.0, 2.0]  # ERROR: list
    return a[0] * x


def uses_dict(x):
    d = {"a": x}  # ERROR: dict
    return x


def uses_string(x):
    s = "text"  # ERROR: str
    return x


def uses_try(x):
    try:  # ERROR: try
        y = x * 2.0
    except ValueError:
        y = 0.0
    return y


def uses_with(x):
    with open("f") as fh:  # ERROR: with
        pass
    return x


def uses_lambda(x):
    f = lambda v: v * x  # ERROR: lambda
    return apply_once(f, 2.0)


def apply_once(fn, v):
    return fn(v)


def uses_comprehension(x):
    return sum([x[i] for i in range(len(x))])  # ERROR: comprehension


def recursive(n):
    if n < 1:
        return 1.0
    return recursive(n - 1) * 2.0  # ERROR: recursion


def global_list(x):
    return TABLE[0] * x  # ERROR: global list


def unknown_function(x):
    return os.getpid() * x  # ERROR: module os


def array_arithmetic(x, y):
    z = not x  # ERROR: truth value of an array
    return z[0]


def returns_nested_tuple(x):
    return x[0], (x[1], x)  # ERROR: a tuple inside the returned tuple


def returns_one_tuple(x):
    return (x,)  # ERROR: a 1-tuple


def return_in_loop_else(x):
    for i in range(len(x)):
        if x[i] > 0:
            break
    else:
        return 0.0  # ERROR: return in a loop's else
    return 1.0


def iterates_shape(x):
    s = 0.0
    for n in x.shape:  # ERROR: for over a shape
        s += n
    return s


def unpacks_too_many(x):
    s = 0.0
    for i, v, w in enumerate(x):  # ERROR: three targets for pairs
        s += v
    return s


def list_comprehension(x):
    ys = [x[i] * 2.0 for i in range(len(x))]  # ERROR: comprehension
    return ys[0]


def numpy_reduction(x):
    return np.median(x)  # ERROR: np.median


def calls_input(x):
    input(x)  # ERROR: input
    return 1.0


def ping(n):
    if n < 1:
        return 0.0
    return pong(n - 1)


def pong(n):
    return ping(n) + 1.0  # ERROR: mutual recursion (reported at the call closing the cycle)


def undefined_name(x):
    return x[0] * t  # ERROR: undefined


def bad_attribute(x):
    return x.dtype  # ERROR: attribute


def float_range(x):
    s = 0.0
    for i in range(0.5 * len(x)):  # ERROR: float range
        s += x[i]
    return s


def assigns_tuple_to_slice(x):
    x[1:] = (1.0, 2.0)  # ERROR: slice assignment of a tuple
    return x[0]


def float_index(x):
    return x[1.5]  # ERROR: float index


def closure_over_list(x):
    data = [1.0]

    def inner(v):
        return data[0] * v

    return inner


closure_bad = closure_over_list(1.0)


def indexes_out_of_bounds(x):
    s = 0.0
    for i in range(len(x) + 1):
        s += x[i]  # ERROR: IndexError at run time
    return s


def writes_output(x, out):
    for i in range(len(x)):
        out[i] = math.sin(x[i]) + np.cos(x[i])


def scratch_argument(x, tmp):
    for i in range(len(x)):
        tmp[i] = x[i] * x[i]  # ERROR: const scratch array receives derivatives
    s = 0.0
    for i in range(len(x)):
        s += tmp[i]
    return s


def negates(x):
    y = x * 2.0
    return -y  # ERROR: where the (simulated) internal error happens


def uses_varargs(x, *rest):  # ERROR
    return x


def nested_def(x):
    def inner(t):  # ERROR
        return t
    return inner(x)


def generator(x):
    yield x  # ERROR


def generator_from(x):
    yield from range(3)  # ERROR
    return x


def walrus(x):
    return (y := x) + y  # ERROR


async def coroutine(x):  # ERROR
    return x


def strided_sum(x, k):
    s = 0.0
    for i in range(0, len(x), k):  # ERROR
        s += x[i]
    return s


def uses_complex(x):
    z = 2j * x  # ERROR
    return z.real
