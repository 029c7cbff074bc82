func.func @f(%x: memref<?xf64>) -> f64 {
  %c = arith.constant 2.0 : f64
  func.return %c : f64
}
func.func @main(%x: memref<?xf64>, %s: f64) {
  ad.autodiff @f(%x, %s) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, f64) -> ()
  func.return
}
