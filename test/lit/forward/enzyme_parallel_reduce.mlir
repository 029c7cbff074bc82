// RUN: not ad-opt %s --forward 2>&1 | filecheck %s
// Enzyme-MLIR ForwardMode/parallel_reduce.mlir: a squared norm by scf.parallel
// with scf.reduce (generic form). Not differentiated by adpasses (see enzyme_parallel.mlir):
// an error at the op.

func.func @nrm2(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  // CHECK: enzyme_parallel_reduce.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: {{.*}}scf.parallel
  %r = "scf.parallel"(%c0, %n, %c1, %cst) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<?xf64>
    %s = arith.mulf %v, %v : f64
    "scf.reduce"(%s) ({
    ^bb1(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      "scf.reduce.return"(%t) : (f64) -> ()
    }) : (f64) -> ()
  }) : (index, index, index, f64) -> f64
  func.return %r : f64
}

func.func @dnrm2(%x: memref<?xf64>, %dx: memref<?xf64>) -> f64 {
  %r = ad.fwddiff @nrm2(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (memref<?xf64>, memref<?xf64>) -> f64
  func.return %r : f64
}
// CHECK-NOT: Traceback
