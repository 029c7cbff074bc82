func.func @main() {
  %a = arith.constant 1.0 : f32
  %c = arith.constant 1.0 : f64
  %b = "arith.mulf"(%a, %c) : (f32, f64) -> f64
  func.return
}
