// RUN: ad-opt %s --print-alias 2>&1 >/dev/null | filecheck %s
// Invariant: index reasoning across loop iterations is exact in both
// directions. A store to x[i+1] after loading x[i] never overwrites it (it
// hits x[i] only in the earlier iteration i-1); a store to x[i-1] does, one
// iteration later. After the loop, a store to x[0] may hit some x[i]; with
// constant indices, x[3] is never x[2].

// CHECK-LABEL: alias analysis of @ahead
// CHECK:         loads:
// CHECK-NEXT:      %v = memref.load %x[%i] at {{.*}}: not overwritten

// CHECK-LABEL: alias analysis of @behind
// CHECK:         loads:
// CHECK-NEXT:      %v = memref.load %x[%i] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (in a later iteration of the scf.for at {{.*}}): writes %x[%i - 1], which may be %x[%i]

// CHECK-LABEL: alias analysis of @behind_step_two
// CHECK:         loads:
// CHECK-NEXT:      %v = memref.load %x[%i] at {{.*}}: not overwritten

// CHECK-LABEL: alias analysis of @after_loop
// CHECK:         loads:
// CHECK-NEXT:      %v = memref.load %x[%i] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (later): writes %x[0], which may be %x[%i]
// CHECK-NEXT:        store at {{.*}} (later): writes %x[3], which may be %x[%i]
// CHECK-NEXT:      %k = memref.load %x[%c2] at {{.*}}: not overwritten

func.func @ahead(%x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %ip = arith.addi %i, %c1 : index
    memref.store %v, %x[%ip] : memref<?xf64>
  }
  func.return
}

func.func @behind(%x: memref<?xf64>, %n: index) {
  %c1 = arith.constant 1 : index
  scf.for %i = %c1 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %im = arith.subi %i, %c1 : index
    memref.store %v, %x[%im] : memref<?xf64>
  }
  func.return
}

// Iterations i, i+2, i+4, ... store x[i+1], x[i+3], ...: never x[i].
func.func @behind_step_two(%x: memref<?xf64>, %n: index) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c1 to %n step %c2 {
    %v = memref.load %x[%i] : memref<?xf64>
    %im = arith.subi %i, %c1 : index
    memref.store %v, %x[%im] : memref<?xf64>
  }
  func.return
}

func.func @after_loop(%x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
  }
  memref.store %z, %x[%c0] : memref<?xf64>
  %k = memref.load %x[%c2] : memref<?xf64>
  memref.store %k, %x[%c3] : memref<?xf64>
  func.return
}
