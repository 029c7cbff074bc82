// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/wrap.mlir (enzyme-wrap makes the derivative of
// @square with a dup argument and a dup result; here ad.fwddiff asks for it).
// Hand derivation: y = x*x, dy = 2*x*dx; at x = -1.5, dx = 2: (2.25, -6).

// IR-LABEL: func.func @square_fwd_d_d(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> (f64, f64)
// IR-NEXT:    %[[Y:.*]] = arith.mulf %[[X]], %[[X]] : f64
// IR-NEXT:    %[[P:.*]] = arith.mulf %[[DX]], %[[X]] : f64
// IR-NEXT:    %[[T:.*]] = arith.addf %[[P]], %[[P]] : f64
// IR-NEXT:    func.return %[[Y]], %[[T]] : f64, f64

func.func @square(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}

func.func @main() {
  %x = arith.constant -1.5 : f64
  %dx = arith.constant 2.0 : f64
  %p, %t = ad.fwddiff @square(%x, %dx) {activity = [dup], ret_activity = [dup]} : (f64, f64) -> (f64, f64)
  // CHECK: y = 2.25 dy = -6
  printf.print_format "y = {} dy = {}\n", %p : f64, %t : f64
  func.return
}
