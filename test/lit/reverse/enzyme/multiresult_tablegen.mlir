// Enzyme-MLIR ReverseMode/multiresult_tablegen.mlir: math.sincos, an op with
// two results, where both, only the sine or only the cosine is used.
// adpasses expands math.sincos into math.sin and math.cos before
// differentiating (ad-expand-upstream-ops), so an unused half has no
// adjoint and is not computed for the gradient (dead code).
// Hand derivations, at x = 0.7, dr = 2:
// - both: sin x + cos x: dx = dr (cos x - sin x) = 0.241249;
// - onlysin: dx = dr cos x = 1.52968;
// - onlycos: dx = -dr sin x = -1.28844.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @both_grad_a_a(%x: f64, %seed: f64) -> f64
// IR-NOT:     math.sincos
// IR-DAG:     math.sin %x
// IR-DAG:     math.cos %x
// IR:         func.return
// IR-LABEL: func.func @onlysin_grad_a_a(%x: f64, %seed: f64) -> f64
// IR-NOT:     math.sin
// IR:         math.cos %x
// IR-NOT:     math.sin
// IR:         func.return
// IR-LABEL: func.func @onlycos_grad_a_a(%x: f64, %seed: f64) -> f64
// IR-NOT:     math.cos
// IR:         math.sin %x
// IR-NOT:     math.cos
// IR:         func.return
// CHECK: both 0.241249 onlysin 1.52968 onlycos -1.28844

func.func @both(%x: f64) -> f64 {
  %s, %c = math.sincos %x : f64
  %r = arith.addf %s, %c : f64
  func.return %r : f64
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
  %x = arith.constant 0.7 : f64
  %dr = arith.constant 2.0 : f64
  %a = ad.autodiff @both(%x, %dr) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  %b = ad.autodiff @onlysin(%x, %dr) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  %c = ad.autodiff @onlycos(%x, %dr) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "both {} onlysin {} onlycos {}\n", %a : f64, %b : f64, %c : f64
  func.return
}
