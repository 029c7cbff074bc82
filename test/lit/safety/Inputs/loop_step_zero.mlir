func.func @main() {
  %c0 = arith.constant 0 : index
  %c10 = arith.constant 10 : index
  %s = func.call @step() : () -> index
  scf.for %i = %c0 to %c10 step %s {
    printf.print_format "{}\n", %i : index
  }
  func.return
}
func.func private @step() -> index {
  %s = arith.constant 0 : index
  func.return %s : index
}
