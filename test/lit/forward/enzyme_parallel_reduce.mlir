// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/parallel_reduce.mlir: the squared norm by
// scf.parallel with scf.reduce (generic form). Expanded into an scf.for
// carrying the accumulator; its tangent is carried beside it.
// Hand derivation: r = sum x_i^2, dr = 2 sum x_i dx_i; x = (1, 2, 3),
// dx = (0.5, -1, 2): r = 14, dr = 2 (0.5 - 2 + 6) = 9.

// IR-LABEL: func.func @nrm2_fwd_d_d(
// IR-NOT:     scf.parallel
// IR:         scf.for {{.*}} -> (f64, f64)
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

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %three = arith.constant 3.0 : f64
  %half = arith.constant 0.5 : f64
  %mone = arith.constant -1.0 : f64
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  memref.store %one, %x[%c0] : memref<?xf64>
  memref.store %two, %x[%c1] : memref<?xf64>
  memref.store %three, %x[%c2] : memref<?xf64>
  memref.store %half, %dx[%c0] : memref<?xf64>
  memref.store %mone, %dx[%c1] : memref<?xf64>
  memref.store %two, %dx[%c2] : memref<?xf64>
  %r, %dr = ad.fwddiff @nrm2(%x, %dx) {activity = [dup], ret_activity = [dup]} : (memref<?xf64>, memref<?xf64>) -> (f64, f64)
  // CHECK: r = 14 dr = 9
  printf.print_format "r = {} dr = {}\n", %r : f64, %dr : f64
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  func.return
}
