func.func @f(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @main(%x: f64) -> f64 {
  %r = ad.fwddiff @f(%x) {activity = [const], ret_activity = [const], width = 0} : (f64) -> f64
  func.return %r : f64
}
