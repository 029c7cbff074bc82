// RUN: not ad-opt %s --forward 2>&1 | filecheck %s
// Enzyme-MLIR ForwardMode/affine_parallel.mlir: y[i] = x[i]^2 in
// affine.parallel. ad-lower-affine does not lower affine.parallel (it is
// an error at its location in reverse mode too): one error at the op.

func.func @square(%x: memref<?xf64>, %y: memref<?xf64>, %n: index) {
  // CHECK: enzyme_affine_parallel.mlir:[[@LINE+1]]:{{[0-9]+}}: error: {{.*}}affine.parallel
  affine.parallel (%i) = (0) to (symbol(%n)) {
    %v = affine.load %x[%i] : memref<?xf64>
    %s = arith.mulf %v, %v : f64
    affine.store %s, %y[%i] : memref<?xf64>
  }
  func.return
}

func.func @dsquare(%x: memref<?xf64>, %dx: memref<?xf64>, %y: memref<?xf64>, %dy: memref<?xf64>, %n: index) {
  ad.fwddiff @square(%x, %dx, %y, %dy, %n) {activity = [dup, dup, const], ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index) -> ()
  func.return
}
// CHECK-NOT: Traceback
