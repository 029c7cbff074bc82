func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %lim = arith.constant 100.0 : f64
  cf.br ^h(%x, %c0 : f64, index)
^h(%y: f64, %k: index):
  %go = arith.cmpi slt, %k, %c9 : index
  cf.cond_br %go, ^body, ^out(%y : f64)
^body:
  %big = arith.cmpf ogt, %y, %lim : f64
  cf.cond_br %big, ^out(%y : f64), ^next
^next:
  %y2 = arith.mulf %y, %x : f64
  %k2 = arith.addi %k, %c1 : index
  cf.br ^h(%y2, %k2 : f64, index)
^out(%r: f64):
  func.return %r : f64
}
func.func @g(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @f(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}
