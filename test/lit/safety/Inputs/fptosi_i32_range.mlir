func.func @main() {
  %x = arith.constant 3.0e9 : f64
  %i = arith.fptosi %x : f64 to i32
  printf.print_format "{}\n", %i : i32
  func.return
}
