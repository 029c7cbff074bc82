// RUN: ad-opt %s --reverse --cache-policy=tape-all | filecheck %s
// scf.while: the forward loop gains an iteration counter (ad.counted); the
// values the reverse needs from the `after` region go on growable tapes
// (the trip count is unknown before the loop); the reverse is an scf.for over
// the count; the adjoint reaching the initial value %a is added to the
// adjoint of %a accumulated inside the loop (x0 = a and q = a / x).

// CHECK-LABEL: func.func @newton_grad_a_a(%a: f64, %seed: f64) -> f64
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %tape_x = ad.tape.create : !ad.tape<f64>
// CHECK-NEXT:    %tape_q = ad.tape.create : !ad.tape<f64>
// CHECK-NEXT:    %r, %r_1, %[[COUNT:.*]] = scf.while (%x = %a, %dx = %a, %[[C:.*]] = %[[ZERO]]) : (f64, f64, index) -> (f64, f64, index) {
// CHECK:           scf.condition(%c) %x, %dx, %[[C]] : f64, f64, index
// CHECK:           ad.tape.push %x_1, %tape_x : f64, !ad.tape<f64>
// CHECK:           ad.tape.push %q, %tape_q : f64, !ad.tape<f64>
// CHECK:         } attributes {ad.counted}
// CHECK:         %[[GX0:.*]], %{{.*}}, %[[GA:.*]] = scf.for %{{.*}} = %[[ZERO]] to %[[COUNT]] step %{{.*}} iter_args(%{{.*}} = %seed, {{.*}})
// CHECK-NEXT:      ad.tape.pop %tape_q : !ad.tape<f64> -> f64
// CHECK-NEXT:      ad.tape.pop %tape_x : !ad.tape<f64> -> f64
// CHECK:         %[[SUM:.*]] = arith.addf %[[GA]], %[[GX0]] : f64
// CHECK:         ad.tape.free %tape_x : !ad.tape<f64>
// CHECK-NEXT:    ad.tape.free %tape_q : !ad.tape<f64>

func.func @newton(%a: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %half = arith.constant 0.5 : f64
  %tol = arith.constant 1.0e-12 : f64
  %r:2 = scf.while (%x = %a, %dx = %a) : (f64, f64) -> (f64, f64) {
    %ad = math.absf %dx : f64
    %c = arith.cmpf ogt, %ad, %tol : f64
    scf.condition(%c) %x, %dx : f64, f64
  } do {
  ^bb0(%x: f64, %d: f64):
    %q = arith.divf %a, %x : f64
    %s = arith.addf %x, %q : f64
    %xn = arith.mulf %half, %s : f64
    %dd = arith.subf %xn, %x : f64
    scf.yield %xn, %dd : f64, f64
  }
  func.return %r#0 : f64
}
func.func @main(%s: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %g = ad.autodiff @newton(%s, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %g : f64
}
