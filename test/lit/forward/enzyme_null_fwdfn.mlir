// RUN: not ad-opt %s --forward 2>&1 | filecheck %s
// Enzyme-MLIR ForwardMode/null_fwdfn.mlir: the call without a body is one
// level down (outer -> inner -> ext); the error is at that call, naming ext,
// not a crash in the caller.

func.func private @ext(f64) -> f64

func.func @inner(%x: f64) -> f64 {
  // CHECK: enzyme_null_fwdfn.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: {{.*}}ext
  %r = func.call @ext(%x) : (f64) -> f64
  func.return %r : f64
}

func.func @outer(%x: f64) -> f64 {
  %r = func.call @inner(%x) : (f64) -> f64
  func.return %r : f64
}

func.func @d_outer(%x: f64, %dx: f64) -> f64 {
  %r = ad.fwddiff @outer(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  func.return %r : f64
}
// CHECK-NOT: Traceback
