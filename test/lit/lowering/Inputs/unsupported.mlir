// math.ctpop has no lowering
func.func @f(%a: i64) -> i64 {
  %r = math.ctpop %a : i64
  func.return %r : i64
}
