# RUN: %python %s | filecheck %s
# A matrix product of int arrays is one linalg.generic (i, j, k) with k a
# reduction, into a zero-filled result of numpy's dtype: int32 @ int32 is
# int32 (each step wraps to 32 bits, as numpy's int32 accumulation), int32
# @ int64 is int64; an int array with a float one is converted to float64
# and multiplied by linalg.matmul (np.result_type(int32, float32) is
# float64).
from adpasses.frontend import ArrayArg, build_module


def product(a, b):
    return a @ b


for args in ([ArrayArg("int32", 2, True), ArrayArg("int32", 2, True)],
             [ArrayArg("int32", 2, True), ArrayArg("int64", 1, True)],
             [ArrayArg("int32", 2, True), ArrayArg("float32", 2, True)]):
    module, _ = build_module(product, args)
    print(module)

# CHECK-LABEL: func.func @product(%a: memref<?x?xi32>, %b: memref<?x?xi32>) -> memref<?x?xi32>
# CHECK:         %[[C:[0-9a-z_]+]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xi32>
# CHECK:         linalg.fill ins(%{{.*}} : i32) outs(%[[C]] : memref<?x?xi32>)
# CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<?x?xi32>, memref<?x?xi32>) outs(%[[C]] : memref<?x?xi32>) {
# CHECK:           arith.muli %{{.*}} : index
# CHECK:           arith.index_cast %{{.*}} : index to i32
# CHECK:           arith.addi %{{.*}} : index
# CHECK:           linalg.yield %{{.*}} : i32
# CHECK-NOT:     linalg.matmul

# CHECK-LABEL: func.func @product(%a: memref<?x?xi32>, %b: memref<?xi64>) -> memref<?xi64>
# CHECK:         linalg.fill ins(%{{.*}} : i64)
# CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : memref<?x?xi64, strided<[?, ?], offset: ?>>)
# CHECK:           linalg.yield %{{.*}} : i64

# CHECK-LABEL: func.func @product(%a: memref<?x?xi32>, %b: memref<?x?xf32>) -> memref<?x?xf64>
# CHECK:         linalg.generic {{.*}} ins(%a : memref<?x?xi32>) outs(%{{.*}} : memref<?x?xf64>)
# CHECK:         linalg.generic {{.*}} ins(%b : memref<?x?xf32>) outs(%{{.*}} : memref<?x?xf64>)
# CHECK:         linalg.matmul
