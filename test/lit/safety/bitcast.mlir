// arith.bitcast: a round trip f64 -> i64 -> f64 is the same value, so its
// derivative passes through (it used to be dropped: df = 3 instead of 6).
// Bits changed by integer ops, then bitcast back, are an error (see
// errors_unknown_ops.mlir).
// RUN: ad-opt %s --reverse | filecheck %s
// RUN: ad-run %s | filecheck %s --check-prefix=OUT

// d(y * x) = seed * x (into %y, so into %x through the round trip) + seed * y.
// CHECK-LABEL: func.func @f_grad_a_a(%x: f64, %seed: f64) -> f64
// CHECK:         %y = arith.bitcast %i : i64 to f64
// CHECK-NEXT:    %[[A:.*]] = arith.mulf %seed, %x : f64
// CHECK-NEXT:    %[[B:.*]] = arith.mulf %seed, %y : f64
// CHECK-NEXT:    %[[C:.*]] = arith.addf %[[B]], %[[A]] : f64
// CHECK-NEXT:    func.return %[[C]] : f64

// OUT: f = 9 df = 6

func.func @f(%x: f64) -> f64 {
  %i = arith.bitcast %x : f64 to i64
  %y = arith.bitcast %i : i64 to f64
  %r = arith.mulf %y, %x : f64
  func.return %r : f64
}

func.func @main() {
  %a = arith.constant 3.0 : f64
  %s = arith.constant 1.0 : f64
  %v = func.call @f(%a) : (f64) -> f64
  %d = ad.autodiff @f(%a, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "f = {} df = {}\n", %v : f64, %d : f64
  func.return
}
