// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/test.mlir: the tangent of x*x.
// Hand derivation: d(x*x) = 2*x*dx; at x = 3, dx = 0.5: 3. With the primal
// returned (ret_activity = [dup]): (9, 3).

// The tangent function: 2*x*dx as dx*x added to itself; with the result
// dupnoneed no primal product is left.
// IR-LABEL: func.func @square_fwd_d_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> f64
// IR-NEXT:    %[[P:.*]] = arith.mulf %[[DX]], %[[X]] : f64
// IR-NEXT:    %[[T:.*]] = arith.addf %[[P]], %[[P]] : f64
// IR-NEXT:    func.return %[[T]] : f64
// IR-LABEL: func.func @main
// IR:         func.call @square_fwd_d_n(
// IR:         func.call @square_fwd_d_d(
// IR-NOT:     ad.fwddiff

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
