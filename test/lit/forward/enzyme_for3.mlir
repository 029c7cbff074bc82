// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/for3.mlir: the loop yields a value that is not its
// iter_arg ("carry mismatch"), in scf.for and affine.for; and (added here) the
// same loop with a trip count that may be 0.
// Hand derivation: after >= 1 trips r = x, dr = dx; after 0 trips r = 0 (the
// constant initial value), dr = 0. At x = 1.25, dx = 0.75:
// 10 trips: 0.75; affine: 0.75; n = 3: 0.75; n = 0: 0.

// The loop yields (x, dx) whatever it carries; after 0 trips the tangent is
// the initial 0.
// IR-LABEL: func.func @carry_mismatch_scf_fwd_d_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> f64
// IR:         %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// IR:         %{{.*}}, %[[DR:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[Z]], %{{.*}} = %[[Z]]) -> (f64, f64)
// IR-NEXT:      scf.yield %[[X]], %[[DX]] : f64, f64
// IR:         func.return %[[DR]] : f64
// IR-LABEL: func.func @carry_mismatch_affine_fwd_d_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> f64
// IR-NOT:     affine.
// IR:         scf.for
// IR-NEXT:      scf.yield %[[X]], %[[DX]] : f64, f64

func.func @carry_mismatch_scf(%x: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %r = scf.for %i = %c0 to %c10 step %c1 iter_args(%acc = %zero) -> (f64) {
    scf.yield %x : f64
  }
  func.return %r : f64
}

func.func @carry_mismatch_affine(%x: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %r = affine.for %i = 0 to 10 iter_args(%acc = %zero) -> (f64) {
    affine.yield %x : f64
  }
  func.return %r : f64
}

func.func @carry_mismatch_trips(%x: f64, %n: index) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    scf.yield %x : f64
  }
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 1.25 : f64
  %dx = arith.constant 0.75 : f64
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %a = ad.fwddiff @carry_mismatch_scf(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  %b = ad.fwddiff @carry_mismatch_affine(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  %t3 = ad.fwddiff @carry_mismatch_trips(%x, %dx, %c3) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, index) -> f64
  %t0 = ad.fwddiff @carry_mismatch_trips(%x, %dx, %c0) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, index) -> f64
  // CHECK: scf = 0.75 affine = 0.75 n3 = 0.75 n0 = 0
  printf.print_format "scf = {} affine = {} n3 = {} n0 = {}\n", %a : f64, %b : f64, %t3 : f64, %t0 : f64
  func.return
}
