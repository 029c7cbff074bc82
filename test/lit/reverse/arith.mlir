// RUN: ad-opt %s --reverse --cache-policy=tape-all | filecheck %s
// The arith rule table: each adjoint appears, primal values the adjoints
// need are reused from the forward sweep (the quotient q is not recomputed),
// and forward ops no adjoint needs (maximumf, negf) are removed.

// CHECK-LABEL: func.func @f_grad_aa_a(%a: f64, %b: f64, %seed: f64) -> (f64, f64)
// CHECK-NEXT:    %p = arith.mulf %a, %b : f64
// CHECK-NEXT:    %q = arith.divf %a, %b : f64
// CHECK-NEXT:    %d = arith.subf %p, %q : f64
// CHECK-NEXT:    %[[NEG:.*]] = arith.negf %seed : f64
// CHECK-NEXT:    %[[PICK:.*]] = arith.cmpf oge, %d, %a : f64
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %[[GD:.*]] = arith.select %[[PICK]], %[[NEG]], %[[ZERO]] : f64
// CHECK-NEXT:    %[[GA1:.*]] = arith.select %[[PICK]], %[[ZERO]], %[[NEG]] : f64
// CHECK-NEXT:    %[[GQ:.*]] = arith.negf %[[GD]] : f64
// CHECK-NEXT:    %[[DA_Q:.*]] = arith.divf %[[GQ]], %b : f64
// CHECK-NEXT:    %[[T:.*]] = arith.mulf %[[DA_Q]], %q : f64
// CHECK-NEXT:    %[[DB_Q:.*]] = arith.negf %[[T]] : f64
// CHECK-NEXT:    %[[A2:.*]] = arith.addf %[[GA1]], %[[DA_Q]] : f64
// CHECK-NEXT:    %[[DA_P:.*]] = arith.mulf %[[GD]], %b : f64
// CHECK-NEXT:    %[[DB_P:.*]] = arith.mulf %[[GD]], %a : f64
// CHECK-NEXT:    %[[DA:.*]] = arith.addf %[[A2]], %[[DA_P]] : f64
// CHECK-NEXT:    %[[DB:.*]] = arith.addf %[[DB_Q]], %[[DB_P]] : f64
// CHECK-NEXT:    func.return %[[DA]], %[[DB]] : f64, f64
// CHECK-LABEL: func.func @main
// CHECK: func.call @f_grad_aa_a(%a, %b, %s)

func.func @f(%a: f64, %b: f64) -> f64 {
  %p = arith.mulf %a, %b : f64
  %q = arith.divf %a, %b : f64
  %d = arith.subf %p, %q : f64
  %m = arith.maximumf %d, %a : f64
  %n = arith.negf %m : f64
  func.return %n : f64
}
func.func @main(%a: f64, %b: f64) -> (f64, f64) {
  %s = arith.constant 1.0 : f64
  %da, %db = ad.autodiff @f(%a, %b, %s) {activity = [active, active], ret_activity = [active]} : (f64, f64, f64) -> (f64, f64)
  func.return %da, %db : f64, f64
}
