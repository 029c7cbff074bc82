// r17: the gradient's tape for 2**61 iterations needs 2**64 bytes.
func.func @f(%x: memref<?xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %e = math.exp %v : f64
    %s = arith.mulf %acc, %e : f64
    %t = arith.addf %s, %e : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}
func.func @main() {
  %c64 = arith.constant 64 : index
  %big = arith.constant 2305843009213693952 : index
  %one = arith.constant 1.0 : f64
  %x = memref.alloc(%c64) : memref<?xf64>
  %dx = memref.alloc(%c64) : memref<?xf64>
  ad.autodiff @f(%x, %dx, %big, %one) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, index, f64) -> ()
  printf.print_format "done\n"
  func.return
}
