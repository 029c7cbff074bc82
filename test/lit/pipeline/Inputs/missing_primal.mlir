// Input of clone_primals.mlir and build_gradients.mlir: an ad.autodiff of a
// function without a body.
func.func private @ext(f64) -> f64
func.func @main(%a: f64, %s: f64) -> f64 {
  %g = ad.autodiff @ext(%a, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %g : f64
}
