"""Number functions that are not one op of the table: `round(x)` (an int,
half to even, as Python's), `round(x, n)`, and the float tests
`math.isnan/isinf/isfinite` / `np.isnan/isinf/isfinite` on numbers.

`round(x)` is `math.roundeven` (the op table's entry) converted to an
int, so it checks the conversion like `int()`: NaN and infinities raise.
`round(x, n)` with a literal n is numpy's `np.round(x, n)`:
`roundeven(x * 10**n) / 10**n` (for n < 0: `roundeven(x / 10**-n) *
10**-n`). Python's `round(x, n)` rounds the exact decimal value of x, so
on ties that are not exactly representable (2.675 is 2.67499999...) the
two may differ in the last digit; numpy's answer is what compiled code
gives. Rounding is piecewise constant: its derivative is zero.
"""

from __future__ import annotations

import ast
import builtins
import math as pymath

import numpy as np
from xdsl.dialects import arith, math

from adpasses.frontend.values import Scalar

FLOAT_TESTS = {pymath.isnan: "isnan", np.isnan: "isnan", pymath.isinf: "isinf", np.isinf: "isinf",
               pymath.isfinite: "isfinite", np.isfinite: "isfinite"}
ROUNDING = {builtins.round: "round", np.round: "np.round", np.around: "np.around"}


def number_function(fn: object) -> bool:
    """A function this module compiles."""
    try:
        return fn in FLOAT_TESTS or fn in ROUNDING
    except TypeError:  # unhashable
        return False


class NumberMixin:
    def number_call(self, fn: object, node: ast.Call) -> Scalar:
        if fn in FLOAT_TESTS:
            return self.float_test(FLOAT_TESTS[fn], node)
        return self.rounding(ROUNDING[fn], node)

    def float_test(self, name: str, node: ast.Call) -> Scalar:
        """isnan: x unordered with itself; isinf: |x| == inf; isfinite:
        |x| < inf (false for NaN). Ints and bools are finite numbers."""
        if node.keywords:
            self.error(node, f"{name}() takes no keyword arguments in compiled code")
        self.expect_args(node, 1)
        return self.float_test_of(name, self.scalar(node.args[0]))

    def float_test_of(self, name: str, x: Scalar) -> Scalar:
        """The test on one number (np.isnan of an array applies it to each element)."""
        if not x.is_float:
            return Scalar(self.const_bool(name == "isfinite"))
        if name == "isnan":
            return Scalar(self.emit(arith.CmpfOp(x.value, x.value, "uno")).results[0])
        magnitude = self.emit(math.AbsFOp(x.value)).results[0]
        inf = self.to_float(Scalar(self.const_float(pymath.inf), weak=True), x.type)
        predicate = "oeq" if name == "isinf" else "olt"
        return Scalar(self.emit(arith.CmpfOp(magnitude, inf, predicate)).results[0])

    def rounding(self, name: str, node: ast.Call) -> Scalar:
        """round(x) -> int; round(x, n) and np.round(x[, n]) -> float."""
        args = list(node.args)
        for kw in node.keywords:
            if kw.arg in ("ndigits", "decimals") and len(args) == 1:
                args.append(kw.value)
            else:
                self.error(node, f"{name}() takes the number and the digits by position here")
        if not 1 <= len(args) <= 2:
            self.error(node, f"{name}() takes a number and optionally a literal number of digits")
        x = self.scalar(args[0])
        digits = None
        if len(args) == 2:
            digits = self.constant_index_of(args[1])
            if digits is None:
                self.error(args[1], f"the number of digits of {name}() must be a literal integer here")
        if not x.is_float:  # an int rounds to itself (round(7, -1) is 70: not supported)
            if digits is not None and digits < 0:
                self.error(node, f"{name}() of an int with negative digits is not supported; "
                                 "write it with // and *")
            return x
        t = x.type
        value = x.value
        if digits:
            scale = self.to_float(Scalar(self.const_float(10.0 ** abs(digits)), weak=True), t)
            grow, shrink = (arith.MulfOp, arith.DivfOp) if digits > 0 else (arith.DivfOp, arith.MulfOp)
            value = self.emit(grow(value, scale)).results[0]
            value = self.emit(math.RoundEvenOp(value)).results[0]
            return Scalar(self.emit(shrink(value, scale)).results[0], x.weak)
        rounded = self.emit(math.RoundEvenOp(value)).results[0]
        if name == "round" and digits is None:  # Python's round(x) is an int
            i64 = self.emit(arith.FPToSIOp(rounded, self.int64())).results[0]
            return Scalar(self.emit(arith.IndexCastOp(i64, self.index_type())).results[0])
        return Scalar(rounded, x.weak)
