// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/parallel.mlir: a matrix-vector product in
// scf.parallel (generic form here; upstream's custom form parses too).
// ad-expand-upstream-ops runs it as a scf.for nest before differentiating.
// a = [[1, 2], [3, 4]], da = I, x = [1, 1], dx = [1, 2]:
// y = a x = [3, 7], dy = da x + a dx = [1 + 5, 1 + 11]
// CHECK: y = 3 7 dy = 6 12

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

func.func @dmatvec(%a: memref<?x?xf64>, %da: memref<?x?xf64>, %x: memref<?xf64>, %dx: memref<?xf64>, %y: memref<?xf64>, %dy: memref<?xf64>) {
  ad.fwddiff @matvec(%a, %da, %x, %dx, %y, %dy) {activity = [dup, dup, dup], ret_activity = []} : (memref<?x?xf64>, memref<?x?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
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
  memref.store %one, %da[%c0, %c0] : memref<?x?xf64>
  memref.store %zero, %da[%c0, %c1] : memref<?x?xf64>
  memref.store %zero, %da[%c1, %c0] : memref<?x?xf64>
  memref.store %one, %da[%c1, %c1] : memref<?x?xf64>
  memref.store %one, %x[%c0] : memref<?xf64>
  memref.store %one, %x[%c1] : memref<?xf64>
  memref.store %one, %dx[%c0] : memref<?xf64>
  memref.store %two, %dx[%c1] : memref<?xf64>
  func.call @dmatvec(%a, %da, %x, %dx, %y, %dy) : (memref<?x?xf64>, memref<?x?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
  %y0 = memref.load %y[%c0] : memref<?xf64>
  %y1 = memref.load %y[%c1] : memref<?xf64>
  %d0 = memref.load %dy[%c0] : memref<?xf64>
  %d1 = memref.load %dy[%c1] : memref<?xf64>
  printf.print_format "y = {} {} dy = {} {}\n", %y0 : f64, %y1 : f64, %d0 : f64, %d1 : f64
  func.return
}
