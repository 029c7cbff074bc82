// RUN: ad-opt %s --print-alias 2>&1 >/dev/null | filecheck %s
// Invariant: in an scf.while every store may run again after a load (a
// later iteration, where loop-carried values are unknown; the before region
// also runs after the after region), so a loop-carried index clobbers; only
// indices that differ by a constant in every iteration prove no overwrite.

// CHECK-LABEL: alias analysis of @carried
// CHECK:         loads:
// CHECK-NEXT:      %a = memref.load %x[%k] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (later in the same iteration): writes %x[%k2], which may be %x[%k]
// CHECK-NEXT:      %b = memref.load %x[%k2] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (later in the same iteration): writes the same element %x[%k2]

// CHECK-LABEL: alias analysis of @before_runs_again
// CHECK:         loads:
// CHECK-NEXT:      %c = memref.load %x[%k2] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (in a later iteration of the scf.while at {{.*}}): writes %x[%k], which may be %x[%k2]

// CHECK-LABEL: alias analysis of @constant
// CHECK:         loads:
// CHECK-NEXT:      %a = memref.load %x[%c2] at {{.*}}: not overwritten
// CHECK-NEXT:      %b = memref.load %x[%c3] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (in a later iteration of the scf.while at {{.*}}): writes the same element %x[3]

func.func @carried(%x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %r = scf.while (%k = %c0) : (index) -> index {
    %a = memref.load %x[%k] : memref<?xf64>
    %go = arith.cmpi slt, %k, %n : index
    scf.condition(%go) %k : index
  } do {
  ^bb0(%k2: index):
    %b = memref.load %x[%k2] : memref<?xf64>
    memref.store %z, %x[%k2] : memref<?xf64>
    %k3 = arith.addi %k2, %c1 : index
    scf.yield %k3 : index
  }
  func.return
}

func.func @before_runs_again(%x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %r = scf.while (%k = %c0) : (index) -> index {
    memref.store %z, %x[%k] : memref<?xf64>
    %go = arith.cmpi slt, %k, %n : index
    scf.condition(%go) %k : index
  } do {
  ^bb0(%k2: index):
    %c = memref.load %x[%k2] : memref<?xf64>
    %k3 = arith.addi %k2, %c1 : index
    scf.yield %k3 : index
  }
  func.return
}

func.func @constant(%x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  %r = scf.while (%k = %c0) : (index) -> index {
    %a = memref.load %x[%c2] : memref<?xf64>
    %go = arith.cmpi slt, %k, %n : index
    scf.condition(%go) %k : index
  } do {
  ^bb0(%k2: index):
    memref.store %z, %x[%c3] : memref<?xf64>
    %b = memref.load %x[%c3] : memref<?xf64>
    %k3 = arith.addi %k2, %c1 : index
    scf.yield %k3 : index
  }
  func.return
}
