func.func @main() {
  %c0 = arith.constant 0 : index
  %a = memref.alloca() : memref<1000000xf64>
  %v = memref.load %a[%c0] : memref<1000000xf64>
  printf.print_format "{}\n", %v : f64
  func.return
}
