func.func @f(%x: bf16) -> bf16 {
  %y = arith.mulf %x, %x : bf16
  func.return %y : bf16
}
func.func @main(%a: bf16, %s: bf16) -> bf16 {
  %d = ad.autodiff @f(%a, %s) {activity = [active], ret_activity = [active]} : (bf16, bf16) -> bf16
  func.return %d : bf16
}
