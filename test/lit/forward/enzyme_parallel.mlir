// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/parallel.mlir: a matrix-vector product y = A x
// in scf.parallel (generic form: xDSL 0.74 has no custom syntax for it),
// everything dup. ad-forward expands scf.parallel into scf.for as the
// reverse pipeline does (ad-expand-upstream-ops), then differentiates.
// Hand derivation: dy = dA x + A dx. A = [[1, 2], [3, 4]], x = (1, -1),
// dA = [[0.5, 0], [0, 1]], dx = (2, 1): y = (-1, -1),
// dy = (0.5, -1) + (4, 10) = (4.5, 9).

// IR-LABEL: func.func @matvec_fwd_ddd_(
// IR-NOT:     scf.parallel
// IR:         scf.for
// IR:           scf.for {{.*}} -> (f64, f64)
// IR:         memref.store %{{.*}}, %{{.*}} : memref<?xf64>
func.func @matvec(%a: memref<?x?xf64>, %x: memref<?xf64>, %y: memref<?xf64>) {
  %cst = arith.constant 0.0 : f64
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %m = memref.dim %a, %c0 : memref<?x?xf64>
  %n = memref.dim %a, %c1 : memref<?x?xf64>
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

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %three = arith.constant 3.0 : f64
  %four = arith.constant 4.0 : f64
  %half = arith.constant 0.5 : f64
  %mone = arith.constant -1.0 : f64
  %a = memref.alloc(%c2, %c2) : memref<?x?xf64>
  %da = memref.alloc(%c2, %c2) : memref<?x?xf64>
  %x = memref.alloc(%c2) : memref<?xf64>
  %dx = memref.alloc(%c2) : memref<?xf64>
  %y = memref.alloc(%c2) : memref<?xf64>
  %dy = memref.alloc(%c2) : memref<?xf64>
  memref.store %one, %a[%c0, %c0] : memref<?x?xf64>
  memref.store %two, %a[%c0, %c1] : memref<?x?xf64>
  memref.store %three, %a[%c1, %c0] : memref<?x?xf64>
  memref.store %four, %a[%c1, %c1] : memref<?x?xf64>
  memref.store %half, %da[%c0, %c0] : memref<?x?xf64>
  memref.store %zero, %da[%c0, %c1] : memref<?x?xf64>
  memref.store %zero, %da[%c1, %c0] : memref<?x?xf64>
  memref.store %one, %da[%c1, %c1] : memref<?x?xf64>
  memref.store %one, %x[%c0] : memref<?xf64>
  memref.store %mone, %x[%c1] : memref<?xf64>
  memref.store %two, %dx[%c0] : memref<?xf64>
  memref.store %one, %dx[%c1] : memref<?xf64>
  ad.fwddiff @matvec(%a, %da, %x, %dx, %y, %dy) {activity = [dup, dup, dup], ret_activity = []} : (memref<?x?xf64>, memref<?x?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
  %y0 = memref.load %y[%c0] : memref<?xf64>
  %y1 = memref.load %y[%c1] : memref<?xf64>
  %dy0 = memref.load %dy[%c0] : memref<?xf64>
  %dy1 = memref.load %dy[%c1] : memref<?xf64>
  // CHECK: y = -1 -1 dy = 4.5 9
  printf.print_format "y = {} {} dy = {} {}\n", %y0 : f64, %y1 : f64, %dy0 : f64, %dy1 : f64
  memref.dealloc %a : memref<?x?xf64>
  memref.dealloc %da : memref<?x?xf64>
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  memref.dealloc %y : memref<?xf64>
  memref.dealloc %dy : memref<?xf64>
  func.return
}
