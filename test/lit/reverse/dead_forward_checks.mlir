// RUN: ad-opt %s --reverse --no-loop-local --no-simplify | filecheck %s
// RUN: ad-opt %s --reverse --no-loop-local | filecheck %s --check-prefix=SIMPLE
// Without canonicalisation (the Python API's path), a forward-sweep loop
// whose loads are dead keeps nothing but their bounds checks. Each such
// load executed in every iteration with an affine index is replaced by two
// checked loads before the loop, at the first and the last induction value
// (transforms/dead_forward.py; `ad.twin_end` 0 and 1, both carrying the
// load's `ad.twin_id`); the loop dies, and the reverse sweep's repeats of
// the load stay unchecked, their twin being both endpoint checks, which
// ad-elide-shadow-checks keeps alive (`ad.keep`). A dead load in a branch,
// or with an index that is not affine in the induction variable, keeps its
// check in the loop. With canonicalisation (`ad-opt --reverse`'s default)
// the same happens: checked ops are pinned while canonicalize and cse run.

// sum over i = 0, 2, 4, .. < n - 1 of (x[i+1] - x[i])^2: x is never written,
// so the reverse sweep reloads x[i+1] and x[i]; the forward loads are dead.
// CHECK-LABEL: func.func @strided_grad_d_a(
// CHECK:         ad.shadow_check %x, %dx
// CHECK:         %[[RUNS:.*]] = arith.cmpi slt, %[[LB:.*]], %[[UB:.*]] : index
// CHECK-NEXT:    scf.if %[[RUNS]] {
// CHECK:           %[[LAST:.*]] = arith.addi %[[LB]], %{{.*}} : index
// CHECK:           memref.load %x[%{{.*}}] {ad.twin_id = [[A:[0-9]+]] : i64, ad.twin_end = 0 : i64} : memref<?xf64>
// CHECK:           arith.addi %{{.*}}, %[[LAST]] : index
// CHECK-NEXT:      memref.load %x[%{{.*}}] {ad.twin_id = [[A]] : i64, ad.twin_end = 1 : i64} : memref<?xf64>
// CHECK-NEXT:      ad.keep
// CHECK-NEXT:    }
// CHECK:         scf.if
// CHECK:           memref.load %x[%{{.*}}] {ad.twin_id = [[B:[0-9]+]] : i64, ad.twin_end = 0 : i64} : memref<?xf64>
// CHECK:           memref.load %x[%{{.*}}] {ad.twin_id = [[B]] : i64, ad.twin_end = 1 : i64} : memref<?xf64>
// CHECK-NOT:     scf.for %{{.*}} = %[[LB]] to %[[UB]]
// CHECK:         scf.for
// CHECK:           memref.load %x[%{{.*}}] {ad.twin_of = [[A]] : i64, ad.unchecked}
// CHECK:           memref.load %x[%{{.*}}] {ad.twin_of = [[B]] : i64, ad.unchecked}
// CHECK:           memref.load %dx[%{{.*}}] {ad.twin_of = [[B]] : i64, ad.unchecked}
// CHECK:           memref.store %{{.*}}, %dx[%{{.*}}] {ad.twin_of = [[B]] : i64, ad.unchecked}
// CHECK:         func.return
// SIMPLE-LABEL: func.func @strided_grad_d_a(
// SIMPLE:         scf.if
// SIMPLE:           memref.load %x[%{{.*}}] {ad.twin_id = [[A:[0-9]+]] : i64, ad.twin_end = 0 : i64} : memref<?xf64>
// SIMPLE:           memref.load %x[%{{.*}}] {ad.twin_id = [[A]] : i64, ad.twin_end = 1 : i64} : memref<?xf64>
// SIMPLE:         scf.for
// SIMPLE:           memref.load %x[%{{.*}}] {ad.twin_of = [[A]] : i64, ad.unchecked}
// SIMPLE:         func.return

// A dead load under a branch (it may never run: no hoisting) and one at
// a non-affine index x[i * i]: both keep their checks in the forward loop.
// CHECK-LABEL: func.func @kept_grad_dc_a(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[SQ:.*]] = arith.muli %[[I]], %[[I]] : index
// CHECK-NEXT:      memref.load %x[%[[SQ]]] {ad.twin_id = {{[0-9]+}} : i64} : memref<?xf64>
// CHECK:           scf.if
// CHECK-NEXT:        memref.load %x[%[[I]]] {ad.twin_id = {{[0-9]+}} : i64} : memref<?xf64>
// CHECK:         scf.for
// CHECK:         func.return
func.func @strided(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %m = arith.subi %n, %c1 : index
  %r = scf.for %i = %c0 to %m step %c2 iter_args(%s = %z) -> (f64) {
    %i1 = arith.addi %i, %c1 : index
    %a = memref.load %x[%i1] : memref<?xf64>
    %b = memref.load %x[%i] : memref<?xf64>
    %d = arith.subf %a, %b : f64
    %d2 = arith.mulf %d, %d : f64
    %t = arith.addf %s, %d2 : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}

func.func @kept(%x: memref<?xf64>, %k: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %k step %c1 iter_args(%s = %z) -> (f64) {
    %sq = arith.muli %i, %i : index
    %a = memref.load %x[%sq] : memref<?xf64>
    %small = arith.cmpi ult, %i, %c1 : index
    %b = scf.if %small -> (f64) {
      %v = memref.load %x[%i] : memref<?xf64>
      scf.yield %v : f64
    } else {
      scf.yield %z : f64
    }
    %t = arith.addf %s, %a : f64
    %u = arith.addf %t, %b : f64
    scf.yield %u : f64
  }
  func.return %r : f64
}

func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %k: index) -> (f64) {
  %one = arith.constant 1.0 : f64
  ad.autodiff @strided(%x, %dx, %one) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @kept(%x, %dx, %k, %one) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, index, f64) -> ()
  %r = arith.constant 0.0 : f64
  func.return %r : f64
}
