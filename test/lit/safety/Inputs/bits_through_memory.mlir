func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %buf = memref.alloca() : memref<1xi64>
  %i = arith.bitcast %x : f64 to i64
  memref.store %i, %buf[%c0] : memref<1xi64>
  %j = memref.load %buf[%c0] : memref<1xi64>
  %y = arith.bitcast %j : i64 to f64
  %r = arith.mulf %y, %y : f64
  func.return %r : f64
}
func.func @g(%a: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %r = ad.autodiff @f(%a, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %r : f64
}
