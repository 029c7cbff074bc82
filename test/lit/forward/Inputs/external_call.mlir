func.func private @ext(f64) -> f64
func.func @f(%x: f64) -> f64 {
  %y = math.sin %x : f64
  %z = func.call @ext(%y) : (f64) -> f64
  func.return %z : f64
}
func.func @main(%x: f64, %dx: f64) -> (f64, f64) {
  %r:2 = ad.fwddiff @f(%x, %dx) {activity = [dup], ret_activity = [dup]} : (f64, f64) -> (f64, f64)
  func.return %r#0, %r#1 : f64, f64
}
