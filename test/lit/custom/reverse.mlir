// RUN: ad-opt %s --reverse --no-loop-local | filecheck %s
// RUN: ad-opt %s --reverse --no-loop-local --print-cache-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: ad-run %s | filecheck %s --check-prefix=OUT
// A custom reverse rule (ad.custom_rule, docs/custom_rules.md): @sq's rule
// says d sq/dx = 3x (deliberately not 2x), so the numbers show that the
// rule ran instead of the derivative of @sq's body.

func.func private @sq(%x: f64) -> f64 attributes {ad.custom_rule = {augmented_primal = @sq_fwd, reverse = @sq_bwd}} {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}
// The augmented primal: sq's result, then one residual (3x).
func.func private @sq_fwd(%x: f64) -> (f64, f64) {
  %y = func.call @sq(%x) : (f64) -> f64
  %three = arith.constant 3.0 : f64
  %t = arith.mulf %three, %x : f64
  func.return %y, %t : f64, f64
}
// The reverse rule: (residuals, cotangent of the result) -> cotangent of x.
func.func private @sq_bwd(%t: f64, %g: f64) -> f64 {
  %d = arith.mulf %g, %t : f64
  func.return %d : f64
}

// The report names the residuals; in @loop the residual is taped, and %acc
// (which the derivative of @sq's body would need) is not.
// REPORT-LABEL: cache report for @f_grad_a_a
// REPORT: reuse     %sq_residual0  f64 {{.*}} func.call: residual 0 of the custom rule of @sq (returned by @sq_fwd for @sq_bwd)
// REPORT-LABEL: cache report for @sq_grad_a_a
// REPORT-LABEL: cache report for @loop_grad_d_a
// REPORT-NOT:   tape      %acc
// REPORT:       tape      %sq_residual0  f64 x dim(x, 0) {{.*}} residual 0 of the custom rule of @sq
// REPORT:       taped bytes: 8*(dim(x, 0))

// Differentiating @sq itself uses its rule too: the gradient's copy calls it.
// CHECK-LABEL: func.func @sq_grad_a_a(
// CHECK-NEXT:    func.call @sq_fwd
// CHECK-NEXT:    func.call @sq_bwd
// CHECK-NEXT:    func.return
func.func @f(%x: f64) -> f64 {
  %y = func.call @sq(%x) : (f64) -> f64
  %z = math.sin %y : f64
  func.return %z : f64
}
// The call becomes a call of the augmented primal; the reverse sweep calls
// the reverse rule with the residual and sin's adjoint.
// CHECK-LABEL: func.func @f_grad_a_a(%x: f64, %seed: f64) -> f64
// CHECK-NEXT:    %y, %sq_residual0 = func.call @sq_fwd(%x) {ad.custom_call = {primal = @sq, augmented_primal = @sq_fwd, reverse = @sq_bwd, residuals = 1 : i64}} : (f64) -> (f64, f64)
// CHECK-NEXT:    %[[COS:.*]] = math.cos %y : f64
// CHECK-NEXT:    %[[G:.*]] = arith.mulf %seed, %[[COS]] : f64
// CHECK-NEXT:    %[[DX:.*]] = func.call @sq_bwd(%sq_residual0, %[[G]]) : (f64, f64) -> f64
// CHECK-NEXT:    func.return %[[DX]] : f64

// In a loop the residual is taped (8 bytes per iteration) and popped for the
// reverse rule; the loop-carried %acc, which differentiating @sq's body
// would need, is not.
// CHECK-LABEL: func.func @loop_grad_d_a(
// CHECK:         %tape_sq_residual0 = memref.alloc
// CHECK:         scf.for
// CHECK:           %c, %sq_residual0 = func.call @sq_fwd(%b)
// CHECK-NEXT:      memref.load
// CHECK-NEXT:      memref.store %sq_residual0, %tape_sq_residual0
// CHECK:         scf.for
// CHECK:           %[[R:.*]] = memref.load %tape_sq_residual0
// CHECK-NEXT:      func.call @sq_bwd(%[[R]],
func.func @loop(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %b = arith.addf %a, %acc : f64
    %c = func.call @sq(%b) : (f64) -> f64
    %s = arith.addf %acc, %c : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// A residual that is the augmented primal's own argument is not a new
// value: the reverse rule reads the call's operand (reused here; in a loop,
// reloaded or recomputed like any value, rather than taped).
func.func private @cube(%x: f64) -> f64 attributes {ad.custom_rule = {augmented_primal = @cube_fwd, reverse = @cube_bwd}} {
  %y = arith.mulf %x, %x : f64
  %z = arith.mulf %y, %x : f64
  func.return %z : f64
}
func.func private @cube_fwd(%x: f64) -> (f64, f64) {
  %y = func.call @cube(%x) : (f64) -> f64
  func.return %y, %x : f64, f64
}
func.func private @cube_bwd(%x: f64, %g: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  %d = arith.mulf %g, %y : f64
  func.return %d : f64
}
// CHECK-LABEL: func.func @cubes_grad_d_a(
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for
// CHECK:           %[[A:.*]] = memref.load %x
// CHECK:           func.call @cube_fwd(%[[A]])
// CHECK:         scf.for
// CHECK:           %[[R:.*]] = memref.load %x
// CHECK-NEXT:      func.call @cube_bwd(%[[R]],
func.func @cubes(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %c = func.call @cube(%a) : (f64) -> f64
    %s = arith.addf %acc, %c : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  // cos(0.25) * 3 * 0.5
  // OUT: df = 1.45337
  %d = ad.autodiff @f(%half, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "df = {}\n", %d : f64
  // OUT: dsq = 1.5
  %e = ad.autodiff @sq(%half, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "dsq = {}\n", %e : f64
  // x = [1.5, 2]: b0 = 1.5, acc1 = 2.25, b1 = 4.25; with d sq = 3b:
  // d/dx1 = 3 * 4.25, d/dx0 = (1 + 3 * 4.25) * 3 * 1.5
  // OUT: dloop = 61.875 12.75
  %x = memref.alloc(%c2) : memref<?xf64>
  %dx = memref.alloc(%c2) : memref<?xf64>
  %v0 = arith.constant 1.5 : f64
  %v1 = arith.constant 2.0 : f64
  memref.store %v0, %x[%c0] : memref<?xf64>
  memref.store %v1, %x[%c1] : memref<?xf64>
  memref.store %zero, %dx[%c0] : memref<?xf64>
  memref.store %zero, %dx[%c1] : memref<?xf64>
  ad.autodiff @loop(%x, %dx, %one) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  %d0 = memref.load %dx[%c0] : memref<?xf64>
  %d1 = memref.load %dx[%c1] : memref<?xf64>
  "printf.print_format"(%d0, %d1) {format_str = "dloop = {} {}\0A"} : (f64, f64) -> ()
  // cube's rule: d/dx = x^2 (deliberately not 3x^2)
  // OUT: dcubes = 2.25 4
  memref.store %zero, %dx[%c0] : memref<?xf64>
  memref.store %zero, %dx[%c1] : memref<?xf64>
  ad.autodiff @cubes(%x, %dx, %one) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  %e0 = memref.load %dx[%c0] : memref<?xf64>
  %e1 = memref.load %dx[%c1] : memref<?xf64>
  "printf.print_format"(%e0, %e1) {format_str = "dcubes = {} {}\0A"} : (f64, f64) -> ()
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  func.return
}
