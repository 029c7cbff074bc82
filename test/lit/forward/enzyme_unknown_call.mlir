// RUN: not ad-opt %s --forward 2>&1 | filecheck %s
// Enzyme-MLIR ForwardMode/unknown_call.mlir: a call, on active data, to a
// function without a body has no tangent; an error at the call names it.

func.func private @ext(f64) -> f64

func.func @sq(%x: f64) -> f64 {
  // CHECK: enzyme_unknown_call.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: {{.*}}ext
  %r = func.call @ext(%x) : (f64) -> f64
  %m = arith.mulf %r, %r : f64
  func.return %m : f64
}

func.func @dsq(%x: f64, %dx: f64) -> f64 {
  %r = ad.fwddiff @sq(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  func.return %r : f64
}
// CHECK-NOT: Traceback
