// RUN: not ad-opt %s --forward 2>&1 | filecheck %s
// Enzyme-MLIR ForwardMode/bodyless.mlir: differentiating a function that has
// no body is an error at the ad.fwddiff, naming the function (no traceback,
// no output module).

func.func private @ext(f64) -> f64

func.func @dext(%x: f64, %dx: f64) -> f64 {
  // CHECK: enzyme_bodyless.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: {{.*}}ext
  %r = ad.fwddiff @ext(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  func.return %r : f64
}
// CHECK-NOT: Traceback
// CHECK-NOT: func.func
