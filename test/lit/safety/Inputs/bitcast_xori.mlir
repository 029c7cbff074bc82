func.func @f(%x: f64) -> f64 {
  %i = arith.bitcast %x : f64 to i64
  %m = arith.constant -9223372036854775808 : i64
  %j = arith.xori %i, %m : i64
  %y = arith.bitcast %j : i64 to f64
  func.return %y : f64
}
func.func @g(%a: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %r = ad.autodiff @f(%a, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %r : f64
}
