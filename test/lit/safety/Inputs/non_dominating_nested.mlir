func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> (f64) {
    %t = arith.mulf %a, %late : f64
    scf.yield %t : f64
  }
  %late = arith.addf %x, %x : f64
  func.return %r : f64
}
func.func @g(%a: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %r = ad.autodiff @f(%a, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %r : f64
}
