// affine.parallel with reductions is an error at its location, saying what
// to write instead.
// RUN: not ad-opt %s 2>&1 | filecheck %s

func.func @f(%x: memref<?xf64>, %n: index) -> f64 {
  // CHECK: affine_parallel_reduce.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: affine.parallel with reductions is not supported by adpasses; write affine.for (or scf.for) with iter_args
  %r = affine.parallel (%i) = (0) to (symbol(%n)) reduce ("addf") -> (f64) {
    %v = affine.load %x[%i] : memref<?xf64>
    affine.yield %v : f64
  }
  func.return %r : f64
}
