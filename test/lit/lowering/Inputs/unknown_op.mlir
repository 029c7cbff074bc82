func.func @f(%a: f64) -> f64 {
  %r = foo.bar %a : f64
  func.return %r : f64
}
