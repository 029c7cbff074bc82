func.func private @fill(memref<4xf64>, f64)
func.func @f(%x: memref<4xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  func.call @fill(%x, %a) : (memref<4xf64>, f64) -> ()
  %v = memref.load %x[%c0] : memref<4xf64>
  func.return %v : f64
}
func.func @g(%x: memref<4xf64>, %dx: memref<4xf64>, %a: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %r = ad.autodiff @f(%x, %dx, %a, %one) {activity = [dup, active], ret_activity = [active]} : (memref<4xf64>, memref<4xf64>, f64, f64) -> f64
  func.return %r : f64
}
