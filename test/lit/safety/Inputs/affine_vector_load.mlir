func.func @f(%x: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %v = affine.vector_load %x[%c0] : memref<4xf64>, vector<2xf64>
  %s = memref.load %x[%c0] : memref<4xf64>
  func.return %s : f64
}
func.func @g(%x: memref<4xf64>, %dx: memref<4xf64>) {
  %one = arith.constant 1.0 : f64
  ad.autodiff @f(%x, %dx, %one) {activity = [dup], ret_activity = [active]} : (memref<4xf64>, memref<4xf64>, f64) -> ()
  func.return
}
