// RUN: ad-opt --forward %s | filecheck %s
// RUN: ad-run %s --entry run | filecheck %s --check-prefix=NUM
// Forward over reverse through a growable tape (the scf.while of @f needs
// u2 in its reverse sweep): the tape of active values gets a tangent tape,
// pushed beside it and popped beside it (also where only the primal is
// read), freed with it; the while loop and the reverse scf.for carry the
// tangents. d/dx of f'(x) is f''(x).
//
// f: u <- u^1.5 / 4 while u > 1.5. Hand derivation: with g(u) = u^1.5/4,
// g' = 3 sqrt(u)/8, g'' = 3/(16 sqrt(u)); per step d <- g' d and
// dd <- g'' d^2 + g' dd. From x = 7: f = 0.9827, f' = 0.473802, f'' = 0.160754.

func.func @f(%x: f64) -> f64 {
  %lim = arith.constant 1.5 : f64
  %h = scf.while (%u = %x) : (f64) -> f64 {
    %big = arith.cmpf ogt, %u, %lim : f64
    scf.condition(%big) %u : f64
  } do {
  ^bb0(%u2: f64):
    %s = math.sqrt %u2 : f64
    %u3 = arith.mulf %s, %u2 : f64
    %q = arith.constant 0.25 : f64
    %u4 = arith.mulf %u3, %q : f64
    scf.yield %u4 : f64
  }
  func.return %h : f64
}

func.func @g(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}

func.func @run() {
  %x = arith.constant 7.0 : f64
  %v = arith.constant 1.0 : f64
  %r:2 = ad.fwddiff @g(%x, %v) {activity = [dup], ret_activity = [dup]} : (f64, f64) -> (f64, f64)
  // NUM: f' 0.473802 f'' 0.160754
  printf.print_format "f' {} f'' {}\n", %r#0 : f64, %r#1 : f64
  func.return
}

// CHECK-LABEL: func.func @g_fwd_d_d(%x: f64, %dx: f64) -> (f64, f64) {
// CHECK:         %tape_u2 = ad.tape.create : !ad.tape<f64>
// CHECK-NEXT:    %dtape_u2 = ad.tape.create : !ad.tape<f64>
// CHECK-NEXT:    %h, %trips, %dh = scf.while (%u = %x, %{{.*}} = %{{.*}}, %du = %dx) : (f64, index, f64) -> (f64, index, f64) {
// CHECK:         ^bb0(%u2: f64, %{{.*}}: index, %du2: f64):
// CHECK-NEXT:      ad.tape.push %u2, %tape_u2 : f64, !ad.tape<f64>
// CHECK-NEXT:      ad.tape.push %du2, %dtape_u2 : f64, !ad.tape<f64>
// CHECK:         %d, %dd = scf.for %{{.*}} = %{{.*}} to %trips step %{{.*}} iter_args(%{{.*}} = %one, %{{.*}} = %{{.*}}) -> (f64, f64) {
// CHECK-NEXT:      %[[P:.*]] = ad.tape.pop %tape_u2 : !ad.tape<f64> -> f64
// CHECK-NEXT:      %[[DP:.*]] = ad.tape.pop %dtape_u2 : !ad.tape<f64> -> f64
// CHECK:         ad.tape.free %tape_u2 : !ad.tape<f64>
// CHECK-NEXT:    ad.tape.free %dtape_u2 : !ad.tape<f64>
// CHECK-NEXT:    func.return %d, %dd : f64, f64
// CHECK-LABEL: func.func @run()
// CHECK:         func.call @g_fwd_d_d(%x, %v) : (f64, f64) -> (f64, f64)
