// RUN: not ad-opt %s --forward --allow-unregistered-dialect 2>&1 | filecheck %s
// Enzyme-MLIR ForwardMode/invalid.mlir: an unknown op on active data cannot
// be differentiated; an error at the op names it.

func.func @unsupported(%x: f64) -> f64 {
  // CHECK: enzyme_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: {{.*}}test.foo
  %r = "test.foo"(%x) : (f64) -> f64
  func.return %r : f64
}

func.func @diff(%x: f64, %dx: f64) -> f64 {
  %r = ad.fwddiff @unsupported(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  func.return %r : f64
}
// CHECK-NOT: Traceback
