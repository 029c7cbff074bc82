func.func @main() {
  %a = arith.constant 1 : index
  %b = "arith.addf"(%a, %a) : (index, index) -> index
  func.return
}
