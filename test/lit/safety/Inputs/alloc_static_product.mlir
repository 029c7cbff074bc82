// 2**32 x (2**32 + 1) elements: the product of the static sizes wraps (r19 081).
func.func @main() {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f64
  %x = memref.alloc() : memref<4294967296x4294967297xf64>
  memref.store %one, %x[%c0, %c0] : memref<4294967296x4294967297xf64>
  printf.print_format "stored\n"
  func.return
}
