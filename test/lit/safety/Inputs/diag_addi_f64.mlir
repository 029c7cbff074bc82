func.func @main() {
  %a = arith.constant 1.0 : f64
  %b = arith.addi %a, %a : f64
  func.return
}
