// 2**62 doubles: 8 * 2**62 wraps to 0 bytes without the check (r19 075).
func.func @main() {
  %n = arith.constant 4611686018427387904 : index
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f64
  %x = memref.alloc(%n) : memref<?xf64>
  memref.store %one, %x[%c0] : memref<?xf64>
  %v = memref.load %x[%c0] : memref<?xf64>
  printf.print_format "{}\n", %v : f64
  memref.dealloc %x : memref<?xf64>
  func.return
}
