func.func @apply(%g: (f64) -> f64, %x: f64) -> f64 {
  %y = func.call_indirect %g(%x) : (f64) -> f64
  func.return %y : f64
}
