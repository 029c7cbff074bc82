// The tangent of an op without a forward rule is an error, never a zero.
func.func @f(%x: f64) -> f64 {
  %y = math.sin %x : f64
  %z = llvm.fneg %y : f64
  func.return %z : f64
}
func.func @main(%x: f64, %dx: f64) -> (f64, f64) {
  %r:2 = ad.fwddiff @f(%x, %dx) {activity = [dup], ret_activity = [dup]} : (f64, f64) -> (f64, f64)
  func.return %r#0, %r#1 : f64, f64
}
