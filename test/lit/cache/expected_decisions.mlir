// RUN: ad-opt %s --reverse --no-loop-local --print-cache-report 2>&1 >/dev/null | filecheck %s
// RUN: ad-opt %s --reverse --no-loop-local --print-cache-report --cache-policy=tape-all 2>&1 >/dev/null | filecheck %s --check-prefix=TAPEALL
// The cache decisions issue 6 expects, one function each:
// - sum((x[i+1]-x[i])^2): nothing overwritten, indices recomputed: 0 bytes;
// - rho = sum(exp(-3(x+1))): the exps are taped (recomputing exp costs more
//   than 8 bytes), x itself could be reloaded;
// - x[i] = x[i]*x[i] then sum(x): exactly the overwritten x, n doubles;
// - x[i] = x[i] + 1 then sum(x*x): the old x is not needed, 0 bytes;
// - b[i] = a[i]*a[i]: 0 bytes with noalias a, n doubles when a and b may alias.

// CHECK-LABEL: cache report for @sdiff_grad_d_a (gradient of @sdiff, policy minimal)
// CHECK-DAG:     recompute %i1 {{.*}}arith.addi of values available in the reverse sweep
// CHECK-DAG:     reload    %a {{.*}}memref.load: no later write may overwrite it (alias analysis)
// CHECK-DAG:     reload    %b {{.*}}memref.load: no later write may overwrite it (alias analysis)
// CHECK:         taped bytes: 0
// TAPEALL-LABEL: cache report for @sdiff_grad_d_a (gradient of @sdiff, policy tape-all)
// TAPEALL:       tape      %i1 {{.*}}index x ceildiv((dim(x, 0) - 1), 2)
// TAPEALL:       tape      %d {{.*}}f64 x ceildiv((dim(x, 0) - 1), 2)
// TAPEALL:       taped bytes: 8*(ceildiv((dim(x, 0) - 1), 2)) + 8*(ceildiv((dim(x, 0) - 1), 2))

func.func @sdiff(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %m = arith.subi %n, %c1 : index
  %r = scf.for %i = %c0 to %m step %c2 iter_args(%acc = %z) -> (f64) {
    %i1 = arith.addi %i, %c1 : index
    %a = memref.load %x[%i1] : memref<?xf64>
    %b = memref.load %x[%i] : memref<?xf64>
    %d = arith.subf %a, %b : f64
    %d2 = arith.mulf %d, %d : f64
    %s = arith.addf %acc, %d2 : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// CHECK-LABEL: cache report for @energy_grad_d_a
// CHECK:         tape      %e {{.*}}f64 x dim(x, 0) {{.*}}math.exp: cost model: taping it costs 8 bytes per iteration; recomputing it instead would cost 16.27 per iteration: reload %a (0.25), recompute math.exp (16), recompute arith.mulf (0.01), recompute arith.addf (0.01)
// CHECK:         taped bytes: 8*(dim(x, 0))
func.func @energy(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %m3 = arith.constant -3.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %rho = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %t = arith.addf %a, %one : f64
    %u = arith.mulf %m3, %t : f64
    %e = math.exp %u : f64
    %s = arith.addf %acc, %e : f64
    scf.yield %s : f64
  }
  %r2 = arith.mulf %rho, %rho : f64
  %r3 = arith.mulf %r2, %rho : f64
  %s1 = arith.addf %r2, %r3 : f64
  func.return %s1 : f64
}

// CHECK-LABEL: cache report for @square_in_place_grad_d_a
// CHECK:         tape      %a {{.*}}f64 x dim(x, 0) {{.*}}memref.load: overwritten later: store at {{.*}}expected_decisions.mlir
// CHECK:         taped bytes: 8*(dim(x, 0))
func.func @square_in_place(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %p = arith.mulf %a, %a : f64
    memref.store %p, %x[%i] : memref<?xf64>
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %s = arith.addf %acc, %a : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// CHECK-LABEL: cache report for @shift_in_place_grad_d_a
// CHECK-NOT:     {{^  tape }}
// CHECK:         taped bytes: 0
func.func @shift_in_place(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %p = arith.addf %a, %one : f64
    memref.store %p, %x[%i] : memref<?xf64>
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %q = arith.mulf %a, %a : f64
    %s = arith.addf %acc, %q : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// CHECK-LABEL: cache report for @copy_noalias_grad_dd_a
// CHECK:         reload    %v
// CHECK:         taped bytes: 0
// CHECK-LABEL: cache report for @copy_plain_grad_dd_a
// CHECK:         tape      %v {{.*}}f64 x dim(a, 0) {{.*}}may alias
// CHECK:         taped bytes: 8*(dim(a, 0))
func.func @copy_noalias(%a: memref<?xf64> {ad.noalias}, %b: memref<?xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %a, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    memref.store %w, %b[%i] : memref<?xf64>
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %u = memref.load %b[%i] : memref<?xf64>
    %s = arith.addf %acc, %u : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
func.func @copy_plain(%a: memref<?xf64>, %b: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %a, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    memref.store %w, %b[%i] : memref<?xf64>
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %u = memref.load %b[%i] : memref<?xf64>
    %s = arith.addf %acc, %u : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %y: memref<?xf64>, %dy: memref<?xf64>) {
  %s = arith.constant 1.0 : f64
  ad.autodiff @sdiff(%x, %dx, %s) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @energy(%x, %dx, %s) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @square_in_place(%x, %dx, %s) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @shift_in_place(%x, %dx, %s) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @copy_noalias(%x, %dx, %y, %dy, %s) {activity = [dup, dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @copy_plain(%x, %dx, %y, %dy, %s) {activity = [dup, dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}
