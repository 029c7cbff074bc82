# RUN: %python %s | filecheck %s
# Float `%` and `//` (numbers and array expressions) start from the exact
# remainder fmod(a, b), as CPython's float_divmod and numpy's npy_divmod
# do, not from floor(a / b) (off by one where b is inexact: 1.0 // 0.1 is
# 9.0). fmod is one math.fma, a - trunc(a / b) * b (plus b with a's sign
# where the quotient rounded up to an integer), where |a / b| < 2**52 and b
# is finite; the other lanes take arith.remf (libm's fmod), which the fast
# lanes skip (remf of 0 and 1). Then: the remainder takes b's sign (r + b
# where the signs differ), a zero one is copysign(0, b); the quotient is
# (a - r) / b floored, rounded up past .5, a / b where b is 0.
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
# CHECK:         %[[Q:[0-9a-z_]+]] = arith.divf %a, %b : f64
# CHECK:         %[[FAST:[0-9a-z_]+]] = arith.andi
# CHECK:         %[[T:[0-9a-z_]+]] = math.trunc %[[Q]] : f64
# CHECK-NEXT:    %[[NT:[0-9a-z_]+]] = arith.negf %[[T]] : f64
# CHECK-NEXT:    %[[NEAR:[0-9a-z_]+]] = math.fma %[[NT]], %b, %a : f64
# CHECK:         math.copysign %b, %a : f64
# CHECK:         %[[A0:[0-9a-z_]+]] = arith.select %[[FAST]], %{{.*}}, %a : f64
# CHECK-NEXT:    %[[B1:[0-9a-z_]+]] = arith.select %[[FAST]], %{{.*}}, %b : f64
# CHECK-NEXT:    %[[FAR:[0-9a-z_]+]] = arith.remf %[[A0]], %[[B1]] : f64
# CHECK-NEXT:    %[[R:[0-9a-z_]+]] = arith.select %[[FAST]], %{{.*}}, %[[FAR]] : f64
# CHECK:         %[[S:[0-9a-z_]+]] = arith.addf %[[R]], %b : f64
# CHECK-NEXT:    %[[M:[0-9a-z_]+]] = arith.select %{{.*}}, %[[S]], %[[R]] : f64
# CHECK:         math.copysign %{{.*}}, %b : f64
# CHECK-NOT:     math.floor
# CHECK:         func.return

# CHECK-LABEL: func.func @wrap
# CHECK:         linalg.generic
# CHECK:           math.fma %{{.*}}, %L, %{{.*}} : f64
# CHECK:           %[[R:[0-9a-z_]+]] = arith.remf %{{.*}}, %{{.*}} : f64
# CHECK:           %[[RR:[0-9a-z_]+]] = arith.select %{{.*}}, %{{.*}}, %[[R]] : f64
# CHECK:           arith.subf %{{.*}}, %[[RR]] : f64
# CHECK:           math.floor
# CHECK:           linalg.yield
