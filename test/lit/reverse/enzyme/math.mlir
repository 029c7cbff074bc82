// Enzyme-MLIR ReverseMode/math.mlir: sqrt, atan, absf, fma, copysign, log1p.
// Hand derivations (seed dr = 2 unless said):
// - sqrt at 2.25: dr / (2 sqrt x) = 2 / 3 = 0.666667. (Enzyme selects 0 at
//   x = 0; adpasses gives the derivative's limit there, +inf, unless the
//   seed is 0 under strong_zero: mul_strongzero.mlir.)
// - atan at 0.5: dr / (1 + x^2) = 2 / 1.25 = 1.6;
// - absf: dr * sign(x): at -1.5: -2, at 3: 2;
// - fma(x, y, z) = x y + z at (2, 3, 4), dr = 0.5: (y dr, x dr, dr) = (1.5, 1, 0.5);
// - copysign(x, y), y const: dr * sign(x) * sign(y): (-2, 3): -2, (2, -3): -2, (2, 3): 2;
// - log1p at 0.25: dr / (1 + x) = 1.6.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @atan_grad_a_a(%x: f64, %seed: f64) -> f64
// IR:         arith.mulf %x, %x
// IR:         arith.divf %seed
// IR-LABEL: func.func @fma_grad_aaa_a(%x: f64, %y: f64, %z: f64, %seed: f64) -> (f64, f64, f64)
// IR-DAG:     %[[DX:.*]] = arith.mulf %seed, %y : f64
// IR-DAG:     %[[DY:.*]] = arith.mulf %seed, %x : f64
// IR:         func.return %[[DX]], %[[DY]], %seed : f64, f64, f64
// IR-LABEL: func.func @log1p_grad_a_a(%x: f64, %seed: f64) -> f64
// IR:         arith.addf
// IR-NEXT:    arith.divf %seed

func.func @sq(%x: f64) -> f64 {
  %res = math.sqrt %x : f64
  func.return %res : f64
}
func.func @atan(%x: f64) -> f64 {
  %res = math.atan %x : f64
  func.return %res : f64
}
func.func @absf(%x: f64) -> f64 {
  %res = math.absf %x : f64
  func.return %res : f64
}
func.func @fma(%x: f64, %y: f64, %z: f64) -> f64 {
  %res = math.fma %x, %y, %z : f64
  func.return %res : f64
}
func.func @copysign(%x: f64, %y: f64) -> f64 {
  %res = math.copysign %x, %y : f64
  func.return %res : f64
}
func.func @log1p(%x: f64) -> f64 {
  %res = math.log1p %x : f64
  func.return %res : f64
}

func.func @main() {
  %dr = arith.constant 2.0 : f64
  %half = arith.constant 0.5 : f64
  %x1 = arith.constant 2.25 : f64
  %a = ad.autodiff @sq(%x1, %dr) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  %b = ad.autodiff @atan(%half, %dr) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  // CHECK: sqrt 0.666667 atan 1.6
  printf.print_format "sqrt {} atan {}\n", %a : f64, %b : f64
  %m = arith.constant -1.5 : f64
  %three = arith.constant 3.0 : f64
  %c = ad.autodiff @absf(%m, %dr) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  %d = ad.autodiff @absf(%three, %dr) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  // CHECK-NEXT: absf -2 2
  printf.print_format "absf {} {}\n", %c : f64, %d : f64
  %two = arith.constant 2.0 : f64
  %four = arith.constant 4.0 : f64
  %fx, %fy, %fz = ad.autodiff @fma(%two, %three, %four, %half) {activity = [active, active, active], ret_activity = [active]} : (f64, f64, f64, f64) -> (f64, f64, f64)
  // CHECK-NEXT: fma 1.5 1 0.5
  printf.print_format "fma {} {} {}\n", %fx : f64, %fy : f64, %fz : f64
  %mtwo = arith.constant -2.0 : f64
  %mthree = arith.constant -3.0 : f64
  %c1 = ad.autodiff @copysign(%mtwo, %three, %dr) {activity = [active, const], ret_activity = [active]} : (f64, f64, f64) -> f64
  %c2 = ad.autodiff @copysign(%two, %mthree, %dr) {activity = [active, const], ret_activity = [active]} : (f64, f64, f64) -> f64
  %c3 = ad.autodiff @copysign(%two, %three, %dr) {activity = [active, const], ret_activity = [active]} : (f64, f64, f64) -> f64
  // CHECK-NEXT: copysign -2 -2 2
  printf.print_format "copysign {} {} {}\n", %c1 : f64, %c2 : f64, %c3 : f64
  %q = arith.constant 0.25 : f64
  %l = ad.autodiff @log1p(%q, %dr) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  // CHECK-NEXT: log1p 1.6
  printf.print_format "log1p {}\n", %l : f64
  func.return
}
