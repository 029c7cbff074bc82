func.func @main() {
  %z = arith.constant 0.0 : f64
  %nan = arith.divf %z, %z : f64
  %i = arith.fptosi %nan : f64 to i64
  printf.print_format "{}\n", %i : i64
  func.return
}
