func.func private @ext(f64) -> f64
func.func @dext(%x: f64, %dr: f64) -> f64 {
  %r = ad.autodiff @ext(%x, %dr) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %r : f64
}
