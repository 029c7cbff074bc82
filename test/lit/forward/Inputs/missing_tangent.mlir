func.func @f(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @main(%x: f64, %dx: f64) -> (f64, f64, f64) {
  %r:3 = ad.fwddiff @f(%x, %dx) {activity = [dup], ret_activity = [dup], width = 2} : (f64, f64) -> (f64, f64, f64)
  func.return %r#0, %r#1, %r#2 : f64, f64, f64
}
