// RUN: ad-opt %s --print-alias 2>&1 >/dev/null | filecheck %s
// Invariant: subviews of one buffer with provably disjoint static ranges do
// not alias, and a store into one never clobbers a load from the other;
// overlapping subviews may alias, and a store clobbers a load through the
// other view exactly when it can hit the loaded element later in time.

// CHECK-LABEL: alias analysis of @disjoint
// CHECK:         classes:
// CHECK-NEXT:      class 0 (objects %buf):
// CHECK-NEXT:        %buf  argument
// CHECK-NEXT:        %lo  memref.subview at {{.*}}subviews.mlir:{{[0-9]+}}:3
// CHECK-NEXT:        %hi  memref.subview at {{.*}}subviews.mlir:{{[0-9]+}}:3
// CHECK-NEXT:    pairs:
// CHECK-NEXT:      %lo, %hi: no-alias: disjoint static subviews of %buf [0,4) and [4,8)
// CHECK-NEXT:    loads:
// CHECK-NEXT:      %v = memref.load %lo[%i] at {{.*}}: not overwritten

// CHECK-LABEL: alias analysis of @overlapping
// CHECK:         pairs:
// CHECK-NEXT:      %lo, %mid: may-alias: views of %buf that may overlap
// mid[i] = buf[i+2] is overwritten by lo[j] = buf[j] at j = i + 2.
// CHECK-NEXT:    loads:
// CHECK-NEXT:      %m = memref.load %mid[%i] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (in a later iteration of the scf.for at {{.*}}): writes %buf[%i], which may be %buf[%i + 2]
// The second loop stores mid[j] = buf[j+2] for every j, after the first loop.
// CHECK-NEXT:        store at {{.*}} (later): writes %buf[%i_1 + 2], which may be %buf[%i + 2]
// lo[i] = buf[i] would only be hit by mid[j] = buf[j+2] at j = i - 2: earlier.
// CHECK-NEXT:      %l = memref.load %lo[%i_1] at {{.*}}: not overwritten

func.func @disjoint(%buf: memref<8xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lo = memref.subview %buf[0] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1]>>
  %hi = memref.subview %buf[4] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1], offset: 4>>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %lo[%i] : memref<4xf64, strided<[1]>>
    memref.store %v, %hi[%i] : memref<4xf64, strided<[1], offset: 4>>
  }
  func.return
}

func.func @overlapping(%buf: memref<8xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lo = memref.subview %buf[0] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1]>>
  %mid = memref.subview %buf[2] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1], offset: 2>>
  scf.for %i = %c0 to %c4 step %c1 {
    %m = memref.load %mid[%i] : memref<4xf64, strided<[1], offset: 2>>
    memref.store %m, %lo[%i] : memref<4xf64, strided<[1]>>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %l = memref.load %lo[%i] : memref<4xf64, strided<[1]>>
    memref.store %l, %mid[%i] : memref<4xf64, strided<[1], offset: 2>>
  }
  func.return
}
