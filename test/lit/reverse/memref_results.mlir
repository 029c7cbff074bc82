// RUN: ad-opt %s --reverse | filecheck %s
// Results of any kind (issue 16): a memref result is `dup`, its seed a
// memref of the result's sizes passed where a float result's seed goes; the
// reverse sweep checks the seed's sizes against the result and adds it into
// the returned memory's shadow (Enzyme's seeding of a returned pointer),
// then runs the reverse of the body. The returned buffer, which the primal
// hands to its caller, is freed when the gradient does not return the
// primal. Several float results take one seed each.

// With the primal (inserted first): the buffer is returned, not freed.
// CHECK-LABEL: func.func @square_grad_d_d_p(
// CHECK:         memref.dealloc %{{.*}} : memref<?xf64>
// CHECK-NOT:     memref.dealloc %out
// CHECK:         func.return %out : memref<?xf64>

// Without it:
// CHECK-LABEL: func.func @square_grad_d_d(
// CHECK-SAME:      %x: memref<?xf64>, %dx: memref<?xf64>, %dret: memref<?xf64>) {
// CHECK:         %out = memref.alloc(%n) : memref<?xf64>
// CHECK:         %[[DOUT:.*]] = memref.alloc(%n) : memref<?xf64>
// CHECK:         ad.shadow_check %out, %dret
// CHECK:         scf.for %[[I:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK-NEXT:      %[[S:.*]] = memref.load %dret[%[[I]]] : memref<?xf64>
// CHECK-NEXT:      %[[D:.*]] = memref.load %[[DOUT]][%[[I]]] {ad.own_sizes, ad.unchecked}
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[D]], %[[S]] : f64
// CHECK-NEXT:      memref.store %[[SUM]], %[[DOUT]][%[[I]]] {ad.own_sizes, ad.unchecked}
// CHECK:         scf.for
// CHECK:           arith.mulf
// CHECK:         memref.dealloc %[[DOUT]]
// CHECK-NEXT:    memref.dealloc %out
// CHECK-NEXT:    func.return
func.func @square(%x: memref<?xf64>) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %out = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %v, %v : f64
    memref.store %sq, %out[%i] : memref<?xf64>
  }
  func.return %out : memref<?xf64>
}

// A view of an argument: the seed goes into the same view of its shadow.
// CHECK-LABEL: func.func @tail_grad_d_d(
// CHECK:         %[[V:.*]] = memref.subview %x
// CHECK:         ad.shadow_check %[[V]], %dret
// CHECK:         %[[DV:.*]] = memref.subview %dx
// CHECK:         scf.for
// CHECK:           memref.load %dret
// CHECK:           memref.store %{{.*}}, %[[DV]]
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return
func.func @tail(%x: memref<?xf64>) -> memref<?xf64, strided<[?], offset: ?>> {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %m = arith.subi %n, %c1 : index
  %v = memref.subview %x[%c1] [%m] [%c1] : memref<?xf64> to memref<?xf64, strided<[?], offset: ?>>
  func.return %v : memref<?xf64, strided<[?], offset: ?>>
}

// Two float results and a memref: a seed each, in result order.
// CHECK-LABEL: func.func @energy_forces_grad_d_aad(
// CHECK-SAME:      %x: memref<?xf64>, %dx: memref<?xf64>, %seed: f64, %seed_1: f64, %dret: memref<?xf64>) {
func.func @energy_forces(%x: memref<?xf64>) -> (f64, f64, memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %f = memref.alloc(%n) : memref<?xf64>
  %e, %q = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z, %b = %z) -> (f64, f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %v, %v : f64
    %a2 = arith.addf %a, %sq : f64
    %b2 = arith.addf %b, %v : f64
    %neg = arith.negf %v : f64
    memref.store %neg, %f[%i] : memref<?xf64>
    scf.yield %a2, %b2 : f64, f64
  }
  func.return %e, %q, %f : f64, f64, memref<?xf64>
}

func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %d: memref<?xf64>, %dv: memref<?xf64, strided<[?], offset: ?>>, %s: f64) {
  ad.autodiff @square(%x, %dx, %d) {activity = [dup], ret_activity = [dup]}
    : (memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
  %p = ad.autodiff @square(%x, %dx, %d) {activity = [dup], ret_activity = [dup], with_primal}
    : (memref<?xf64>, memref<?xf64>, memref<?xf64>) -> memref<?xf64>
  memref.dealloc %p : memref<?xf64>
  ad.autodiff @tail(%x, %dx, %dv) {activity = [dup], ret_activity = [dup]}
    : (memref<?xf64>, memref<?xf64>, memref<?xf64, strided<[?], offset: ?>>) -> ()
  ad.autodiff @energy_forces(%x, %dx, %s, %s, %d) {activity = [dup], ret_activity = [active, active, dup]}
    : (memref<?xf64>, memref<?xf64>, f64, f64, memref<?xf64>) -> ()
  func.return
}
