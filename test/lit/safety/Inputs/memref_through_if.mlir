func.func @f(%c: i1, %a: memref<f64>, %b: memref<f64>) -> f64 {
  %m = scf.if %c -> (memref<f64>) {
    scf.yield %a : memref<f64>
  } else {
    scf.yield %b : memref<f64>
  }
  %v = memref.load %m[] : memref<f64>
  func.return %v : f64
}
func.func @g(%c: i1, %a: memref<f64>, %da: memref<f64>, %b: memref<f64>, %db: memref<f64>) -> () {
  %one = arith.constant 1.0 : f64
  ad.autodiff @f(%c, %a, %da, %b, %db, %one) {activity = [const, dup, dup], ret_activity = [active]} : (i1, memref<f64>, memref<f64>, memref<f64>, memref<f64>, f64) -> ()
  func.return
}
