// Enzyme-MLIR ReverseMode/logexp2.mlir: math.log2 and math.exp2.
// Hand derivations: d log2(x)/dx = 1/(x ln 2): at x = 2: 0.721348;
// d exp2(x)/dx = exp2(x) ln 2: at x = 3: 8 ln 2 = 5.54518.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @log2_grad_a_a(
// IR:         %[[LN2:.*]] = arith.constant 0.69314{{[0-9]*}} : f64
// IR-NEXT:    %[[D:.*]] = arith.mulf %x, %[[LN2]] : f64
// IR-NEXT:    arith.divf %seed, %[[D]] : f64
// IR-LABEL: func.func @exp2_grad_a_a(
// IR:         %[[Y:.*]] = math.exp2 %x
// IR-NEXT:    %[[LN2:.*]] = arith.constant 0.69314{{[0-9]*}} : f64
// IR-NEXT:    %[[F:.*]] = arith.mulf %[[Y]], %[[LN2]] : f64
// IR-NEXT:    arith.mulf %seed, %[[F]] : f64
// CHECK: log2 0.721348 exp2 5.54518

func.func @log2(%x: f64) -> f64 {
  %y = math.log2 %x : f64
  func.return %y : f64
}

func.func @exp2(%x: f64) -> f64 {
  %y = math.exp2 %x : f64
  func.return %y : f64
}

func.func @main() {
  %two = arith.constant 2.0 : f64
  %three = arith.constant 3.0 : f64
  %one = arith.constant 1.0 : f64
  %a = ad.autodiff @log2(%two, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  %b = ad.autodiff @exp2(%three, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "log2 {} exp2 {}\n", %a : f64, %b : f64
  func.return
}
