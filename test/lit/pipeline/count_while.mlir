// ad-count-while: every scf.while of a function the reverse pipeline works
// on (marked ad.gradient_of) gains a loop-carried index counting its
// iterations, its last result, and is marked ad.counted; the user's
// functions stay as written. Unstructured control flow (which inlining
// may bring) is an error here, before the reverse sweep.
// RUN: ad-opt %s -p ad-count-while | filecheck %s
// RUN: not ad-opt %S/Inputs/cf_copy.mlir -p ad-count-while 2>&1 | filecheck %s --check-prefix=CF

// CHECK-LABEL: func.func @halve(
// CHECK:         %r = scf.while (%v = %x) : (f64) -> f64 {
// CHECK-NOT:     ad.counted
// CHECK-LABEL: func.func @halve_grad_a_a(
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %r, %trips = scf.while (%v = %x, %[[N:.*]] = %[[ZERO]]) : (f64, index) -> (f64, index) {
// CHECK:           scf.condition(%c) %v, %[[N]] : f64, index
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%w: f64, %[[M:.*]]: index):
// CHECK-NEXT:      %h = arith.mulf %w, %half : f64
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[M]], %[[ONE]] : index
// CHECK-NEXT:      scf.yield %h, %[[NEXT]] : f64, index
// CHECK-NEXT:    } attributes {ad.counted}
// CHECK-NEXT:    func.return %r : f64

// CF: cf_copy.mlir:5:5: error: 'cf.br': unstructured control flow cannot be differentiated: express it with scf.for / scf.while / scf.if
func.func @halve(%x: f64) -> f64 {
  %half = arith.constant 0.5 : f64
  %one = arith.constant 1.0 : f64
  %r = scf.while (%v = %x) : (f64) -> f64 {
    %c = arith.cmpf ogt, %v, %one : f64
    scf.condition(%c) %v : f64
  } do {
  ^bb0(%w: f64):
    %h = arith.mulf %w, %half : f64
    scf.yield %h : f64
  }
  func.return %r : f64
}
func.func @halve_grad_a_a(%x: f64) -> f64 attributes {ad.gradient_of = {primal = @halve, activity = ["active"], ret_activity = ["active"]}} {
  %half = arith.constant 0.5 : f64
  %one = arith.constant 1.0 : f64
  %r = scf.while (%v = %x) : (f64) -> f64 {
    %c = arith.cmpf ogt, %v, %one : f64
    scf.condition(%c) %v : f64
  } do {
  ^bb0(%w: f64):
    %h = arith.mulf %w, %half : f64
    scf.yield %h : f64
  }
  func.return %r : f64
}
