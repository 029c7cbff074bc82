// dense_resource<key> whose bytes are missing (the elements or the blobs
// elided by mlir-opt) or do not fit its type: an error at the op that uses
// it, saying what to do instead; arith.constant of resources (tensors of
// f64, i1 (a byte each), index) read as dense elements.
// RUN: ad-opt %s | filecheck %s
// RUN: not ad-opt %S/Inputs/resource_elided.mlir 2>&1 | filecheck %s --check-prefix=ELIDED
// RUN: not ad-opt %S/Inputs/resource_missing.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not ad-opt %S/Inputs/resource_short.mlir 2>&1 | filecheck %s --check-prefix=SHORT
// RUN: not ad-opt %S/Inputs/resource_not_dense.mlir 2>&1 | filecheck %s --check-prefix=SPARSE
// ELIDED: resource_elided.mlir:2:3: error: dense_resource<__elided__>: mlir-opt left these elements out (--mlir-elide-elementsattrs-if-larger); print the module without that option
// MISSING: resource_missing.mlir:2:3: error: dense_resource<weights>: the file has no blob named weights in a `{-# dialect_resources: {builtin: {...}} #-}` block (mlir-opt leaves the blobs out with --mlir-elide-resource-strings-if-larger); print the module without that option, or write the constant as dense<...>
// SHORT: resource_short.mlir:1:1: error: the blob of dense_resource<short> holds 16 bytes of data; tensor<3xf64> needs 24 (3 x 8)
// SPARSE: resource_not_dense.mlir:1:{{[0-9]+}}: error: memref.global @w: expected `dense<...>`, `dense_resource<...>` or `uninitialized` as the initial value

// CHECK: %halves = arith.constant dense<[5.000000e-01, -1.000000e+00]> : tensor<2xf64>
// CHECK: %flags = arith.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK: %idx = arith.constant dense<[7, -2]> : tensor<2xindex>
func.func @constants() {
  %halves = arith.constant dense_resource<halves> : tensor<2xf64>
  %flags = arith.constant dense_resource<flags> : tensor<3xi1>
  %idx = arith.constant dense_resource<idx> : tensor<2xindex>
  return
}
{-#
  dialect_resources: {
    builtin: {
      halves: "0x08000000000000000000E03F000000000000F0BF",
      flags: "0x01000000010001",
      idx: "0x080000000700000000000000FEFFFFFFFFFFFFFF"
    }
  }
#-}
