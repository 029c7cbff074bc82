func.func @f(%a: f64) -> f64 {
  %r = arith.addf %a, : f64
  func.return %r : f64
}
