func.func @f(%n: index) -> f64 {
  %c = arith.constant 2.0 : f64
  func.return %c : f64
}
func.func @main(%n: index, %s: f64) -> index {
  %d = ad.autodiff @f(%n, %s) {activity = [active], ret_activity = [active]} : (index, f64) -> index
  func.return %d : index
}
