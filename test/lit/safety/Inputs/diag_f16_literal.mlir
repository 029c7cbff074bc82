func.func @main() {
  %a = arith.constant -70000.0 : f16
  func.return
}
