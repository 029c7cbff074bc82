// RUN: ad-run %s | filecheck %s
// XFAIL: *
// Expected to fail: ad-forward rejects forward over forward ("nested
// ad.fwddiff (forward over forward) is not supported; use forward over
// reverse"); docs/enzyme_forward_tests.md. Remove the XFAIL when it is.
// Enzyme-MLIR ForwardMode/nested_dataflow.mlir: forward over forward. The
// function differentiated contains an ad.fwddiff itself; its tangent is a
// second derivative and must not collapse to zero.
// Hand derivation: dsquare(x, dx) = 2*x*dx; its tangent in direction
// (sx, sdx) is 2*(sx*dx + x*sdx); at x = 3, dx = 0.5, sx = 0.25, sdx = 2:
// 2*(0.125 + 6) = 12.25. With sx = 1, sdx = 0: d^2(x^2)/dx^2 * dx = 2*dx = 1.

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
