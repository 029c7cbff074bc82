// RUN: ad-opt %s | filecheck %s
// RUN: ad-opt %s --print-op-generic | ad-opt | filecheck %s
// RUN: ad-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// ad.fwddiff's custom syntax round-trips, in custom and generic form;
// width 1 is the default and is not printed.

func.func @f(%x: memref<?xf64>, %y: f64) -> f64 {
  %r = arith.mulf %y, %y : f64
  func.return %r : f64
}

// CHECK-LABEL: func.func @main
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %y: f64, %dy: f64) -> (f64, f64) {
  // CHECK: %r, %r_1 = ad.fwddiff @f(%x, %dx, %y, %dy) {activity = [dup, dup], ret_activity = [dup]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> (f64, f64)
  %r:2 = ad.fwddiff @f(%x, %dx, %y, %dy) {activity = [dup, dup], ret_activity = [dup], width = 1} : (memref<?xf64>, memref<?xf64>, f64, f64) -> (f64, f64)
  // CHECK: %t, %t_1 = ad.fwddiff @f(%x, %y, %dy, %dy) {activity = [const, dupnoneed], ret_activity = [dupnoneed], width = 2} : (memref<?xf64>, f64, f64, f64) -> (f64, f64)
  %t:2 = ad.fwddiff @f(%x, %y, %dy, %dy) {activity = [const, dupnoneed], ret_activity = [dupnoneed], width = 2} : (memref<?xf64>, f64, f64, f64) -> (f64, f64)
  // CHECK: %c = ad.fwddiff @f(%x, %y) {activity = [const, const], ret_activity = [const]} : (memref<?xf64>, f64) -> f64
  %c = ad.fwddiff @f(%x, %y) {activity = [const, const], ret_activity = [const]} : (memref<?xf64>, f64) -> f64
  func.return %r#1, %t#1 : f64, f64
}
// GENERIC: "ad.fwddiff"(%x, %y, %dy, %dy) <{callee = @f, activity = ["const", "dupnoneed"], ret_activity = ["dupnoneed"], width = 2 : i64}>
