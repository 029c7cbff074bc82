func.func @f(%x: memref<?xf64>, %s: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %w = arith.mulf %v, %s : f64
    %w2 = arith.mulf %w, %v : f64
    %a = arith.addf %acc, %w2 : f64
    scf.yield %a : f64
  }
  func.return %r : f64
}
