// RUN: ad-opt %s --reverse | filecheck %s
// A tape whose capacity is unknown before its top-level op (the inner
// loop's bounds read the outer induction variable; a for loop inside a
// while loop) is growable; ad-build-gradients makes room once per run of
// the outermost loop whose nest's trip counts are known at its start
// (`ad.tape.reserve` of the trip count, saturated), and marks the pushes
// of that nest `ad.reserved`: they need no test for room.

// CHECK-LABEL: func.func @tri_grad_d_a
// CHECK: %[[T:.*]] = ad.tape.create : !ad.tape<f64>
// CHECK: scf.for %[[I:.*]] = %c0 to %n step %c1
// CHECK: %[[SPAN:.*]] = arith.subi %n, %[[I]] : index
// CHECK: %[[RUNS:.*]] = arith.cmpi sgt, %n, %[[I]] : index
// CHECK: %[[COUNT:.*]] = arith.select %[[RUNS]], %[[SPAN]], %c0 : index
// CHECK: %[[N:.*]] = arith.minui %[[COUNT]]
// CHECK-NEXT: ad.tape.reserve %[[T]], %[[N]] : !ad.tape<f64>
// CHECK-NEXT: scf.for %{{.*}} = %[[I]] to %n step %c1
// CHECK: %[[P:.*]] = math.tanh
// CHECK-NEXT: ad.tape.push %[[P]], %[[T]] {ad.reserved} : f64, !ad.tape<f64>
// CHECK: ad.tape.pop %[[T]]

// CHECK-LABEL: func.func @while_for_grad_dc_a
// CHECK: %[[T:.*]] = ad.tape.create : !ad.tape<f64>
// CHECK: scf.while
// CHECK: ^bb0(
// CHECK-NEXT: %[[N:.*]] = arith.maxsi %n, %c0 : index
// CHECK-NEXT: ad.tape.reserve %[[T]], %[[N]] : !ad.tape<f64>
// CHECK-NEXT: scf.for
// CHECK: ad.tape.push %{{.*}}, %[[T]] {ad.reserved}

// A tape of known capacity needs no reserve (its pushes are never tested).
// CHECK-LABEL: func.func @flat_grad_d_a
// CHECK-NOT: ad.tape.reserve
// CHECK-NOT: ad.reserved
// CHECK: func.return
func.func @tri(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %s = scf.for %j = %i to %n step %c1 iter_args(%a2 = %acc) -> (f64) {
      %a = memref.load %x[%j] : memref<?xf64>
      %p = math.tanh %a : f64
      %t = arith.addf %a2, %p : f64
      scf.yield %t : f64
    }
    scf.yield %s : f64
  }
  func.return %r : f64
}
func.func @while_for(%x: memref<?xf64>, %m: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r:2 = scf.while (%k = %c0, %acc = %z) : (index, f64) -> (index, f64) {
    %go = arith.cmpi slt, %k, %m : index
    scf.condition(%go) %k, %acc : index, f64
  } do {
  ^bb0(%k2: index, %acc2: f64):
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%a2 = %acc2) -> (f64) {
      %a = memref.load %x[%j] : memref<?xf64>
      %p = math.tanh %a : f64
      %t = arith.addf %a2, %p : f64
      scf.yield %t : f64
    }
    %k3 = arith.addi %k2, %c1 : index
    scf.yield %k3, %s : index, f64
  }
  func.return %r#1 : f64
}
func.func @flat(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%a2 = %z) -> (f64) {
    %a = memref.load %x[%j] : memref<?xf64>
    %p = math.tanh %a : f64
    %t = arith.addf %a2, %p : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %m: index) {
  %one = arith.constant 1.0 : f64
  ad.autodiff @tri(%x, %dx, %one) {activity = [dup], ret_activity = [active]}
      : (memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @while_for(%x, %dx, %m, %one) {activity = [dup, const], ret_activity = [active]}
      : (memref<?xf64>, memref<?xf64>, index, f64) -> ()
  ad.autodiff @flat(%x, %dx, %one) {activity = [dup], ret_activity = [active]}
      : (memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}
