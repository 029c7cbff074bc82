// RUN: ad-opt %s --reverse | filecheck %s
// RUN: ad-run %s | filecheck %s --check-prefix=OUT
// Reverse mode through a forward (jvp) rule of a function with an array
// argument: the rule is linear in its tangents, so the cotangent of x[i] is
// the rule's output tangent for a tangent buffer holding 1.0 at element i
// (a loop over x's elements, one call each, the buffer reset after it),
// contracted with the result's adjoint and added into x's shadow; the
// scalar s gets one call with a unit tangent and zero buffers. @wsum's rule
// says d/dx_i = 3 s x_i (deliberately not 2 s x_i), so the numbers show
// that it ran.

// s * sum_i x_i^2
func.func private @wsum(%x: memref<?xf64>, %s: f64) -> f64 attributes {ad.custom_rule = {forward = @wsum_jvp}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %zero = arith.constant 0.0 : f64
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %v, %v : f64
    %a = arith.addf %acc, %sq : f64
    scf.yield %a : f64
  }
  %y = arith.mulf %s, %sum : f64
  func.return %y : f64
}
// (x, s, tangent of x, tangent of s) -> (wsum, its tangent: s sum 3 x_i tx_i + ts sum x_i^2)
func.func private @wsum_jvp(%x: memref<?xf64>, %s: f64, %tx: memref<?xf64>, %ts: f64) -> (f64, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %zero = arith.constant 0.0 : f64
  %three = arith.constant 3.0 : f64
  %sum, %dot = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %dacc = %zero) -> (f64, f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %t = memref.load %tx[%i] : memref<?xf64>
    %sq = arith.mulf %v, %v : f64
    %a = arith.addf %acc, %sq : f64
    %v3 = arith.mulf %three, %v : f64
    %vt = arith.mulf %v3, %t : f64
    %d = arith.addf %dacc, %vt : f64
    scf.yield %a, %d : f64, f64
  }
  %y = arith.mulf %s, %sum : f64
  %dx = arith.mulf %s, %dot : f64
  %ds = arith.mulf %ts, %sum : f64
  %dy = arith.addf %dx, %ds : f64
  func.return %y, %dy : f64, f64
}
func.func @f(%x: memref<?xf64>, %s: f64) -> f64 {
  %y = func.call @wsum(%x, %s) : (memref<?xf64>, f64) -> f64
  %two = arith.constant 2.0 : f64
  %z = arith.mulf %two, %y : f64
  func.return %z : f64
}

// CHECK-LABEL: func.func @f_grad_da_a(%x: memref<?xf64>, %dx: memref<?xf64>, %s: f64, %seed: f64) -> f64
// CHECK:         func.call @wsum(%x, %s) {ad.custom_call = {primal = @wsum, forward = @wsum_jvp}}
// The tangent buffer of x, zeroed; s's call: unit tangent, zero buffer.
// CHECK:         %[[TX:.*]] = memref.alloc(%{{.*}}) : memref<?xf64>
// CHECK:         scf.for
// CHECK:           memref.store %{{.*}}, %[[TX]][%{{.*}}]
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK:         func.call @wsum_jvp(%x, %s, %[[TX]], %[[ONE]])
// x's loop: 1.0 at element i, one call, 0.0 back, the contraction into dx[i].
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memref.store %[[ONE]], %[[TX]][%[[I]]] {ad.own_sizes
// CHECK-NEXT:      %{{.*}}, %[[T:.*]] = func.call @wsum_jvp(%x, %s, %[[TX]], %{{.*}})
// CHECK-NEXT:      %[[C:.*]] = arith.mulf %{{.*}}, %[[T]] : f64
// CHECK-NEXT:      memref.store %{{.*}}, %[[TX]][%[[I]]] {ad.own_sizes
// CHECK-NEXT:      %[[OLD:.*]] = memref.load %dx[%[[I]]]
// CHECK-NEXT:      %[[NEW:.*]] = arith.addf %[[OLD]], %[[C]] : f64
// CHECK-NEXT:      memref.store %[[NEW]], %dx[%[[I]]]
// CHECK:         memref.dealloc %[[TX]] : memref<?xf64>

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  // x = [1.5, 2], s = 0.5, f = 2 wsum: by the rule dx_i = 2 * 3 s x_i, ds = 2 sum x^2
  // OUT: dx = 4.5 6
  // OUT: ds = 12.5
  %x = memref.alloc(%c2) : memref<?xf64>
  %dx = memref.alloc(%c2) : memref<?xf64>
  %v0 = arith.constant 1.5 : f64
  %v1 = arith.constant 2.0 : f64
  memref.store %v0, %x[%c0] : memref<?xf64>
  memref.store %v1, %x[%c1] : memref<?xf64>
  memref.store %zero, %dx[%c0] : memref<?xf64>
  memref.store %zero, %dx[%c1] : memref<?xf64>
  %ds = ad.autodiff @f(%x, %dx, %half, %one) {activity = [dup, active], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
  %d0 = memref.load %dx[%c0] : memref<?xf64>
  %d1 = memref.load %dx[%c1] : memref<?xf64>
  "printf.print_format"(%d0, %d1) {format_str = "dx = {} {}\0A"} : (f64, f64) -> ()
  printf.print_format "ds = {}\n", %ds : f64
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  func.return
}
