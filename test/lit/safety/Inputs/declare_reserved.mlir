func.func private @__adpasses_oob(i64, i64, i64, i64)
func.func @main() {
  %c = arith.constant 0 : i64
  func.call @__adpasses_oob(%c, %c, %c, %c) : (i64, i64, i64, i64) -> ()
  func.return
}
