// ad-lower-affine{marked-only=true}, the reverse pipeline's affine step,
// lowers the functions it works on (marked ad.gradient_of) and leaves the
// user's functions as written; without the option, every function.
// RUN: ad-opt %s -p 'ad-lower-affine{marked-only=true}' | filecheck %s
// RUN: ad-opt %s -p ad-lower-affine | filecheck %s --check-prefix=ALL

// CHECK-LABEL: func.func @sum(
// CHECK:         affine.for
// CHECK-LABEL: func.func @sum_grad_dc_a(
// CHECK-NOT:     affine.
// CHECK:         scf.for %i = %{{.*}} to %n step %{{.*}} iter_args(%acc = %zero) -> (f64) {
// CHECK-NEXT:      %v = memref.load %x[%i] : memref<?xf64>
// CHECK-NOT:     affine.
// ALL-NOT:     affine.
func.func @sum(%x: memref<?xf64>, %n: index) -> f64 {
  %zero = arith.constant 0.0 : f64
  %s = affine.for %i = 0 to %n iter_args(%acc = %zero) -> (f64) {
    %v = affine.load %x[%i] : memref<?xf64>
    %a = arith.addf %acc, %v : f64
    affine.yield %a : f64
  }
  func.return %s : f64
}
func.func @sum_grad_dc_a(%x: memref<?xf64>, %n: index) -> f64 attributes {ad.gradient_of = {primal = @sum, activity = ["dup", "const"], ret_activity = ["active"]}} {
  %zero = arith.constant 0.0 : f64
  %s = affine.for %i = 0 to %n iter_args(%acc = %zero) -> (f64) {
    %v = affine.load %x[%i] : memref<?xf64>
    %a = arith.addf %acc, %v : f64
    affine.yield %a : f64
  }
  func.return %s : f64
}
