func.func @main() {
  %x = arith.constant -1.0 : f32
  %i = arith.fptoui %x : f32 to i16
  printf.print_format "{}\n", %i : i16
  func.return
}
