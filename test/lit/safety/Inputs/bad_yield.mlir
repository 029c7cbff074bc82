func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = "scf.for"(%c0, %c1, %c1, %x) ({
  ^bb0(%i: index, %a: f64):
    "scf.yield"() : () -> ()
  }) : (index, index, index, f64) -> f64
  func.return %r : f64
}
func.func @g(%a: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %r = ad.autodiff @f(%a, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %r : f64
}
