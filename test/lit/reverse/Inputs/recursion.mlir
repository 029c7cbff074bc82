func.func @f(%x: f64) -> f64 {
  %y = func.call @g(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @g(%x: f64) -> f64 {
  %y = func.call @f(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @main(%x: f64) -> f64 {
  %s = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%x, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}
