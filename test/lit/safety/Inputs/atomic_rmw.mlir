func.func @f(%x: memref<4xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %old = "memref.atomic_rmw"(%a, %x, %c0) <{kind = 0 : i64}> : (f64, memref<4xf64>, index) -> f64
  %v = memref.load %x[%c0] : memref<4xf64>
  func.return %v : f64
}
func.func @g(%x: memref<4xf64>, %dx: memref<4xf64>, %a: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %r = ad.autodiff @f(%x, %dx, %a, %one) {activity = [dup, active], ret_activity = [active]} : (memref<4xf64>, memref<4xf64>, f64, f64) -> f64
  func.return %r : f64
}
