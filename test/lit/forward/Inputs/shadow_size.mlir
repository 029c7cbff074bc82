// A tangent memref of the wrong size stops the call (no silent overrun).
func.func @f(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %s = arith.addf %acc, %a : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
func.func @main() {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c2) : memref<?xf64>
  %r:2 = ad.fwddiff @f(%x, %dx) {activity = [dup], ret_activity = [dup]} : (memref<?xf64>, memref<?xf64>) -> (f64, f64)
  printf.print_format "{}\n", %r#1 : f64
  func.return
}
