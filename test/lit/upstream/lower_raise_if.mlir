// RUN: ad-opt %s --reverse --lower-ad-ops | filecheck %s
// ad-opt --lower-ad-ops: an ad.raise_if (the frontend's raise/assert) left in
// a gradient becomes upstream's cf.assert of the negated condition, with the
// message `Exception: message` (doubled braces written once).

// CHECK-NOT: ad.raise_if
// CHECK-LABEL: func.func @f_grad_a_a(%x: f64, %{{.*}}: f64) -> f64
// CHECK:         %[[BAD:.*]] = arith.cmpf ole, %x, %{{.*}} : f64
// CHECK-NEXT:    %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:    %[[OK:.*]] = arith.xori %[[BAD]], %[[TRUE]] : i1
// CHECK-NEXT:    cf.assert %[[OK]], "ValueError: x must be positive {x}"
// CHECK:         math.sqrt
func.func @f(%x: f64) -> f64 {
  %z = arith.constant 0.0 : f64
  %bad = arith.cmpf ole, %x, %z : f64
  ad.raise_if %bad {exception = "ValueError", message = "x must be positive {{x}}"}
  %r = math.sqrt %x : f64
  func.return %r : f64
}

func.func @main(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}
