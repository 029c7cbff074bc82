// RUN: ad-opt %s --reverse --print-cache-report 2>&1 >/dev/null | filecheck %s
// A value taped inside a triangular nest (the inner bounds read the outer
// induction variable) is counted as a sum over the outer iterations, not as
// a product with a free variable.

// CHECK: tape {{.*}} f64 x sum(i in range(0, dim(x, 0)): ceildiv((dim(x, 0) - (i + 1)), 2))
// CHECK: taped bytes: 8*(sum(i in range(0, dim(x, 0)): ceildiv((dim(x, 0) - (i + 1)), 2)))
func.func @tri(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %lo = arith.addi %i, %c1 : index
    %s = scf.for %j = %lo to %n step %c2 iter_args(%a2 = %acc) -> (f64) {
      %a = memref.load %x[%j] : memref<?xf64>
      %p = arith.mulf %a, %a : f64
      memref.store %p, %x[%j] : memref<?xf64>
      %t = arith.addf %a2, %p : f64
      scf.yield %t : f64
    }
    scf.yield %s : f64
  }
  func.return %r : f64
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>) {
  %one = arith.constant 1.0 : f64
  ad.autodiff @tri(%x, %dx, %one) {activity = [dup], ret_activity = [active]}
      : (memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}
