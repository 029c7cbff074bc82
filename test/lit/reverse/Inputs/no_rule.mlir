// An active op without a reverse rule (llvm.fneg: every arith/math float op
// has an op-table entry, so the example comes from another dialect).
func.func @f(%x: f64) -> f64 {
  %c = arith.constant 2.0 : f64
  %y = llvm.fneg %x : f64
  %z = arith.mulf %y, %c : f64
  func.return %z : f64
}
func.func @main(%x: f64) -> f64 {
  %s = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%x, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}
