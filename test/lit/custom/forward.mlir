// RUN: ad-opt %s --forward | filecheck %s
// RUN: ad-run %s | filecheck %s --check-prefix=OUT
// A custom forward rule (`forward = @f_jvp` in ad.custom_rule): forward mode
// calls it per lane; reverse mode, without a reverse rule, calls it once per
// float argument with a unit tangent. @sq's rule says the tangent is 3 x t
// (deliberately not 2 x t), so the numbers show that it ran.

func.func private @sq(%x: f64) -> f64 attributes {ad.custom_rule = {forward = @sq_jvp}} {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}
// (x, tangent of x) -> (sq(x), tangent of sq(x))
func.func private @sq_jvp(%x: f64, %t: f64) -> (f64, f64) {
  %y = arith.mulf %x, %x : f64
  %three = arith.constant 3.0 : f64
  %d = arith.mulf %three, %x : f64
  %dt = arith.mulf %d, %t : f64
  func.return %y, %dt : f64, f64
}
func.func @f(%x: f64, %k: index) -> f64 {
  %y = func.call @sq(%x) : (f64) -> f64
  %z = math.sin %y : f64
  func.return %z : f64
}

// Reverse mode by the forward rule: a unit tangent (ad-opt --forward
// differentiates the requests without ad.autodiff inside first: the
// gradient, generated after them, is inserted before them).
// CHECK-LABEL: func.func @f_grad_ac_a(%x: f64, %k: index, %seed: f64) -> f64
// CHECK:         %y = func.call @sq(%x) {ad.custom_call = {primal = @sq, forward = @sq_jvp}}
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK:         func.call @sq_jvp(%x, %[[ONE]])
// Width 2: one call of the rule per lane.
// CHECK-LABEL: func.func @f_fwd_dc_n_w2(%x: f64, %dx: f64, %dx_1: f64, %k: index) -> (f64, f64)
// CHECK-NEXT:    %y, %dy = func.call @sq_jvp(%x, %dx) : (f64, f64) -> (f64, f64)
// CHECK-NEXT:    %{{.*}}, %dy_1 = func.call @sq_jvp(%x, %dx_1) : (f64, f64) -> (f64, f64)
// CHECK-LABEL: func.func @f_fwd_dc_n(%x: f64, %dx: f64, %k: index) -> f64
// CHECK-NEXT:    %y, %dy = func.call @sq_jvp(%x, %dx) : (f64, f64) -> (f64, f64)
// CHECK-NEXT:    %[[COS:.*]] = math.cos %y : f64
// CHECK-NEXT:    %dz = arith.mulf %dy, %[[COS]] : f64

func.func @main() {
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %half = arith.constant 0.5 : f64
  %k = arith.constant 3 : index
  // cos(0.25) * 3 * 0.5 * 2
  // OUT: jvp = 2.9067
  %t = ad.fwddiff @f(%half, %two, %k) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, index) -> f64
  printf.print_format "jvp = {}\n", %t : f64
  // OUT: jvp2 = 1.45337 2.9067
  %t0, %t1 = ad.fwddiff @f(%half, %one, %two, %k) {activity = [dup, const], ret_activity = [dupnoneed], width = 2} : (f64, f64, f64, index) -> (f64, f64)
  "printf.print_format"(%t0, %t1) {format_str = "jvp2 = {} {}\0A"} : (f64, f64) -> ()
  // OUT: grad = 1.45337
  %g = ad.autodiff @f(%half, %k, %one) {activity = [active, const], ret_activity = [active]} : (f64, index, f64) -> f64
  printf.print_format "grad = {}\n", %g : f64
  func.return
}
