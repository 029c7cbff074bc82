// RUN: ad-opt %s --reverse | filecheck %s
// Callees reached through func.call are differentiated by inlining them into
// a copy of the function first: the gradient contains the callee's adjoint
// (d sin = cos) and no call; the primal functions are left unchanged.

// CHECK-LABEL: func.func @helper(
// CHECK-LABEL: func.func @outer(
// CHECK:         func.call @helper
// CHECK-LABEL: func.func @outer_grad_da_a(
// CHECK-NOT:     func.call
// CHECK:         math.cos
// CHECK:         func.return
func.func @helper(%a: f64, %b: f64) -> f64 {
  %s = math.sin %a : f64
  %p = arith.mulf %s, %b : f64
  func.return %p : f64
}
func.func @outer(%x: memref<?xf64>, %w: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %h = func.call @helper(%a, %w) : (f64, f64) -> f64
    %s = arith.addf %acc, %h : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %w: f64) -> f64 {
  %s = arith.constant 1.0 : f64
  %dw = ad.autodiff @outer(%x, %dx, %w, %s) {activity = [dup, active], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
  func.return %dw : f64
}
