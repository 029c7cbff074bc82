// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/for2.mlir: the loop's initial value is the active
// argument itself, so the tangent's iter_arg starts at dx, not at 0.
// Hand derivation: r = x + 10*x = 11*x, dr = 11*dx; at x = 2, dx = 0.5: 5.5.

// The tangent iter_arg starts at dx, the tangent of the initial value x.
// IR-LABEL: func.func @square_fwd_d_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> f64
// IR:         scf.for {{.*}} iter_args(%{{.*}} = %[[X]], %[[DACC:.*]] = %[[DX]]) -> (f64, f64)
// IR-NEXT:      arith.addf
// IR-NEXT:      arith.addf %[[DACC]], %[[DX]] : f64

func.func @square(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %r = scf.for %i = %c0 to %c10 step %c1 iter_args(%acc = %x) -> (f64) {
    %n = arith.addf %acc, %x : f64
    scf.yield %n : f64
  }
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 2.0 : f64
  %dx = arith.constant 0.5 : f64
  %d = ad.fwddiff @square(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK: d = 5.5
  printf.print_format "d = {}\n", %d : f64
  func.return
}
