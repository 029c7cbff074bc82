# RUN: %python %s | filecheck %s
# Whole-array expressions of int32 arrays are stored in int32 arrays, as
# numpy's results are: the generic computes in index (wrapped to 32 bits
# after each operation) and yields an i32 into a memref<?xi32>. np.sum of
# int32 accumulates in i64 (numpy's sum of int32 is int64), np.max in i32.
import numpy as np

from adpasses.frontend import ArrayArg, build_module


def affine(a, out):
    z = a * 3 + 1
    out[0] = z[1]


def total(a):
    return np.sum(a * 3)


def largest(a):
    return np.max(a * 3)


for f, args in ((affine, [ArrayArg("int32", 1, True), ArrayArg("int32", 1, True)]),
                (total, [ArrayArg("int32", 1, True)]),
                (largest, [ArrayArg("int32", 1, True)])):
    module, _ = build_module(f, args)
    print(module)

# CHECK-LABEL: func.func @affine
# CHECK:         %[[Z:[0-9a-z_]+]] = memref.alloc(%{{.*}}) : memref<?xi32>
# CHECK-NEXT:    linalg.generic {{.*}} ins(%a : memref<?xi32>) outs(%[[Z]] : memref<?xi32>) {
# CHECK-NEXT:    ^{{.*}}(%{{.*}}: i32, %{{.*}}: i32):
# CHECK:           arith.muli %{{.*}} : index
# CHECK-NEXT:      arith.index_cast %{{.*}} : index to i32
# CHECK:           arith.addi %{{.*}} : index
# CHECK:           linalg.yield %{{.*}} : i32
# CHECK-NEXT:    }

# CHECK-LABEL: func.func @total
# CHECK:         memref.alloca() : memref<i64>
# CHECK:         linalg.generic {{.*}} ins(%a : memref<?xi32>) outs(%{{.*}} : memref<i64>)

# CHECK-LABEL: func.func @largest
# CHECK:         memref.alloca() : memref<i32>
# CHECK:         linalg.generic {{.*}} ins(%a : memref<?xi32>) outs(%{{.*}} : memref<i32>)
