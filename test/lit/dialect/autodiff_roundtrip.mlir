// RUN: ad-opt %s | filecheck %s
// RUN: ad-opt %s --print-op-generic | ad-opt | filecheck %s
// The ad dialect's custom syntax round-trips through ad-opt, in custom and
// generic form.

func.func @f(%x: memref<?xf64>, %y: f64) -> f64 {
  %r = arith.mulf %y, %y : f64
  func.return %r : f64
}

// CHECK-LABEL: func.func @main
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %y: f64) -> (f64, f64) {
  %one = arith.constant 1.0 : f64
  // CHECK: %{{.*}} = ad.autodiff @f(%x, %dx, %y, %one) {activity = [dup, active], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
  %d = ad.autodiff @f(%x, %dx, %y, %one) {activity = [dup, active], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
  // CHECK: %p = ad.autodiff @f(%x, %x, %y) {activity = [dupnoneed, const], ret_activity = [const], with_primal} : (memref<?xf64>, memref<?xf64>, f64) -> f64
  %p = ad.autodiff @f(%x, %x, %y) {activity = [dupnoneed, const], ret_activity = [const], with_primal} : (memref<?xf64>, memref<?xf64>, f64) -> f64
  // CHECK: %[[T:.*]] = ad.tape.create %{{.*}} : !ad.tape<f64>
  // CHECK-NEXT: ad.tape.push %y, %[[T]] : f64, !ad.tape<f64>
  // CHECK-NEXT: %{{.*}} = ad.tape.pop %[[T]] : !ad.tape<f64> -> f64
  // CHECK-NEXT: ad.tape.free %[[T]] : !ad.tape<f64>
  // CHECK-NEXT: ad.tape.create : !ad.tape<index>
  %n = arith.constant 4 : index
  %t = ad.tape.create %n : !ad.tape<f64>
  ad.tape.push %y, %t : f64, !ad.tape<f64>
  %v = ad.tape.pop %t : !ad.tape<f64> -> f64
  ad.tape.free %t : !ad.tape<f64>
  %g = ad.tape.create : !ad.tape<index>
  func.return %d, %v : f64, f64
}
