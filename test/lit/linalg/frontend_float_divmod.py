# RUN: %python %s | filecheck %s
# Float `%` and `//` (numbers and array expressions) start from the exact
# remainder arith.remf (C's fmod), as CPython's float_divmod and numpy's
# npy_divmod do, not from floor(a / b) (off by one where b is inexact:
# 1.0 // 0.1 is 9.0): the remainder takes b's sign (r + b where the signs
# differ), a zero one is copysign(0, b); the quotient is (a - r) / b
# floored, rounded up past .5, x / y where b is 0.
import numpy as np

from adpasses.frontend import ArrayArg, ScalarArg, build_module


def mod(a, b):
    return a % b


def wrap(x, L):
    return x // L


module, _ = build_module(mod, [ScalarArg("float"), ScalarArg("float")])
print(module)
module, _ = build_module(wrap, [ArrayArg("float64", 1, True), ScalarArg("float")])
print(module)

# CHECK-LABEL: func.func @mod
# CHECK:         %[[R:[0-9a-z_]+]] = arith.remf %a, %b : f64
# CHECK:         %[[S:[0-9a-z_]+]] = arith.addf %[[R]], %b : f64
# CHECK:         %[[M:[0-9a-z_]+]] = arith.select %{{.*}}, %[[S]], %[[R]] : f64
# CHECK:         math.copysign %{{.*}}, %b : f64
# CHECK-NOT:     math.floor
# CHECK:         func.return

# CHECK-LABEL: func.func @wrap
# CHECK:         linalg.generic
# CHECK:           %[[R:[0-9a-z_]+]] = arith.remf %{{.*}}, %L : f64
# CHECK:           %[[Q:[0-9a-z_]+]] = arith.divf %{{.*}}, %L : f64
# CHECK:           arith.subf %{{.*}}, %[[R]] : f64
# CHECK:           math.floor
# CHECK:           linalg.yield
