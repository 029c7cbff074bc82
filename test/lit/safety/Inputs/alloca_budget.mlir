// 100 dynamic allocas of 64 KiB in a loop: more than the 1 MiB stack budget of a call.
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  %n = func.call @size() : () -> index
  %z = arith.constant 0.0 : f64
  scf.for %i = %c0 to %c100 step %c1 {
    %a = memref.alloca(%n) : memref<?xf64>
    memref.store %z, %a[%c0] : memref<?xf64>
  }
  printf.print_format "done\n"
  func.return
}
func.func private @size() -> index {
  %n = arith.constant 8192 : index
  func.return %n : index
}
