func.func @f(%x: f64) -> f64 {
  %v = vector.broadcast %x : f64 to vector<4xf64>
  %e = vector.extract %v[0] : f64 from vector<4xf64>
  %y = arith.mulf %e, %x : f64
  func.return %y : f64
}
func.func @g(%x: f64, %one: f64) -> f64 {
  %d = ad.autodiff @f(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}
