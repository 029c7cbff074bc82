// RUN: not ad-opt %s --reverse --allow-unregistered-dialect 2>&1 | filecheck %s
// An op of an unregistered dialect on active data is named as written
// ('test.foo'), not as xDSL's container for such ops ('builtin.unregistered').
// (Found translating Enzyme's ForwardMode/invalid.mlir: the forward mode's
// error, test/lit/forward/enzyme_invalid.mlir, named it the same way.)

func.func @unsupported(%x: f64) -> f64 {
  // CHECK: unregistered_op_name.mlir:[[# @LINE + 1]]:3: error: 'test.foo': has no reverse-mode rule
  %r = "test.foo"(%x) : (f64) -> f64
  func.return %r : f64
}

func.func @diff(%x: f64, %s: f64) -> f64 {
  %r = ad.autodiff @unsupported(%x, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %r : f64
}
// CHECK-NOT: builtin.unregistered
// CHECK-NOT: Traceback
