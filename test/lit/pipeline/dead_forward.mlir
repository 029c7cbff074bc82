// ad-dead-forward removes the dead code of the gradients the reverse
// pipeline builds (marked ad.gradient_of) without losing a bounds check: a
// dead load of every iteration of a loop becomes two checked loads before
// it (first and last index), pinned by ad.keep, and the loop goes; other
// dead ops go. The user's functions stay as written.
// RUN: ad-opt %s -p ad-dead-forward | filecheck %s

// CHECK-LABEL: func.func @user(
// CHECK:         %unused = arith.mulf %s, %s : f64
// CHECK:         scf.for
// CHECK-LABEL: func.func @f_grad_dc_a(
// CHECK-NOT:     arith.mulf
// CHECK-NOT:     scf.for
// CHECK:         %[[FIRST:.*]] = memref.load %x[%{{.*}}] : memref<?xf64>
// CHECK:         %[[LAST:.*]] = memref.load %x[%{{.*}}] : memref<?xf64>
// CHECK:         ad.keep %[[FIRST]], %[[LAST]] : f64, f64
// CHECK-NOT:     scf.for
// CHECK:         func.return %s : f64
func.func @user(%x: memref<?xf64>, %n: index, %s: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %unused = arith.mulf %s, %s : f64
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
  }
  func.return %s : f64
}
func.func @f_grad_dc_a(%x: memref<?xf64>, %n: index, %s: f64) -> f64 attributes {ad.gradient_of = {primal = @f, activity = ["dup", "const"], ret_activity = ["active"]}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %unused = arith.mulf %s, %s : f64
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
  }
  func.return %s : f64
}
