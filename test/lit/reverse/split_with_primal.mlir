// Per-result with_primal in split mode: the forward half of a split
// ad.autodiff picks the primal results it returns (`with_primal = [1]`,
// `with_primal = []`: the tape alone), as Enzyme chooses per result. Both
// halves still share one gradient (@two_grad_..._aug returns every primal
// result); each forward op takes its chosen results from the call.
// RUN: ad-opt %s --reverse | filecheck %s
// RUN: ad-opt %s --reverse | ad-run | filecheck %s --check-prefix=NUM

// CHECK-LABEL: func.func @two_grad_a_aa_s_aug(%x: f64) -> (f64, f64
// CHECK-NOT:   func.func @two_grad_{{.*}}_aug
// CHECK-LABEL: func.func @second(
// CHECK:         %{{.*}}, %[[Q:.*]], %[[T:.*]] = func.call @two_grad_a_aa_s_aug(%x)
// CHECK:         %[[D:.*]] = func.call @two_grad_a_aa_s_rev(%s0, %s1, %[[T]])
// CHECK:         func.return %[[Q]], %[[D]]
// CHECK-LABEL: func.func @none(
// CHECK:         func.call @two_grad_a_aa_s_aug(%x)
// CHECK:         func.call @two_grad_a_aa_s_rev(

// two(x) = (x * x, sin(x)); at x = 0.5, seeds (1, 2): d/dx = 2x + 2 cos(x)
// = 1 + 2 * 0.8775825618903728 = 2.7551651237807455; second's primal is
// sin(0.5) = 0.479425538604203.
// (printf prints 6 significant digits)
// NUM: second 0.479426 2.75517
// NUM: none 2.75517

func.func @two(%x: f64) -> (f64, f64) {
  %sq = arith.mulf %x, %x : f64
  %s = math.sin %x : f64
  func.return %sq, %s : f64, f64
}
func.func @second(%x: f64, %s0: f64, %s1: f64) -> (f64, f64) {
  %q, %t = ad.autodiff @two(%x) {activity = [active], ret_activity = [active, active], split = forward, with_primal = [1]}
    : (f64) -> (f64, !ad.split_tape)
  %dx = ad.autodiff @two(%s0, %s1, %t) {activity = [active], ret_activity = [active, active], split = reverse}
    : (f64, f64, !ad.split_tape) -> f64
  func.return %q, %dx : f64, f64
}
func.func @none(%x: f64, %s0: f64, %s1: f64) -> f64 {
  %t = ad.autodiff @two(%x) {activity = [active], ret_activity = [active, active], split = forward, with_primal = []}
    : (f64) -> !ad.split_tape
  %dx = ad.autodiff @two(%s0, %s1, %t) {activity = [active], ret_activity = [active, active], split = reverse}
    : (f64, f64, !ad.split_tape) -> f64
  func.return %dx : f64
}
func.func @main() {
  %x = arith.constant 0.5 : f64
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %q, %d = func.call @second(%x, %one, %two) : (f64, f64, f64) -> (f64, f64)
  printf.print_format "second {} {}\n", %q : f64, %d : f64
  %e = func.call @none(%x, %one, %two) : (f64, f64, f64) -> f64
  printf.print_format "none {}\n", %e : f64
  func.return
}
