// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/logexp2.mlir: tangents of log2 and exp2.
// Hand derivation: d log2(x) = dx/(x ln 2); at x = 4, dx = 1: 1/(4*0.693147)
// = 0.360674. d exp2(x) = 2^x ln 2 dx; at x = 3, dx = 1: 8*0.693147 = 5.54518.

// IR-LABEL: func.func @log2_fwd_d_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> f64
// IR:         arith.constant 0.6931471805599{{[0-9]*}} : f64
// IR:         arith.divf %[[DX]], %{{.*}} : f64
// IR-LABEL: func.func @exp2_fwd_d_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> f64
// IR-NEXT:    %[[E:.*]] = math.exp2 %[[X]] : f64
// IR:         arith.mulf %[[E]], %{{.*}} : f64

func.func @log2(%x: f64) -> f64 {
  %y = math.log2 %x : f64
  func.return %y : f64
}

func.func @exp2(%x: f64) -> f64 {
  %y = math.exp2 %x : f64
  func.return %y : f64
}

func.func @main() {
  %four = arith.constant 4.0 : f64
  %three = arith.constant 3.0 : f64
  %one = arith.constant 1.0 : f64
  %a = ad.fwddiff @log2(%four, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  %b = ad.fwddiff @exp2(%three, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK: dlog2 = 0.360674 dexp2 = 5.54518
  printf.print_format "dlog2 = {} dexp2 = {}\n", %a : f64, %b : f64
  func.return
}
