// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/multiresult.mlir: math.sincos, an op with two
// results (expanded into math.sin and math.cos, as in reverse mode), with
// both results returned, only the sine, or only the cosine.
// Hand derivation: d sin = cos(x) dx, d cos = -sin(x) dx; at x = 0.5, dx = 2:
// cos(0.5)*2 = 1.75517, -sin(0.5)*2 = -0.958851.

// Only the derivative of the result returned is computed.
// IR-LABEL: func.func @onlysin_fwd_d_n(
// IR-NOT:     math.sin
// IR:         math.cos
// IR:         func.return
// IR-LABEL: func.func @onlycos_fwd_d_n(
// IR-NOT:     math.cos
// IR:         math.sin
// IR:         arith.negf
func.func @both(%x: f64) -> (f64, f64) {
  %s, %c = math.sincos %x : f64
  func.return %s, %c : f64, f64
}

func.func @onlysin(%x: f64) -> f64 {
  %s, %c = math.sincos %x : f64
  func.return %s : f64
}

func.func @onlycos(%x: f64) -> f64 {
  %s, %c = math.sincos %x : f64
  func.return %c : f64
}

func.func @main() {
  %x = arith.constant 0.5 : f64
  %dx = arith.constant 2.0 : f64
  %b:2 = ad.fwddiff @both(%x, %dx) {activity = [dup], ret_activity = [dupnoneed, dupnoneed]} : (f64, f64) -> (f64, f64)
  %s = ad.fwddiff @onlysin(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  %c = ad.fwddiff @onlycos(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK: both = 1.75517 -0.958851 onlysin = 1.75517 onlycos = -0.958851
  printf.print_format "both = {} {} onlysin = {} onlycos = {}\n", %b#0 : f64, %b#1 : f64, %s : f64, %c : f64
  func.return
}
