func.func @main() {
  %a = arith.constant 0x7F800000 : f32
  %b = arith.extf %a : f32 to f64
  %c = arith.constant 0xFFF0000000000000 : f64
  %d = arith.constant 3.4028234663852886e38 : f32
  %e = arith.extf %d : f32 to f64
  printf.print_format "{} {} {}\n", %b : f64, %c : f64, %e : f64
  func.return
}
