func.func @bbargs(%x: f64) -> f64 {
  %cst1 = arith.constant 1.000000e+00 : f64
  %2 = arith.addf %x, %cst1 : f64
  cf.br ^bb1(%2 : f64)
^bb1(%1 : f64):
  %cst = arith.constant 0.000000e+00 : f64
  %flag = arith.cmpf ult, %1, %cst : f64
  cf.cond_br %flag, ^bb1(%1 : f64), ^bb2(%1 : f64)
^bb2(%ret : f64):
  func.return %ret : f64
}
func.func @diff(%x: f64, %dres: f64) -> f64 {
  %r = ad.autodiff @bbargs(%x, %dres) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %r : f64
}
