// RUN: ad-opt %s --print-alias 2>&1 >/dev/null | filecheck %s
// RUN: ad-opt %s > %t.plain
// RUN: ad-opt %s --print-alias 2>/dev/null | diff %t.plain -
// Invariant: an in-place update x[i] = f(x[i]) overwrites the element its
// load read, later in the same iteration (the cache planner must tape it);
// a loop that only reads (s += x[i+1] - x[i]) has no clobbers at all.
// The pass prints on stderr only and leaves the module unchanged.

// CHECK-LABEL: alias analysis of @square
// CHECK:         loads:
// CHECK-NEXT:      %v = memref.load %x[%i] at {{.*}}in_place.mlir:{{[0-9]+}}:5: overwritten by
// CHECK-NEXT:        store at {{.*}}in_place.mlir:{{[0-9]+}}:5 (later in the same iteration): writes the same element %x[%i]
// CHECK-LABEL: alias analysis of @increment
// CHECK:         loads:
// CHECK-NEXT:      %v = memref.load %x[%i] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (later in the same iteration): writes the same element %x[%i]
// CHECK-LABEL: alias analysis of @difference
// CHECK:         pairs: none
// CHECK-NEXT:    loads:
// CHECK-NEXT:      %a = memref.load %x[%ip] at {{.*}}: not overwritten
// CHECK-NEXT:      %b = memref.load %x[%i] at {{.*}}: not overwritten

func.func @square(%x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    memref.store %w, %x[%i] : memref<?xf64>
  }
  func.return
}

func.func @increment(%x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %w = arith.addf %v, %one : f64
    memref.store %w, %x[%i] : memref<?xf64>
  }
  func.return
}

func.func @difference(%x: memref<?xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %m = arith.subi %n, %c1 : index
  %s = scf.for %i = %c0 to %m step %c1 iter_args(%acc = %zero) -> (f64) {
    %ip = arith.addi %i, %c1 : index
    %a = memref.load %x[%ip] : memref<?xf64>
    %b = memref.load %x[%i] : memref<?xf64>
    %d = arith.subf %a, %b : f64
    %acc2 = arith.addf %acc, %d : f64
    scf.yield %acc2 : f64
  }
  func.return %s : f64
}
