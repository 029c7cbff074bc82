// ad-split-sweeps: a gradient built for a split request (marked `split`,
// with an ad.split_point where its forward sweep ends) becomes an
// augmented primal that returns the primal results and the tape, and a
// reverse function that takes the shadows, the seeds and the tape; the
// split ad.autodiff ops become calls of them. The tape here: the tape
// buffer and its counter (a stack slot of the forward sweep, now on the
// heap and freed by the reverse), the primal memref and the trip count;
// the constants %c0 and %c1 are rebuilt, not taped.
// RUN: ad-opt %s -p ad-split-sweeps | filecheck %s

// CHECK-LABEL: func.func @f_grad_d_a_s_aug(%x: memref<?xf64>) -> (f64, memref<?xf64>, index, memref<1xindex>, memref<?xf64>) {
// CHECK:         %count = memref.alloc() : memref<1xindex>
// CHECK:         memref.store %e, %tape[%k] {ad.unchecked} : memref<?xf64>
// CHECK:         func.return %s, %x, %n, %count, %tape : f64, memref<?xf64>, index, memref<1xindex>, memref<?xf64>
// CHECK-LABEL: func.func @f_grad_d_a_s_rev(%dx: memref<?xf64>, %seed: f64, %x: memref<?xf64>, %n: index, %count: memref<1xindex>, %tape: memref<?xf64>) {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
// CHECK:         memref.load %tape[%{{.*}}] {ad.unchecked} : memref<?xf64>
// CHECK:         memref.dealloc %tape : memref<?xf64>
// CHECK-NEXT:    memref.dealloc %count : memref<1xindex>
// CHECK-NEXT:    func.return
// CHECK-NOT:   ad.split_point
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %y, %0, %1, %2, %3 = func.call @f_grad_d_a_s_aug(%x) : (memref<?xf64>) -> (f64, memref<?xf64>, index, memref<1xindex>, memref<?xf64>)
// CHECK-NEXT:    func.call @f_grad_d_a_s_rev(%dx, %seed, %0, %1, %2, %3) : (memref<?xf64>, f64, memref<?xf64>, index, memref<1xindex>, memref<?xf64>) -> ()
// CHECK-NOT:   ad.autodiff

func.func @f(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %z = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %e = math.sin %v : f64
    %p = arith.addf %acc, %e : f64
    scf.yield %p : f64
  }
  func.return %s : f64
}
func.func @f_grad_d_a_s(%x: memref<?xf64>, %dx: memref<?xf64>, %seed: f64) -> f64 attributes {ad.gradient_of = {primal = @f, activity = ["dup"], ret_activity = ["active"], with_primal, split}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %z = arith.constant 0.0 : f64
  %tape = memref.alloc(%n) : memref<?xf64>
  %count = memref.alloca() : memref<1xindex>
  memref.store %c0, %count[%c0] {ad.unchecked} : memref<1xindex>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %e = math.cos %v : f64
    %k = memref.load %count[%c0] {ad.unchecked} : memref<1xindex>
    memref.store %e, %tape[%k] {ad.unchecked} : memref<?xf64>
    %k1 = arith.addi %k, %c1 : index
    memref.store %k1, %count[%c0] {ad.unchecked} : memref<1xindex>
    %e2 = math.sin %v : f64
    %p = arith.addf %acc, %e2 : f64
    scf.yield %p : f64
  }
  ad.split_point
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  scf.for %j = %c0 to %n step %c1 {
    %k = memref.load %count[%c0] {ad.unchecked} : memref<1xindex>
    %k1 = arith.subi %k, %c1 : index
    memref.store %k1, %count[%c0] {ad.unchecked} : memref<1xindex>
    %e = memref.load %tape[%k1] {ad.unchecked} : memref<?xf64>
    %g = arith.mulf %seed, %e : f64
    %i = arith.subi %n, %j : index
    %i1 = arith.subi %i, %c1 : index
    %d = memref.load %dx[%i1] : memref<?xf64>
    %d1 = arith.addf %d, %g : f64
    memref.store %d1, %dx[%i1] : memref<?xf64>
  }
  memref.dealloc %tape : memref<?xf64>
  func.return %s : f64
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %seed: f64) -> f64 {
  %y, %t = ad.autodiff @f(%x) {activity = [dup], ret_activity = [active], split = forward} : (memref<?xf64>) -> (f64, !ad.split_tape)
  ad.autodiff @f(%dx, %seed, %t) {activity = [dup], ret_activity = [active], split = reverse} : (memref<?xf64>, f64, !ad.split_tape) -> ()
  func.return %y : f64
}
