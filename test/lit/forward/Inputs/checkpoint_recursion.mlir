func.func @r(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %y = scf.if %done -> (f64) {
    scf.yield %x : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %v = func.call @r(%x, %m) {ad.checkpoint} : (f64, index) -> f64
    %s = math.sin %v : f64
    scf.yield %s : f64
  }
  func.return %y : f64
}
func.func @main(%x: f64, %dx: f64) -> (f64, f64) {
  %c3 = arith.constant 3 : index
  %p, %t = ad.fwddiff @r(%x, %dx, %c3) {activity = [dup, const], ret_activity = [dup]} : (f64, f64, index) -> (f64, f64)
  func.return %p, %t : f64, f64
}
