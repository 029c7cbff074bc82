// The energy of examples/energy.py written directly in MLIR:
//   rho = sum_i exp(-3 (x_i + 1)),  E = rho^2 + rho^3 + rho^4 / 4
// `ad-opt --reverse --print-cache-report examples/energy.mlir` prints the
// gradient function and, on stderr, what its reverse sweep tapes and why.

func.func @energy(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %m3 = arith.constant -3.0 : f64
  %quarter = arith.constant 0.25 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %rho = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %xi = memref.load %x[%i] : memref<?xf64>
    %t = arith.addf %xi, %one : f64
    %u = arith.mulf %m3, %t : f64
    %e = math.exp %u : f64
    %s = arith.addf %acc, %e : f64
    scf.yield %s : f64
  }
  %r2 = arith.mulf %rho, %rho : f64
  %r3 = arith.mulf %r2, %rho : f64
  %r4 = arith.mulf %r3, %rho : f64
  %q = arith.mulf %r4, %quarter : f64
  %s1 = arith.addf %r2, %r3 : f64
  %energy = arith.addf %s1, %q : f64
  func.return %energy : f64
}

// dE/dx accumulated into %dx (dup), seed 1.0 for the result.
func.func @gradient(%x: memref<?xf64>, %dx: memref<?xf64>) {
  %seed = arith.constant 1.0 : f64
  ad.autodiff @energy(%x, %dx, %seed) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}
