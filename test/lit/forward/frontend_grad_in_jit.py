# RUN: %python %s | filecheck %s
# grad(f, argnums)(...) in compiled code is ONE ad.autodiff of f's compiled
# copy with a zeroed local shadow per differentiated array and the seed 1.0;
# hessian(f)(...) adds a gradient function (@f_0_grad: the ad.autodiff) and
# a loop over the unit vectors e_j, each an ad.fwddiff of that function whose
# shadow's tangent is column j of H (forward over reverse).
import math

from adpasses import grad, hessian
from adpasses.frontend import ArrayArg, ScalarArg, build_module


def f(x, s):
    t = 0.0
    for i in range(len(x)):
        t += math.sin(x[i] * s) * x[i]
    return t * t


def g(x, s):
    return grad(f, (0, 1))(x, s)


def h(x, s):
    return hessian(f)(x, s)


for fn in (g, h):
    module, _ = build_module(fn, [ArrayArg("float64", 1, True), ScalarArg("float")])
    print(module)

# CHECK-LABEL: func.func @g(%x: memref<?xf64>, %s: f64) -> (memref<?xf64>, f64)
# CHECK-DAG:     %[[ONE:[0-9]+]] = arith.constant 1.000000e+00 : f64
# CHECK-DAG:     %[[ZERO:[0-9]+]] = arith.constant 0.000000e+00 : f64
# CHECK:         %[[DX:[0-9]+]] = memref.alloc(%{{.*}}) : memref<?xf64>
# CHECK:         memref.store %[[ZERO]], %[[DX]][%{{.*}}] : memref<?xf64>
# CHECK:         %[[DS:[0-9]+]] = ad.autodiff @f_0(%x, %[[DX]], %s, %[[ONE]]) {activity = [dup, active], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
# CHECK-NEXT:    func.return %[[DX]], %[[DS]] : memref<?xf64>, f64

# CHECK-LABEL: func.func private @f_0_grad(%0: memref<?xf64>, %1: memref<?xf64>, %2: f64)
# CHECK-NEXT:    %[[SEED:[0-9]+]] = arith.constant 1.000000e+00 : f64
# CHECK-NEXT:    ad.autodiff @f_0(%0, %1, %2, %[[SEED]]) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> ()
# CHECK-NEXT:    func.return
# CHECK-LABEL: func.func @h(%x: memref<?xf64>, %s: f64) -> memref<?x?xf64>
# CHECK:         %[[E:[0-9]+]] = memref.alloc(%[[N:[0-9]+]]) : memref<?xf64>
# CHECK-NEXT:    %[[SH:[0-9]+]] = memref.alloc(%[[N]]) : memref<?xf64>
# CHECK-NEXT:    %[[HSH:[0-9]+]] = memref.alloc(%[[N]]) : memref<?xf64>
# CHECK-NEXT:    %[[H:[0-9]+]] = memref.alloc(%[[N]], %[[N]]) : memref<?x?xf64>
# CHECK:         scf.for %[[J:[0-9]+]] =
# CHECK:           memref.store %{{.*}}, %[[E]][%[[J]]] : memref<?xf64>
# CHECK-NEXT:      ad.fwddiff @f_0_grad(%x, %[[E]], %[[SH]], %[[HSH]], %s) {activity = [dup, dup, const], ret_activity = []}
# CHECK-NEXT:      scf.for %[[I:[0-9]+]] =
# CHECK-NEXT:        %[[V:[0-9]+]] = memref.load %[[HSH]][%[[I]]] : memref<?xf64>
# CHECK-NEXT:        memref.store %[[V]], %[[H]][%[[I]], %[[J]]] : memref<?x?xf64>
# CHECK:         func.return %[[H]] : memref<?x?xf64>
