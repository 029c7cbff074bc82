// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/math.mlir: the tangents of the math ops with a
// rule of their own (the op table's partials, adpasses/ops/math.py). math.erfc
// of the Enzyme file is left out: xDSL 0.74 has no math.erfc.
// Hand derivations (dx = 1, so each tangent is the derivative):
//   d sinh(0.5) = cosh(0.5) = 1.12763
//   d cosh(0.5) = sinh(0.5) = 0.521095
//   d tanh(0.5) = 1/cosh(0.5)^2 = 0.786448
//   d tan(0.5) = 1/cos(0.5)^2 = 1.29845
//   d asin(0.5) = 1/sqrt(1 - 0.25) = 1.1547
//   d acos(0.5) = -1/sqrt(1 - 0.25) = -1.1547
//   d asinh(0.5) = 1/sqrt(1 + 0.25) = 0.894427
//   d acosh(2.0) = 1/sqrt(4 - 1) = 0.57735
//   d atanh(0.5) = 1/(1 - 0.25) = 1.33333
//   d expm1(0.5) = exp(0.5) = 1.64872
//   d log10(2.0) = 1/(2 ln 10) = 0.217147
//   d rsqrt(4.0) = -1/(2*4^1.5) = -0.0625
//   d cbrt(8.0) = 1/(3*8^(2/3)) = 1/12 = 0.0833333
//   d erf(0.5) = 2/sqrt(pi)*exp(-0.25) = 0.878783

// Each tangent is dx times the op table's partial (no call of the op itself
// where the partial does not read its result).
// IR-LABEL: func.func @sinh_fwd_d_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> f64
// IR:         math.cosh %[[X]] : f64
// IR-LABEL: func.func @cosh_fwd_d_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> f64
// IR:         math.sinh %[[X]] : f64
// IR-LABEL: func.func @asin_fwd_d_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> f64
// IR-NOT:     math.asin
// IR:         math.sqrt
// IR:         arith.divf %[[DX]], %{{.*}} : f64
// IR-LABEL: func.func @erf_fwd_d_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> f64
// IR-NOT:     math.erf
// IR:         math.exp

func.func @sinh(%x: f64) -> f64 {
  %r = math.sinh %x : f64
  func.return %r : f64
}

func.func @cosh(%x: f64) -> f64 {
  %r = math.cosh %x : f64
  func.return %r : f64
}

func.func @tanh(%x: f64) -> f64 {
  %r = math.tanh %x : f64
  func.return %r : f64
}

func.func @tan(%x: f64) -> f64 {
  %r = math.tan %x : f64
  func.return %r : f64
}

func.func @asin(%x: f64) -> f64 {
  %r = math.asin %x : f64
  func.return %r : f64
}

func.func @acos(%x: f64) -> f64 {
  %r = math.acos %x : f64
  func.return %r : f64
}

func.func @asinh(%x: f64) -> f64 {
  %r = math.asinh %x : f64
  func.return %r : f64
}

func.func @acosh(%x: f64) -> f64 {
  %r = math.acosh %x : f64
  func.return %r : f64
}

func.func @atanh(%x: f64) -> f64 {
  %r = math.atanh %x : f64
  func.return %r : f64
}

func.func @expm1(%x: f64) -> f64 {
  %r = math.expm1 %x : f64
  func.return %r : f64
}

func.func @log10(%x: f64) -> f64 {
  %r = math.log10 %x : f64
  func.return %r : f64
}

func.func @rsqrt(%x: f64) -> f64 {
  %r = math.rsqrt %x : f64
  func.return %r : f64
}

func.func @cbrt(%x: f64) -> f64 {
  %r = math.cbrt %x : f64
  func.return %r : f64
}

func.func @erf(%x: f64) -> f64 {
  %r = math.erf %x : f64
  func.return %r : f64
}

func.func @main() {
  %one = arith.constant 1.0 : f64
  %x_sinh = arith.constant 0.5 : f64
  %d_sinh = ad.fwddiff @sinh(%x_sinh, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK: sinh 1.12763
  printf.print_format "sinh {}\n", %d_sinh : f64
  %x_cosh = arith.constant 0.5 : f64
  %d_cosh = ad.fwddiff @cosh(%x_cosh, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK-NEXT: cosh 0.521095
  printf.print_format "cosh {}\n", %d_cosh : f64
  %x_tanh = arith.constant 0.5 : f64
  %d_tanh = ad.fwddiff @tanh(%x_tanh, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK-NEXT: tanh 0.786448
  printf.print_format "tanh {}\n", %d_tanh : f64
  %x_tan = arith.constant 0.5 : f64
  %d_tan = ad.fwddiff @tan(%x_tan, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK-NEXT: tan 1.29845
  printf.print_format "tan {}\n", %d_tan : f64
  %x_asin = arith.constant 0.5 : f64
  %d_asin = ad.fwddiff @asin(%x_asin, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK-NEXT: asin 1.1547
  printf.print_format "asin {}\n", %d_asin : f64
  %x_acos = arith.constant 0.5 : f64
  %d_acos = ad.fwddiff @acos(%x_acos, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK-NEXT: acos -1.1547
  printf.print_format "acos {}\n", %d_acos : f64
  %x_asinh = arith.constant 0.5 : f64
  %d_asinh = ad.fwddiff @asinh(%x_asinh, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK-NEXT: asinh 0.894427
  printf.print_format "asinh {}\n", %d_asinh : f64
  %x_acosh = arith.constant 2.0 : f64
  %d_acosh = ad.fwddiff @acosh(%x_acosh, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK-NEXT: acosh 0.57735
  printf.print_format "acosh {}\n", %d_acosh : f64
  %x_atanh = arith.constant 0.5 : f64
  %d_atanh = ad.fwddiff @atanh(%x_atanh, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK-NEXT: atanh 1.33333
  printf.print_format "atanh {}\n", %d_atanh : f64
  %x_expm1 = arith.constant 0.5 : f64
  %d_expm1 = ad.fwddiff @expm1(%x_expm1, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK-NEXT: expm1 1.64872
  printf.print_format "expm1 {}\n", %d_expm1 : f64
  %x_log10 = arith.constant 2.0 : f64
  %d_log10 = ad.fwddiff @log10(%x_log10, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK-NEXT: log10 0.217147
  printf.print_format "log10 {}\n", %d_log10 : f64
  %x_rsqrt = arith.constant 4.0 : f64
  %d_rsqrt = ad.fwddiff @rsqrt(%x_rsqrt, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK-NEXT: rsqrt -0.0625
  printf.print_format "rsqrt {}\n", %d_rsqrt : f64
  %x_cbrt = arith.constant 8.0 : f64
  %d_cbrt = ad.fwddiff @cbrt(%x_cbrt, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK-NEXT: cbrt 0.0833333
  printf.print_format "cbrt {}\n", %d_cbrt : f64
  %x_erf = arith.constant 0.5 : f64
  %d_erf = ad.fwddiff @erf(%x_erf, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK-NEXT: erf 0.878783
  printf.print_format "erf {}\n", %d_erf : f64
  func.return
}
