func.func @pow_rec(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {
    scf.yield %one : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %p = func.call @pow_rec(%x, %m) : (f64, index) -> f64
    %q = arith.mulf %p, %x : f64
    scf.yield %q : f64
  }
  func.return %r : f64
}
func.func @main(%x: f64, %n: index) -> f64 {
  %s = arith.constant 1.0 : f64
  %d = ad.autodiff @pow_rec(%x, %n, %s) {activity = [active, const], ret_activity = [active]} : (f64, index, f64) -> f64
  func.return %d : f64
}
