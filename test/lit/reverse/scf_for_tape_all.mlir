// RUN: ad-opt %s --reverse --cache-policy=tape-all | filecheck %s
// scf.for: the reverse loop runs the same trip count with iteration k
// revisiting i = n - 1 - k; the adjoint of the loop-carried product and the
// adjoint of the outer scalar %w travel as iter_args of the reverse loop.
// With the tape-all policy every needed in-loop value gets one tape sized
// by the trip count, allocated once before the loop, popped in reverse
// order and freed after the reverse loop.

// CHECK-LABEL: func.func @prod_grad_da_a(%x: memref<?xf64>, %dx: memref<?xf64>, %w: f64, %seed: f64) -> f64
// CHECK:         %[[N:.*]] = arith.maxsi %n, %c0 : index
// CHECK-NEXT:    %tape_acc = memref.alloc(%[[N]]) {ad.workspace} : memref<?xf64>
// CHECK:         %tape_a = memref.alloc(%[[N]]) {ad.workspace} : memref<?xf64>
// CHECK:         %tape_aw = memref.alloc(%[[N]]) {ad.workspace} : memref<?xf64>
// CHECK:         %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %one) -> (f64) {
// CHECK:           memref.store %acc, %tape_acc[%{{.*}}] {ad.unchecked} : memref<?xf64>
// CHECK:           memref.store %a, %tape_a[%{{.*}}] {ad.unchecked} : memref<?xf64>
// CHECK:           memref.store %aw, %tape_aw[%{{.*}}] {ad.unchecked} : memref<?xf64>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %{{.*}}, %[[DW:.*]] = scf.for %[[K:.*]] = %c0 to %[[N]] step %c1 iter_args(%[[GACC:.*]] = %seed, %[[GW:.*]] = %[[ZERO]]) -> (f64, f64) {
// CHECK-NEXT:      %[[LAST:.*]] = arith.subi %[[N]], %c1 : index
// CHECK-NEXT:      %[[I:.*]] = arith.subi %[[LAST]], %[[K]] : index
// CHECK:           memref.load %tape_aw
// CHECK:           memref.load %tape_a
// CHECK:           memref.load %tape_acc
// CHECK:           %[[OLD:.*]] = memref.load %dx[%[[I]]] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked} : memref<?xf64>
// CHECK:           scf.yield %{{.*}}, %{{.*}} : f64, f64
// CHECK:         memref.dealloc %tape_acc {ad.workspace} : memref<?xf64>
// CHECK-NEXT:    memref.dealloc %tape_a {ad.workspace} : memref<?xf64>
// CHECK-NEXT:    memref.dealloc %tape_aw {ad.workspace} : memref<?xf64>
// CHECK-NEXT:    func.return %[[DW]] : f64

func.func @prod(%x: memref<?xf64>, %w: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %one) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %aw = arith.mulf %a, %w : f64
    %p = arith.mulf %acc, %aw : f64
    scf.yield %p : f64
  }
  func.return %r : f64
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %w: f64) -> f64 {
  %s = arith.constant 1.0 : f64
  %dw = ad.autodiff @prod(%x, %dx, %w, %s) {activity = [dup, active], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
  func.return %dw : f64
}
