func.func @f(%a: i32, %b: i32) {
  %c1 = arith.constant 1 : i32
  scf.for unsigned %j = %a to %b step %c1 : i32 {
  }
  func.return
}
