// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/divf.mlir: the tangent of a quotient.
// Hand derivation: d(x/y) = dx/y - x*dy/y^2 = (dx - dy*(x/y))/y; at x = 3,
// y = 2, dx = 1, dy = 0.5: (1 - 0.75)/2 = 0.125.

// The rule reads the quotient; the divisor is never squared.
// IR-LABEL: func.func @div_fwd_dd_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64, %[[Y:[a-z0-9_]+]]: f64, %[[DY:[a-z0-9_]+]]: f64) -> f64
// IR-NEXT:    %[[Q:.*]] = arith.divf %[[X]], %[[Y]] : f64
// IR-NOT:     arith.mulf %[[Y]], %[[Y]]
// IR:         func.return

func.func @div(%x: f64, %y: f64) -> f64 {
  %r = arith.divf %x, %y : f64
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 3.0 : f64
  %y = arith.constant 2.0 : f64
  %dx = arith.constant 1.0 : f64
  %dy = arith.constant 0.5 : f64
  %d = ad.fwddiff @div(%x, %dx, %y, %dy) {activity = [dup, dup], ret_activity = [dupnoneed]} : (f64, f64, f64, f64) -> f64
  // CHECK: d = 0.125
  printf.print_format "d = {}\n", %d : f64
  func.return
}
