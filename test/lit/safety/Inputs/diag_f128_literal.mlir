func.func @f(%x: f128) -> f128 {
  %a = arith.constant 2.0 : f128
  %b = arith.mulf %a, %x : f128
  func.return %b : f128
}
