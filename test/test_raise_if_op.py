"""`ad.raise_if`, the one op of the exceptions compiled code raises
(docs/dialect.md): literal braces and newlines in messages, placeholders
of run-time values beside them, upstream's `cf.assert` lowered to the same
stop (AssertionError), and `cf.assert` with the retired `ad.raises` a
located error naming the op to write."""

from __future__ import annotations

import numpy as np
import pytest

from adpasses.core.context import parse_module
from adpasses.native.llvm_jit import compile_module

RAISE_IF = """func.func @f(%n: index) -> index {
  %c3 = arith.constant 3 : index
  %bad = arith.cmpi sgt, %n, %c3 : index
  ad.raise_if %bad, %n, %c3 {exception = "IndexError", message = "n = {0} > {1} {{0}} }} {{\\nnext"}
  func.return %n : index
}
"""

ASSERT = """func.func @f(%x: f64) -> f64 {
  %z = arith.constant 0.0 : f64
  %ok = arith.cmpf ogt, %x, %z : f64
  cf.assert %ok, "x > 0 {0} {{x}}"
  func.return %x : f64
}
"""


def test_placeholders_beside_literal_braces_and_a_newline() -> None:
    f = compile_module(parse_module(RAISE_IF, "raise_if.mlir"))["f"]
    assert f(2) == 2
    with pytest.raises(IndexError) as err:
        f(7)
    assert str(err.value) == "n = 7 > 3 {0} } {\nnext (at raise_if.mlir:4:3)"


def test_upstream_assert_raises_assertion_error_with_its_message_as_written() -> None:
    f = compile_module(parse_module(ASSERT, "assert.mlir"))["f"]
    assert f(1.5) == 1.5
    with pytest.raises(AssertionError) as err:
        f(-1.0)
    assert str(err.value) == "x > 0 {0} {{x}} (at assert.mlir:4:3)"


def test_assert_with_the_retired_raises_attribute_names_raise_if() -> None:
    from adpasses import CompileError

    text = ASSERT.replace('"x > 0 {0} {{x}}"', '"x > 0" {ad.raises = "ValueError"}')
    with pytest.raises(CompileError, match=r"assert.mlir:4:3: .*cf.assert with ad.raises: raise a Python "
                                           r"exception with `ad.raise_if"):
        compile_module(parse_module(text, "assert.mlir"))


def strided_sum(x, k):
    s = 0.0
    for i in range(0, len(x), k):
        s += x[i]
    return s


@pytest.mark.parametrize("mode", ["jit", "grad"])
def test_a_range_step_of_zero_known_at_run_time_is_pythons_value_error(mode: str) -> None:
    import inspect

    import numpy as np

    import adpasses

    x = np.ones(5)
    f = adpasses.jit(strided_sum) if mode == "jit" else adpasses.grad(strided_sum)
    with pytest.raises(ValueError) as python:
        strided_sum(x, 0)
    with pytest.raises(ValueError) as compiled:
        f(x, 0)
    lines, first = inspect.getsourcelines(strided_sum)
    line = first + 2
    col = lines[2].index("range(") + 1
    assert str(compiled.value) == f"{python.value} (at {inspect.getsourcefile(strided_sum)}:{line}:{col})"
    assert adpasses.jit(strided_sum)(x, 2) == 3.0


def added(x, y):
    return np.sum(x + y)


def dotted(x, y):
    return np.dot(x, y) + x.dot(y)


def dotted_alone(x, y):
    return np.dot(x, y)


def updated(x, y):
    x += y
    return np.sum(x)


@pytest.mark.parametrize("fn, shapes, message", [
    (added, ((3, 4), (5,)), "operands could not be broadcast together: a dimension of size 4 meets one "
                            "of size 5 (sizes must be equal, or one of them 1)"),
    (dotted, ((6,), (1,)), "shapes (6,) and (1,) not aligned: 6 (dim 0) != 1 (dim 0)"),
    (dotted_alone, ((6,), (2,)), "shapes (6,) and (2,) not aligned: 6 (dim 0) != 2 (dim 0)"),
    (updated, ((3, 1), (4,)), "non-broadcastable operand: size 4 cannot be broadcast into the array "
                              "updated in place, of size 1 in that dimension"),
], ids=["broadcast", "equal", "equal-alone", "into"])
def test_ad_broadcast_stops_as_a_raise_if_with_its_message(fn, shapes, message) -> None:
    import inspect

    import adpasses

    with pytest.raises(ValueError) as err:
        adpasses.jit(fn)(*(np.ones(s) for s in shapes))
    lines, first = inspect.getsourcelines(fn)
    text = str(err.value)
    assert text.startswith(message + f" (at {inspect.getsourcefile(fn)}:"), text
    assert int(text.rsplit(":", 2)[1]) in range(first, first + len(lines))
