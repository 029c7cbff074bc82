"""A value nothing uses still raises where Python raises (bounds checks stay).

The frontend's common-subexpression pass used to erase unused ops as dead,
and their checks with them: `t = x[5]; return x[0]` returned x[0] with no
IndexError, a `while x[i] > 0: i += 1` scan off the end of x was deleted
whole, `7 // 0` and `int(nan)` whose results were unused raised nothing.
The primal and the gradient must raise at the line, and with valid inputs
give the right numbers.
"""

from __future__ import annotations

import math
import os
import re
import sys

import numpy as np
import pytest

import adpasses

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import unused_kernels as uk  # noqa: E402

KERNELS = os.path.join(HERE, "unused_kernels.py")


def at(tag: str) -> str:
    with open(KERNELS) as f:
        for number, line in enumerate(f, 1):
            if line.rstrip().endswith(f"# ERROR: {tag}"):
                return f"{KERNELS}:{number}:"
    raise AssertionError(tag)


CASES = [
    ("unused_read", uk.unused_read, (np.arange(1.0, 4.0), 5), IndexError, "index 5 is out of bounds"),
    ("unused_read", uk.unused_read, (np.arange(1.0, 4.0), -4), IndexError, "index -4 is out of bounds"),
    ("scan_past_the_end", uk.scan_past_the_end, (np.ones(3),), IndexError, "index 3 is out of bounds"),
    ("loop_of_unused_reads", uk.loop_of_unused_reads, (np.ones(3), 4), IndexError, "index 3 is out of bounds"),
    ("unused_read_2d", uk.unused_read_2d, (np.ones((2, 3)), 1, 3), IndexError, "index 3 is out of bounds"),
    ("unused_division", uk.unused_division, (np.ones(3), 0), ZeroDivisionError, "division"),
    ("unused_int_of", uk.unused_int_of, (np.ones(3), math.nan), ValueError, "NaN"),
    ("unused_int_of", uk.unused_int_of, (np.ones(3), math.inf), OverflowError, "inf"),
]


@pytest.mark.parametrize("tag,fn,args,error,phrase", CASES)
@pytest.mark.parametrize("how", ["jit", "grad"])
def test_an_unused_value_raises_where_python_does(tag, fn, args, error, phrase, how) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error):  # what the plain Python function does
        fn.py_func(*args)
    call = fn if how == "jit" else adpasses.grad(fn)
    with pytest.raises(error, match=re.escape(phrase)) as info:
        call(*args)
    assert at(tag) in str(info.value)


def test_valid_inputs_give_the_python_values_and_gradients() -> None:
    x = np.array([2.0, 3.0, 0.0, 4.0])
    for fn, args in [(uk.unused_read, (x, 3)), (uk.scan_past_the_end, (x,)),
                     (uk.loop_of_unused_reads, (x, 4)), (uk.unused_division, (x, 3)),
                     (uk.unused_int_of, (x, 2.5))]:
        assert fn(*args) == fn.py_func(*args) == 2.0
        g = adpasses.grad(fn)(*args)
        np.testing.assert_array_equal(g, [1.0, 0.0, 0.0, 0.0])
    a = np.arange(6.0).reshape(2, 3) + 1.0
    assert uk.unused_read_2d(a, 1, 2) == 1.0
    np.testing.assert_array_equal(adpasses.grad(uk.unused_read_2d)(a, 1, 2), [[1, 0, 0], [0, 0, 0]])
