// RUN: not ad-opt %s --forward 2>&1 | filecheck %s
// Enzyme-MLIR ForwardMode/parallel.mlir: a matrix-vector product in
// scf.parallel (generic form: xDSL 0.74 has no custom syntax for it).
// scf.parallel is not a region op adpasses differentiates (no
// entry in core/region_flow.py, in reverse mode neither): one error at the
// op, naming it, instead of a tangent that silently misses the loop.

func.func @matvec(%a: memref<?x?xf64>, %x: memref<?xf64>, %y: memref<?xf64>) {
  %cst = arith.constant 0.0 : f64
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %m = memref.dim %a, %c0 : memref<?x?xf64>
  %n = memref.dim %a, %c1 : memref<?x?xf64>
  // CHECK: enzyme_parallel.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: {{.*}}scf.parallel
  "scf.parallel"(%c0, %m, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %cst) -> (f64) {
      %aij = memref.load %a[%i, %j] : memref<?x?xf64>
      %xj = memref.load %x[%j] : memref<?xf64>
      %p = arith.mulf %aij, %xj : f64
      %t = arith.addf %acc, %p : f64
      scf.yield %t : f64
    }
    memref.store %s, %y[%i] : memref<?xf64>
    "scf.reduce"() : () -> ()
  }) : (index, index, index) -> ()
  func.return
}

func.func @dmatvec(%a: memref<?x?xf64>, %da: memref<?x?xf64>, %x: memref<?xf64>, %dx: memref<?xf64>, %y: memref<?xf64>, %dy: memref<?xf64>) {
  ad.fwddiff @matvec(%a, %da, %x, %dx, %y, %dy) {activity = [dup, dup, dup], ret_activity = []} : (memref<?x?xf64>, memref<?x?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
  func.return
}
// CHECK-NOT: Traceback
