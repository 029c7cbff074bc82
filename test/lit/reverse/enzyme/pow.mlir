// Enzyme-MLIR ReverseMode/pow.mlir: x^10 by ten multiplications in scf.for
// (Enzyme's single-result type without parentheses, `-> f64`).
// Hand derivation: d x^10/dx = 10 x^9: at x = 1.1: 23.5795; at x = -2: -5120.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// The running product is taped (constant trip count: a stack buffer) and
// the reverse loop carries the adjoint of the product and that of x.
// IR-LABEL: func.func @ppow_grad_a_a(%x: f64, %seed: f64) -> f64
// IR:         memref.alloca() : memref<10xf64>
// IR:         scf.for {{.*}} -> (f64, f64) {
// CHECK: dppow 23.5795 -5120

func.func @ppow(%x: f64) -> f64 {
  %cst = arith.constant 1.000000e+00 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 10 : index
  %r = scf.for %iv = %c0 to %n step %c1 iter_args(%r_it = %cst) -> f64 {
    %r_next = arith.mulf %r_it, %x : f64
    scf.yield %r_next : f64
  }
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 1.1 : f64
  %y = arith.constant -2.0 : f64
  %one = arith.constant 1.0 : f64
  %a = ad.autodiff @ppow(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  %b = ad.autodiff @ppow(%y, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "dppow {} {}\n", %a : f64, %b : f64
  func.return
}
