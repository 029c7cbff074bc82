// RUN: ad-opt %s --print-alias 2>&1 >/dev/null | filecheck %s
// Alias facts: plain arguments may alias, a noalias one does not; index
// reasoning in loops (a store to x[i+1] never overwrites an earlier x[i],
// a store to x[i-1] overwrites it one iteration later); constant indices;
// disjoint static subviews of one buffer do not alias, overlapping ones may.

// CHECK-LABEL: alias analysis of @copy_plain
// CHECK-NEXT:    class 0: %a (argument 0), %b (argument 1)
// CHECK-NEXT:    %a vs %b: may-alias (arguments %a and %b may alias (no noalias attribute))
// CHECK-NEXT:    load %v = %a[%i] at {{.*}}: overwritten by store at {{.*}}: arguments %b and %a may alias
// CHECK-LABEL: alias analysis of @copy_noalias
// CHECK-NEXT:    class 0: %a (argument 0)
// CHECK-NEXT:    class 1: %b (argument 1)
// CHECK-NEXT:    %a vs %b: no-alias (%a is noalias)
// CHECK-NEXT:    load %v = %a[%i] at {{.*}}: not overwritten
// CHECK-LABEL: alias analysis of @shifts
// The first loop stores x[i+1]: only the later loop and the final store may overwrite x[i].
// CHECK:         load %v = %x[%i] at [[L1:.*]]:[[R1:[0-9]+]]:5: overwritten by store at {{.*}}:[[S2:[0-9]+]]:5 later: possibly the same element of %x
// CHECK-NEXT:    load %v = %x[%i] at [[L1]]:[[R1]]:5: overwritten by store at {{.*}} later: possibly the same element of %x
// The second loop stores x[i-1]: the next iteration overwrites x[i].
// CHECK-NEXT:    load %v = %x[%i] at {{.*}}: overwritten by store at {{.*}}:[[S2]]:5 in a later iteration: possibly the same element of %x
// CHECK-NEXT:    load %v = %x[%i] at {{.*}}: overwritten by store at {{.*}} later: possibly the same element of %x
// CHECK-NEXT:    load %k = %x[%c2] at {{.*}}: not overwritten
// CHECK-LABEL: alias analysis of @views
// CHECK:         %lo vs %hi: no-alias (disjoint static views of %buf: [0, 3] and [4, 7])
// CHECK-NEXT:    %lo vs %mid: may-alias (both address %buf)
// CHECK-NEXT:    %hi vs %mid: may-alias (both address %buf)
// CHECK-NEXT:    load %v = %lo[%i] at {{.*}}: not overwritten
// mid[i] = buf[2+i] and hi[j] = buf[4+j] meet only when j = i - 2, before the load.
// CHECK-NEXT:    load %u = %mid[%i] at {{.*}}: not overwritten

func.func @copy_plain(%a: memref<?xf64>, %b: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    memref.store %w, %b[%i] : memref<?xf64>
  }
  func.return
}
func.func @copy_noalias(%a: memref<?xf64> {ad.noalias}, %b: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    memref.store %w, %b[%i] : memref<?xf64>
  }
  func.return
}
func.func @shifts(%x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %m = arith.subi %n, %c1 : index
  scf.for %i = %c1 to %m step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %ip = arith.addi %i, %c1 : index
    memref.store %v, %x[%ip] : memref<?xf64>
  }
  scf.for %i = %c1 to %m step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %im = arith.subi %i, %c1 : index
    memref.store %v, %x[%im] : memref<?xf64>
  }
  %k = memref.load %x[%c2] : memref<?xf64>
  memref.store %k, %x[%c3] : memref<?xf64>
  func.return
}
func.func @views(%buf: memref<8xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lo = memref.subview %buf[0] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1]>>
  %hi = memref.subview %buf[4] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1], offset: 4>>
  %mid = memref.subview %buf[2] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1], offset: 2>>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %lo[%i] : memref<4xf64, strided<[1]>>
    memref.store %v, %hi[%i] : memref<4xf64, strided<[1], offset: 4>>
    %u = memref.load %mid[%i] : memref<4xf64, strided<[1], offset: 2>>
    memref.store %u, %hi[%i] : memref<4xf64, strided<[1], offset: 4>>
  }
  func.return
}
