# RUN: %python %s | filecheck %s
# The frontend writes a whole-array expression as ONE linalg.generic into one
# new local array (no temporary per operator). In `2.0 * np.exp(x) - y[:, None]`
# y[:, None] is a view with a stride-0 column; the result's sizes go through
# ad.broadcast (which stops the call when they do not broadcast), and x and
# the column are read through views whose stride is 0 where their size is 1
# at run time (numpy's broadcasting). A sum of an expression is one generic
# with a reduction iterator into a rank-0 stack slot: nothing allocated.
import numpy as np

from adpasses.frontend import ArrayArg, build_module


def scaled(x, y, out):
    z = 2.0 * np.exp(x) - y[:, None]
    out[0, 0] = z[1, 1]


def energy(x):
    return np.sum(np.exp(-3.0 * (x + 1.0)))


for f, args in ((scaled, [ArrayArg("float64", 2, True), ArrayArg("float64", 1, True),
                           ArrayArg("float64", 2, True)]),
                (energy, [ArrayArg("float64", 1, True)])):
    module, _ = build_module(f, args)
    print(module)

# CHECK-LABEL: func.func @scaled
# CHECK:         %[[YCOL:[0-9a-z_]+]] = memref.reinterpret_cast %y to offset: [%{{.*}}], sizes: [%{{.*}}, %[[ONE:[0-9a-z_]+]]], strides: [%{{.*}}, %[[ZERO:[0-9a-z_]+]]]
# CHECK:         %[[ROWS:[0-9a-z_]+]] = ad.broadcast %{{.*}}, %{{.*}}
# CHECK-NEXT:    %[[COLS:[0-9a-z_]+]] = ad.broadcast %{{.*}}, %{{.*}}
# CHECK:         %[[XB:[0-9a-z_]+]] = memref.reinterpret_cast %x to offset: [%{{.*}}], sizes: [%[[ROWS]], %[[COLS]]]
# CHECK:         %[[YB:[0-9a-z_]+]] = memref.reinterpret_cast %[[YCOL]] to offset: [%{{.*}}], sizes: [%[[ROWS]], %[[COLS]]]
# CHECK-NEXT:    %[[Z:[0-9a-z_]+]] = memref.alloc(%[[ROWS]], %[[COLS]]) : memref<?x?xf64>
# CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[XB]], %[[YB]] : {{.*}}) outs(%[[Z]] : memref<?x?xf64>) {
# CHECK-NEXT:    ^{{.*}}(%[[A:[0-9a-z_]+]]: f64, %[[B:[0-9a-z_]+]]: f64, %{{.*}}: f64):
# CHECK-NEXT:      %[[E:[0-9a-z_]+]] = math.exp %[[A]] : f64
# CHECK-NEXT:      %[[M:[0-9a-z_]+]] = arith.mulf %{{[0-9a-z_]+}}, %[[E]] : f64
# CHECK-NEXT:      %[[S:[0-9a-z_]+]] = arith.subf %[[M]], %[[B]] : f64
# CHECK-NEXT:      linalg.yield %[[S]] : f64
# CHECK-NEXT:    }
# CHECK-NOT:     linalg.generic
# CHECK:         memref.dealloc %[[Z]]

# CHECK-LABEL: func.func @energy
# CHECK-NOT:     memref.alloc(
# CHECK:         %[[ACC:[0-9a-z_]+]] = memref.alloca() : memref<f64>
# CHECK-NEXT:    linalg.fill ins(%{{.*}} : f64) outs(%[[ACC]] : memref<f64>)
# CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : memref<?xf64>) outs(%[[ACC]] : memref<f64>) {
# CHECK:           math.exp
# CHECK:           arith.addf
# CHECK-NEXT:      linalg.yield
# CHECK:         memref.load %[[ACC]][] : memref<f64>
