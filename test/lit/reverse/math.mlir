// RUN: ad-opt %s --reverse --cache-policy=tape-all | filecheck %s
// The math rule table: derivatives written in terms of results reuse them
// (exp, tanh, sqrt, powf); sin needs cos of its operand; log divides; powf
// selects 0 where b = 0 (d/da) or a = 0 (d/db, log of 1 instead of log 0).

// CHECK-LABEL: func.func @f_grad_aa_a(%x: f64, %y: f64, %seed: f64) -> (f64, f64)
// CHECK:       %[[GP:.*]] = arith.divf %seed, %p : f64
// CHECK:       %[[BM1:.*]] = arith.subf %s, %{{.*}} : f64
// CHECK-NEXT:  %[[POW:.*]] = math.powf %r, %[[BM1]] : f64
// CHECK:       %[[B0:.*]] = arith.cmpf oeq, %s, %{{.*}} : f64
// CHECK-NEXT:  arith.select %[[B0]], %{{.*}}, %{{.*}} : f64
// CHECK-NEXT:  %[[A0:.*]] = arith.cmpf oeq, %r, %{{.*}} : f64
// CHECK-NEXT:  %[[SAFE:.*]] = arith.select %[[A0]], %{{.*}}, %r : f64
// CHECK-NEXT:  %[[LOG:.*]] = math.log %[[SAFE]] : f64
// CHECK-NEXT:  %{{.*}} = arith.mulf %p, %[[LOG]] : f64
// CHECK:       arith.divf %{{.*}}, %r : f64
// CHECK:       arith.mulf %t, %t : f64
// CHECK:       %[[COS:.*]] = math.cos %y : f64
// CHECK:       %[[DY:.*]] = arith.mulf %{{.*}}, %[[COS]] : f64
// CHECK:       %[[DX:.*]] = arith.mulf %{{.*}}, %e : f64
// CHECK-NEXT:  func.return %[[DX]], %[[DY]] : f64, f64

func.func @f(%x: f64, %y: f64) -> f64 {
  %e = math.exp %x : f64
  %s = math.sin %y : f64
  %t = math.tanh %e : f64
  %r = math.sqrt %t : f64
  %p = math.powf %r, %s : f64
  %l = math.log %p : f64
  func.return %l : f64
}
func.func @main(%x: f64, %y: f64) -> (f64, f64) {
  %s = arith.constant 1.0 : f64
  %dx, %dy = ad.autodiff @f(%x, %y, %s) {activity = [active, active], ret_activity = [active]} : (f64, f64, f64) -> (f64, f64)
  func.return %dx, %dy : f64, f64
}
