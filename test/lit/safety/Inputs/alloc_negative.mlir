// ValueError for a negative size (r19 076); LLVM must not fold it away at -O3.
func.func @main() {
  %n = arith.constant -5 : index
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f64
  %x = memref.alloc(%n) : memref<?xf64>
  memref.store %one, %x[%c0] : memref<?xf64>
  printf.print_format "stored\n"
  memref.dealloc %x : memref<?xf64>
  func.return
}
