// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/parallel_reduce.mlir: a squared norm by scf.parallel
// with scf.reduce (generic form). ad-expand-upstream-ops runs it as a
// scf.for whose iter_arg the reduction region combines.
// x = [1, 2, 3], dx = [1, 1, 1]: d(sum x^2) = 2 (1 + 2 + 3) = 12
// CHECK: dr = 12

func.func @nrm2(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
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

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %v = arith.addf %f, %one : f64
    memref.store %v, %x[%i] : memref<?xf64>
    memref.store %one, %dx[%i] : memref<?xf64>
  }
  %dr = func.call @dnrm2(%x, %dx) : (memref<?xf64>, memref<?xf64>) -> f64
  printf.print_format "dr = {}\n", %dr : f64
  func.return
}
