// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/multiresult_tablegen.mlir: both results of
// math.sincos used in one expression.
// Hand derivation: d(sin x + cos x) = (cos x - sin x) dx; at x = 0.5, dx = 2:
// (0.877583 - 0.479426)*2 = 0.796314.

// IR-LABEL: func.func @both_fwd_d_n(
// IR-DAG:     math.sin
// IR-DAG:     math.cos
// IR:         func.return
func.func @both(%x: f64) -> f64 {
  %s, %c = math.sincos %x : f64
  %r = arith.addf %s, %c : f64
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 0.5 : f64
  %dx = arith.constant 2.0 : f64
  %d = ad.fwddiff @both(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK: d = 0.796314
  printf.print_format "d = {}\n", %d : f64
  func.return
}
