func.func @f(%x: f64) -> f64 {
  %c = arith.constant 2.0 : f64
  cf.br ^bb1(%x : f64)
^bb1(%y: f64):
  %z = arith.mulf %y, %c : f64
  %big = arith.cmpf ogt, %z, %c : f64
  cf.cond_br %big, ^bb2(%z : f64), ^bb3
^bb3:
  %huge = arith.cmpf ogt, %z, %x : f64
  cf.cond_br %huge, ^bb2(%x : f64), ^bb1(%z : f64)
^bb2(%r: f64):
  func.return %r : f64
}
func.func @main(%x: f64) -> f64 {
  %s = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%x, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}
