# RUN: %python %s | filecheck %s
# np.sum and np.mean of a float32 array accumulate in float64 (a float32
# running sum stops growing at 2**24: numpy sums pairwise) and round the
# result to float32 once: the generic's block extends each element
# (arith.extf), its accumulator is f64, and one arith.truncf follows the
# reduction (for axis=, one elementwise generic into the float32 result).
# Max and prod are not sums: they stay float32.
import numpy as np

from adpasses.frontend import ArrayArg, build_module


def total(x):
    return np.sum(x * 2.0)


def rows(m):
    return np.mean(m, axis=1)


def peak(x):
    return np.max(x)


for f, rank in ((total, 1), (rows, 2), (peak, 1)):
    module, _ = build_module(f, [ArrayArg("float32", rank, True)])
    print(module)

# CHECK-LABEL: func.func @total
# CHECK:         %[[ACC:[0-9a-z_]+]] = memref.alloca() : memref<f64>
# CHECK:         linalg.fill ins(%{{.*}} : f64) outs(%[[ACC]] : memref<f64>)
# CHECK:         linalg.generic {{.*}} ins(%x : memref<?xf32>) outs(%[[ACC]] : memref<f64>)
# CHECK-NEXT:    ^{{.*}}(%{{.*}}: f32, %[[A:[0-9a-z_]+]]: f64):
# CHECK:           %[[W:[0-9a-z_]+]] = arith.extf %{{.*}} : f32 to f64
# CHECK:           arith.addf %[[A]], %[[W]] : f64
# CHECK:         %[[T:[0-9a-z_]+]] = memref.load %[[ACC]][] : memref<f64>
# CHECK-NEXT:    %{{.*}} = arith.truncf %[[T]] : f64 to f32

# CHECK-LABEL: func.func @rows
# CHECK:         %[[S:[0-9a-z_]+]] = memref.alloc(%{{.*}}) : memref<?xf64>
# CHECK:         linalg.generic {{.*}} ins(%m : memref<?x?xf32>) outs(%[[S]] : memref<?xf64>)
# CHECK:         %[[R:[0-9a-z_]+]] = memref.alloc(%{{.*}}) : memref<?xf32>
# CHECK:         linalg.generic {{.*}} ins(%[[S]] : memref<?xf64>) outs(%[[R]] : memref<?xf32>)
# CHECK:           arith.divf %{{.*}}, %{{.*}} : f64
# CHECK-NEXT:      arith.truncf %{{.*}} : f64 to f32

# CHECK-LABEL: func.func @peak
# CHECK:         memref.alloca() : memref<f32>
# CHECK-NOT:     arith.extf
# CHECK:         linalg.generic {{.*}} outs(%{{.*}} : memref<f32>)
# CHECK:         memref.load %{{.*}}[] : memref<f32>
