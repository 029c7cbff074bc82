func.func @f(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}
func.func @g(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}
func.func @main(%x: f64, %dx: f64) -> (f64, f64) {
  %r:2 = ad.fwddiff @g(%x, %dx) {activity = [dup], ret_activity = [dup]} : (f64, f64) -> (f64, f64)
  func.return %r#0, %r#1 : f64, f64
}
