// RUN: ad-run %s | filecheck %s
// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// Enzyme-MLIR ForwardMode/nested_dataflow.mlir: forward over forward. The
// function differentiated contains an ad.fwddiff itself; its tangent is a
// second derivative and must not collapse to zero. ad-forward replaces the
// inner request first (a call of @square_fwd_d_n), then differentiates
// @dsquare with that tangent function inlined like any callee.
// Hand derivation: dsquare(x, dx) = 2*x*dx; its tangent in direction
// (sx, sdx) is 2*(sx*dx + x*sdx); at x = 3, dx = 0.5, sx = 0.25, sdx = 2:
// 2*(0.125 + 6) = 12.25. With sx = 1, sdx = 0: d^2(x^2)/dx^2 * dx = 2*dx = 1.

// IR-LABEL: func.func @square_fwd_d_n(%x: f64, %dx: f64) -> f64 {
// IR-LABEL: func.func @dsquare(%x: f64, %dx: f64) -> f64 {
// IR-NEXT:    %r = func.call @square_fwd_d_n(%x, %dx) : (f64, f64) -> f64
// IR-LABEL: func.func @dsquare_fwd_dd_n(%x: f64, %dx: f64, %dx_1: f64, %ddx: f64) -> f64 {
// IR-NEXT:    %0 = arith.mulf %ddx, %x : f64
// IR-NEXT:    %1 = arith.mulf %dx, %dx_1 : f64
// IR-NEXT:    %2 = arith.addf %0, %1 : f64
// IR-NEXT:    %ddr = arith.addf %2, %2 : f64
// IR-NEXT:    func.return %ddr : f64
// IR:         func.call @dsquare_fwd_dd_n(%x, %sx, %dx, %sdx)

func.func @square(%x: f64) -> f64 {
  %r = arith.mulf %x, %x : f64
  func.return %r : f64
}

func.func @dsquare(%x: f64, %dx: f64) -> f64 {
  %r = ad.fwddiff @square(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 3.0 : f64
  %dx = arith.constant 0.5 : f64
  %sx = arith.constant 0.25 : f64
  %sdx = arith.constant 2.0 : f64
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %a = ad.fwddiff @dsquare(%x, %sx, %dx, %sdx) {activity = [dup, dup], ret_activity = [dupnoneed]} : (f64, f64, f64, f64) -> f64
  %b = ad.fwddiff @dsquare(%x, %one, %dx, %zero) {activity = [dup, dup], ret_activity = [dupnoneed]} : (f64, f64, f64, f64) -> f64
  // CHECK: dd = 12.25 second = 1
  printf.print_format "dd = {} second = {}\n", %a : f64, %b : f64
  func.return
}
