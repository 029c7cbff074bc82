// RUN: not ad-opt %s --forward 2>&1 | filecheck %s
// Enzyme-MLIR ForwardMode/affine_parallel.mlir: y[i] = x[i]^2 in
// affine.parallel (in generic form: xDSL 0.74 has no custom syntax for it).
// affine.parallel becomes scf.parallel when affine is lowered, which
// neither mode differentiates yet (an error at its location in reverse
// mode too): one error at the op, never a zero.

func.func @square(%x: memref<?xf64>, %y: memref<?xf64>, %n: index) {
  // CHECK: enzyme_affine_parallel.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: {{.*(affine|scf)}}.parallel
  "affine.parallel"(%n) <{lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : vector<1xi32>, upperBoundsMap = affine_map<()[s0] -> (s0)>, upperBoundsGroups = dense<1> : vector<1xi32>, steps = [1 : i64], reductions = []}> ({
  ^bb0(%i: index):
    %v = affine.load %x[%i] : memref<?xf64>
    %s = arith.mulf %v, %v : f64
    affine.store %s, %y[%i] : memref<?xf64>
    "affine.yield"() : () -> ()
  }) : (index) -> ()
  func.return
}

func.func @dsquare(%x: memref<?xf64>, %dx: memref<?xf64>, %y: memref<?xf64>, %dy: memref<?xf64>, %n: index) {
  ad.fwddiff @square(%x, %dx, %y, %dy, %n) {activity = [dup, dup, const], ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index) -> ()
  func.return
}
// CHECK-NOT: Traceback
