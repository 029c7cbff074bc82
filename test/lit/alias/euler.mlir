// RUN: ad-opt %s --print-alias 2>&1 >/dev/null | filecheck %s
// Invariant (explicit Euler, u and du noalias): the loads of u in the
// derivative loop are overwritten by the update loop `u[j] = ...` of the
// same time step; the update loop's own load of u[j] by its store in the
// same iteration; the load of du[j] by the derivative loop's store in the
// next time step. The final read-out loop is not overwritten. Without
// noalias every store may also hit the other argument.

// CHECK-LABEL: alias analysis of @euler
// CHECK:         loads:
// CHECK-NEXT:      %u0 = memref.load %u[%i] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (later in the same iteration): writes %u[%j], which may be %u[%i]
// CHECK-NEXT:      %u1 = memref.load %u[%im] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (later in the same iteration): writes %u[%j], which may be %u[%i - 1]
// CHECK-NEXT:      %u2 = memref.load %u[%j] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (later in the same iteration): writes the same element %u[%j]
// CHECK-NEXT:      %g = memref.load %du[%j] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (in a later iteration of the scf.for at {{.*}}euler.mlir:{{[0-9]+}}:3): writes %du[%i], which may be %du[%j]
// CHECK-NEXT:      %r = memref.load %u[%k] at {{.*}}: not overwritten

// CHECK-LABEL: alias analysis of @euler_may_alias
// CHECK:           %u0 = memref.load %u[%i] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (later in the same iteration): writes %du[%i], and arguments %du and %u may alias (no noalias attribute)
// CHECK-NEXT:        store at {{.*}} (later in the same iteration): writes %u[%j], which may be %u[%i]
// CHECK:           %g = memref.load %du[%j] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (in a later iteration of the scf.for at {{.*}}): writes %du[%i], which may be %du[%j]
// CHECK-NEXT:        store at {{.*}} (later in the same iteration): writes %u[%j], and arguments %u and %du may alias (no noalias attribute)

func.func @euler(%u: memref<?xf64> {ad.noalias}, %du: memref<?xf64> {ad.noalias}, %steps: index, %dt: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %k01 = arith.constant 0.1 : f64
  %n = memref.dim %u, %c0 : memref<?xf64>
  scf.for %t = %c0 to %steps step %c1 {
    scf.for %i = %c1 to %n step %c1 {
      %u0 = memref.load %u[%i] : memref<?xf64>
      %im = arith.subi %i, %c1 : index
      %u1 = memref.load %u[%im] : memref<?xf64>
      %sq = arith.mulf %u0, %u0 : f64
      %cube = arith.mulf %sq, %u0 : f64
      %ku = arith.mulf %k01, %u1 : f64
      %f = arith.subf %ku, %cube : f64
      memref.store %f, %du[%i] : memref<?xf64>
    }
    scf.for %j = %c1 to %n step %c1 {
      %u2 = memref.load %u[%j] : memref<?xf64>
      %g = memref.load %du[%j] : memref<?xf64>
      %s = arith.mulf %dt, %g : f64
      %v = arith.addf %u2, %s : f64
      memref.store %v, %u[%j] : memref<?xf64>
    }
  }
  %sum = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %r = memref.load %u[%k] : memref<?xf64>
    %acc2 = arith.addf %acc, %r : f64
    scf.yield %acc2 : f64
  }
  func.return %sum : f64
}

func.func @euler_may_alias(%u: memref<?xf64>, %du: memref<?xf64>, %steps: index, %dt: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %u, %c0 : memref<?xf64>
  scf.for %t = %c0 to %steps step %c1 {
    scf.for %i = %c1 to %n step %c1 {
      %u0 = memref.load %u[%i] : memref<?xf64>
      %cube = arith.mulf %u0, %u0 : f64
      memref.store %cube, %du[%i] : memref<?xf64>
    }
    scf.for %j = %c1 to %n step %c1 {
      %u2 = memref.load %u[%j] : memref<?xf64>
      %g = memref.load %du[%j] : memref<?xf64>
      %v = arith.addf %u2, %g : f64
      memref.store %v, %u[%j] : memref<?xf64>
    }
  }
  func.return
}
