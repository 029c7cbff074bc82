// ad-clone-primals, the first step of the reverse pipeline: after each
// primal that an ad.autodiff asks for, one copy per distinct request
// (callee, activities, with_primal), named as its gradient will be and
// marked ad.gradient_of. The user's functions and the ad.autodiff ops stay;
// a request that has its copy already keeps it.
// RUN: ad-opt %s -p ad-clone-primals | filecheck %s
// RUN: ad-opt %s -p ad-clone-primals,ad-clone-primals | filecheck %s
// RUN: not ad-opt %S/Inputs/missing_primal.mlir -p ad-clone-primals 2>&1 | filecheck %s --check-prefix=MISSING

// CHECK-LABEL: func.func @sq(%x: f64) -> f64 {
// CHECK-NEXT:    %y = func.call @helper(%x) : (f64) -> f64
// CHECK-NEXT:    func.return %y : f64
// CHECK-NEXT:  }
// The second request was cloned after the first, both right after @sq.
// CHECK-NEXT:  func.func @sq_grad_a_a_p(%x: f64) -> f64 attributes {ad.gradient_of = {primal = @sq, activity = ["active"], ret_activity = ["active"], with_primal}} {
// CHECK-NEXT:    %y = func.call @helper(%x) : (f64) -> f64
// CHECK-NEXT:    func.return %y : f64
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @sq_grad_a_a(%x: f64) -> f64 attributes {ad.gradient_of = {primal = @sq, activity = ["active"], ret_activity = ["active"]}} {
// CHECK:       func.func @helper(
// CHECK-NOT:   ad.gradient_of
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    ad.autodiff @sq(%a, %s) {activity = [active], ret_activity = [active]}
// CHECK-NEXT:    ad.autodiff @sq(%a, %s) {activity = [active], ret_activity = [active]}
// CHECK-NEXT:    ad.autodiff @sq(%a, %s) {activity = [active], ret_activity = [active], with_primal}
// CHECK-NOT:   func.func

// MISSING: missing_primal.mlir:5:3: error: no function '@ext' with a body to differentiate
func.func @sq(%x: f64) -> f64 {
  %y = func.call @helper(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @helper(%v: f64) -> f64 {
  %w = arith.mulf %v, %v : f64
  func.return %w : f64
}
func.func @main(%a: f64, %s: f64) -> (f64, f64, f64, f64) {
  %g1 = ad.autodiff @sq(%a, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  %g2 = ad.autodiff @sq(%a, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  %p, %g3 = ad.autodiff @sq(%a, %s) {activity = [active], ret_activity = [active], with_primal} : (f64, f64) -> (f64, f64)
  func.return %g1, %g2, %p, %g3 : f64, f64, f64, f64
}
