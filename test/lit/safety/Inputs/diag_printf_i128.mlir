func.func @main() {
  %a = arith.constant 1.0 : f64
  %b = arith.constant 5 : i128
  printf.print_format "{} {}\n", %a : f64, %b : i128
  func.return
}
