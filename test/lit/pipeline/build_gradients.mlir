// ad-build-gradients: the reverse sweep of each prepared copy (activity,
// cache plan, forward and reverse sweep). The gradient takes the copy's
// place and keeps its mark; its tapes are still ad.tape ops, every access is
// checked (no ad.unchecked: that is decided last), and the reverse sweep's
// repeats of forward accesses name their twins. Each ad.autodiff becomes a
// call of its gradient; one without a prepared copy is an error.
// RUN: ad-opt %s -p ad-build-gradients | filecheck %s
// RUN: ad-opt %s -p 'ad-build-gradients{cache-policy="tape-all" report="text"}' 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: not ad-opt %S/Inputs/missing_primal.mlir -p ad-build-gradients 2>&1 | filecheck %s --check-prefix=NOCOPY
// RUN: not ad-opt %s -p 'ad-build-gradients{cache-policy="all"}' 2>&1 | filecheck %s --check-prefix=POLICY

// CHECK-LABEL: func.func @prod(
// CHECK-NOT:     ad.tape
// CHECK-NOT:     ad.twin
// CHECK:       func.func @prod_grad_dc_a(%x: memref<?xf64>, %dx: memref<?xf64>, %n: index, %seed: f64) attributes {ad.gradient_of = {primal = @prod, activity = ["dup", "const"], ret_activity = ["active"]}} {
// CHECK-NEXT:    ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
// CHECK-NOT:     ad.unchecked
// CHECK:         %tape_acc = ad.tape.create %{{.*}} : !ad.tape<f64>
// CHECK:           ad.tape.push %acc, %tape_acc : f64, !ad.tape<f64>
// CHECK-NEXT:      %v = memref.load %x[%i] {ad.twin_id = 0 : i64} : memref<?xf64>
// CHECK:           ad.tape.pop %tape_acc : !ad.tape<f64> -> f64
// CHECK:           memref.load %dx[%{{.*}}] {ad.twin_of = 0 : i64} : memref<?xf64>
// CHECK:           memref.store %{{.*}}, %dx[%{{.*}}] {ad.twin_of = 0 : i64} : memref<?xf64>
// CHECK:         ad.tape.free %tape_acc : !ad.tape<f64>
// CHECK-NOT:     ad.unchecked
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    func.call @prod_grad_dc_a(%x, %dx, %n, %s) : (memref<?xf64>, memref<?xf64>, index, f64) -> ()

// REPORT: cache report for @prod_grad_dc_a (gradient of @prod, policy tape-all)

// NOCOPY: missing_primal.mlir:5:3: error: 'ad.autodiff': has no copy of its primal to build a gradient from: run ad-clone-primals before ad-build-gradients (or ad-reverse)

// POLICY: error: unknown cache-policy 'all' (minimal, min-memory, tape-all)
func.func @prod(%x: memref<?xf64>, %n: index) -> f64 {
  %one = arith.constant 1.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %one) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %m = arith.mulf %acc, %v : f64
    scf.yield %m : f64
  }
  func.return %p : f64
}
func.func @prod_grad_dc_a(%x: memref<?xf64>, %n: index) -> f64 attributes {ad.gradient_of = {primal = @prod, activity = ["dup", "const"], ret_activity = ["active"]}} {
  %one = arith.constant 1.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %one) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %m = arith.mulf %acc, %v : f64
    scf.yield %m : f64
  }
  func.return %p : f64
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %n: index, %s: f64) {
  ad.autodiff @prod(%x, %dx, %n, %s) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, index, f64) -> ()
  func.return
}
