func.func @main() {
  %a = arith.constant 1 : i64
  %b = math.exp %a : i64
  func.return
}
