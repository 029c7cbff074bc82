func.func @main() {
  %a = arith.constant 1.5 : f64
  %b = arith.extf %a : f64 to f80
  %c = arith.truncf %b : f80 to f64
  printf.print_format "{}\n", %c : f64
  func.return
}
