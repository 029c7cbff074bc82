func.func @main() {
  %c3 = arith.constant 3 : index
  %x = memref.alloc(%c3) : memref<?xf64>
  %v = memref.load %x[%c3] : memref<?xf64>
  printf.print_format "{}\n", %v : f64
  func.return
}
