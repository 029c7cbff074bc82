// RUN: ad-opt %s --reverse --print-cache-report 2>&1 >/dev/null | filecheck %s
// An explicit Euler loop overwriting its state each step tapes one state per
// step (u[i], for the cube's derivative), not more: u[i-1] enters linearly,
// du[i] only linearly, and the indices are recomputed.

// CHECK-LABEL: cache report for @euler_grad_ddcc_a
// CHECK:       tape      %a {{.*}}f64 x steps * (dim(u, 0) - 1)
// CHECK-NOT:   {{^  tape }}
// CHECK:       taped bytes: 8*steps*(dim(u, 0) - 1)
func.func @euler(%u: memref<?xf64>, %du: memref<?xf64>, %steps: index, %dt: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %k = arith.constant 0.1 : f64
  %n = memref.dim %u, %c0 : memref<?xf64>
  scf.for %t = %c0 to %steps step %c1 {
    scf.for %i = %c1 to %n step %c1 {
      %a = memref.load %u[%i] : memref<?xf64>
      %im = arith.subi %i, %c1 : index
      %b = memref.load %u[%im] : memref<?xf64>
      %a2 = arith.mulf %a, %a : f64
      %a3 = arith.mulf %a2, %a : f64
      %kb = arith.mulf %k, %b : f64
      %f = arith.subf %kb, %a3 : f64
      memref.store %f, %du[%i] : memref<?xf64>
    }
    scf.for %i = %c1 to %n step %c1 {
      %a = memref.load %u[%i] : memref<?xf64>
      %g = memref.load %du[%i] : memref<?xf64>
      %s = arith.mulf %dt, %g : f64
      %v = arith.addf %a, %s : f64
      memref.store %v, %u[%i] : memref<?xf64>
    }
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %u[%i] : memref<?xf64>
    %s = arith.addf %acc, %a : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
func.func @main(%u: memref<?xf64>, %du: memref<?xf64>, %d: memref<?xf64>, %dd: memref<?xf64>, %n: index, %dt: f64) {
  %s = arith.constant 1.0 : f64
  ad.autodiff @euler(%u, %du, %d, %dd, %n, %dt, %s) {activity = [dup, dup, const, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index, f64, f64) -> ()
  func.return
}
