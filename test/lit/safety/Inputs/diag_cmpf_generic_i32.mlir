func.func @main() {
  %a = arith.constant 1 : i32
  %b = "arith.cmpf"(%a, %a) <{predicate = 4 : i64}> : (i32, i32) -> i1
  func.return
}
