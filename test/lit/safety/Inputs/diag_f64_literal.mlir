func.func @main() {
  %a = arith.constant 1.0e400 : f64
  printf.print_format "{}\n", %a : f64
  func.return
}
