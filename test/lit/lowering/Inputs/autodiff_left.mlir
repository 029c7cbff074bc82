func.func @f(%a: f64) -> f64 {
  func.return %a : f64
}
func.func @g(%a: f64) -> f64 {
  %s = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%a, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}
