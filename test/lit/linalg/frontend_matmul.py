# RUN: %python %s | filecheck %s
# The frontend writes `x @ y` as ONE linalg.matmul into a new zeroed array,
# after a run-time check of the shared dimension (ad.raise_if: numpy's
# ValueError). A vector operand enters as a 1 x k (left) or k x 1 (right)
# view, and so does the vector result of a matrix-vector product.
import numpy as np

from adpasses.frontend import ArrayArg, build_module


def mm(x, y):
    return x @ y


def mv(a, v):
    return a @ v


for f, args in ((mm, [ArrayArg("float64", 2, True), ArrayArg("float64", 2, True)]),
                (mv, [ArrayArg("float32", 2, True), ArrayArg("float32", 1, True)])):
    module, _ = build_module(f, args)
    print(module)

# CHECK-LABEL: func.func @mm
# CHECK:         %[[K0:[0-9a-z_]+]] = memref.dim %x, %{{.*}} : memref<?x?xf64>
# CHECK:         %[[K1:[0-9a-z_]+]] = memref.dim %y, %{{.*}} : memref<?x?xf64>
# CHECK:         %[[NE:[0-9a-z_]+]] = arith.cmpi ne, %[[K0]], %[[K1]] : index
# CHECK-NEXT:    ad.raise_if %[[NE]], %[[K1]], %[[K0]] {exception = "ValueError", message = "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {0} is different from {1})"}
# CHECK:         %[[C:[0-9a-z_]+]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf64>
# CHECK:         linalg.fill ins(%{{.*}} : f64) outs(%[[C]] : memref<?x?xf64>)
# CHECK-NEXT:    linalg.matmul ins(%x, %y : memref<?x?xf64>, memref<?x?xf64>) outs(%[[C]] : memref<?x?xf64>)
# CHECK:         return %[[C]]

# CHECK-LABEL: func.func @mv
# CHECK:         ad.raise_if
# CHECK:         %[[R:[0-9a-z_]+]] = memref.alloc(%{{.*}}) : memref<?xf32>
# CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[R]] : memref<?xf32>)
# CHECK:         %[[COL:[0-9a-z_]+]] = memref.reinterpret_cast %v to offset: [%{{.*}}], sizes: [%{{.*}}, %[[ONE:[0-9a-z_]+]]], strides: [%{{.*}}, %[[ONE]]]
# CHECK:         %[[OUT:[0-9a-z_]+]] = memref.reinterpret_cast %[[R]] to offset: [%{{.*}}], sizes: [%{{.*}}, %[[ONE]]], strides: [%{{.*}}, %[[ONE]]]
# CHECK-NEXT:    linalg.matmul ins(%a, %[[COL]] : memref<?x?xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>) outs(%[[OUT]] : memref<?x?xf32, strided<[?, ?], offset: ?>>)
# CHECK:         return %[[R]]
