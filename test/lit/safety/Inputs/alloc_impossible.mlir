// 2**58 doubles (2 EiB): no address space holds it; malloc returns NULL (r19 077).
func.func @main() {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f64
  %x = memref.alloc() : memref<288230376151711744xf64>
  memref.store %one, %x[%c0] : memref<288230376151711744xf64>
  %v = memref.load %x[%c0] : memref<288230376151711744xf64>
  printf.print_format "{}\n", %v : f64
  func.return
}
