func.func @main() {
  %one = arith.constant 1.0 : f64
  %z = arith.constant 0.0 : f64
  %inf = arith.divf %one, %z : f64
  %i = arith.fptosi %inf : f64 to i64
  printf.print_format "{}\n", %i : i64
  func.return
}
