// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/test.mlir: the tangent of x*x.
// Hand derivation: d(x*x) = 2*x*dx; at x = 3, dx = 0.5: 3. With the primal
// returned (ret_activity = [dup]): (9, 3).

func.func @square(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}

func.func @main() {
  %x = arith.constant 3.0 : f64
  %dx = arith.constant 0.5 : f64
  %d = ad.fwddiff @square(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK: d = 3
  printf.print_format "d = {}\n", %d : f64
  %p, %t = ad.fwddiff @square(%x, %dx) {activity = [dup], ret_activity = [dup]} : (f64, f64) -> (f64, f64)
  // CHECK-NEXT: y = 9 dy = 3
  printf.print_format "y = {} dy = {}\n", %p : f64, %t : f64
  func.return
}
