func.func @f(%x: f64) -> f64 {
  %r = arith.mulf %x, %x : f64
  func.return %r : f64
}
func.func @g(%x: f64, %dx: f64) -> f64 {
  %d = ad.fwddiff @f(%x, %dx) {activity = [dup], ret_activity = [dupnoneed], strong_zero} : (f64, f64) -> f64
  func.return %d : f64
}
