// RUN: ad-opt %s --print-alias 2>&1 >/dev/null | filecheck %s
// The explicit Euler pattern: u is overwritten by the update loop of the
// same step, du by the next step; with %u and %du plain arguments they may
// also alias each other.

// CHECK-LABEL: alias analysis of @euler
// CHECK:       load %a = %u[%i] at {{.*}}:[[L:[0-9]+]]:7: overwritten by store at {{.*}}: arguments %du and %u may alias
// CHECK-NEXT:  load %a = %u[%i] at {{.*}}:[[L]]:7: overwritten by store at {{.*}} later in the same iteration: possibly the same element of %u
// CHECK:       load %g = %du[%i] at {{.*}}: overwritten by store at {{.*}} in a later iteration: possibly the same element of %du

func.func @euler(%u: memref<?xf64>, %du: memref<?xf64>, %steps: index, %dt: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %k = arith.constant 0.1 : f64
  %n = memref.dim %u, %c0 : memref<?xf64>
  scf.for %t = %c0 to %steps step %c1 {
    scf.for %i = %c1 to %n step %c1 {
      %a = memref.load %u[%i] : memref<?xf64>
      %im = arith.subi %i, %c1 : index
      %b = memref.load %u[%im] : memref<?xf64>
      %a2 = arith.mulf %a, %a : f64
      %a3 = arith.mulf %a2, %a : f64
      %kb = arith.mulf %k, %b : f64
      %f = arith.subf %kb, %a3 : f64
      memref.store %f, %du[%i] : memref<?xf64>
    }
    scf.for %i = %c1 to %n step %c1 {
      %a = memref.load %u[%i] : memref<?xf64>
      %g = memref.load %du[%i] : memref<?xf64>
      %s = arith.mulf %dt, %g : f64
      %v = arith.addf %a, %s : f64
      memref.store %v, %u[%i] : memref<?xf64>
    }
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %u[%i] : memref<?xf64>
    %s = arith.addf %acc, %a : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
