// Input of inline_calls.mlir: the copy of @f calls @g, which calls @f.
func.func @f(%x: f64) -> f64 {
  %y = func.call @g(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @f_grad_a_a(%x: f64) -> f64 attributes {ad.gradient_of = {primal = @f, activity = ["active"], ret_activity = ["active"]}} {
  %y = func.call @g(%x) : (f64) -> f64
  func.return %y : f64
}
func.func @g(%x: f64) -> f64 {
  %y = func.call @f(%x) : (f64) -> f64
  func.return %y : f64
}
