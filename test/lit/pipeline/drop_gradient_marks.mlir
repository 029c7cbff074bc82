// ad-drop-gradient-marks, the last step of ad-reverse: the gradients are
// plain functions from here on (no later step of the pipeline acts on
// them by their mark).
// RUN: ad-opt %s -p ad-drop-gradient-marks | filecheck %s

// CHECK-NOT:   ad.gradient_of
// CHECK:       func.func @f_grad_a_a(%x: f64, %seed: f64) -> f64 {
// CHECK-NEXT:    %d = arith.mulf %seed, %x : f64
// CHECK-NOT:   ad.gradient_of
func.func @f_grad_a_a(%x: f64, %seed: f64) -> f64 attributes {ad.gradient_of = {primal = @f, activity = ["active"], ret_activity = ["active"]}} {
  %d = arith.mulf %seed, %x : f64
  func.return %d : f64
}
