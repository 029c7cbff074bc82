// RUN: ad-opt %s --print-alias 2>&1 >/dev/null | filecheck %s
// Invariant: distinct allocations never alias each other or an argument, so
// a load from one is not clobbered by stores to the others; a memref of
// unknown origin (here a call result) may alias arguments and allocations
// that escaped (were passed to a call), but not a private allocation.

// CHECK-LABEL: alias analysis of @locals
// CHECK:         objects:
// CHECK-NEXT:      %x: argument #0
// CHECK-NEXT:      %y: memref.alloc at {{.*}}allocations.mlir:{{[0-9]+}}:3
// CHECK-NEXT:      %w: memref.alloc at {{.*}}allocations.mlir:{{[0-9]+}}:3
// CHECK-NEXT:    classes:
// CHECK-NEXT:      class 0 (objects %x):
// CHECK:           class 1 (objects %y):
// CHECK:           class 2 (objects %w):
// CHECK:         pairs:
// CHECK-NEXT:      %x, %y: no-alias: allocation %y never overlaps argument %x
// CHECK-NEXT:      %x, %w: no-alias: allocation %w never overlaps argument %x
// CHECK-NEXT:      %y, %w: no-alias: distinct allocations %y and %w
// CHECK-NEXT:    loads:
// CHECK-NEXT:      %a = memref.load %y[%i] at {{.*}}: not overwritten

// CHECK-LABEL: alias analysis of @escapes
// CHECK:         objects:
// CHECK-NEXT:      %x: argument #0
// CHECK-NEXT:      %p: memref.alloc at {{.*}}
// CHECK-NEXT:      %q: memref.alloc at {{.*}}, escapes through func.call at {{.*}}
// CHECK-NEXT:      %m: unknown origin: func.call at {{.*}}
// CHECK-NEXT:    classes:
// CHECK-NEXT:      class 0 (objects %x, %q, %m):
// CHECK-NEXT:        %x  argument
// CHECK-NEXT:        %q  memref.alloc at
// CHECK-NEXT:        %m  func.call at
// CHECK-NEXT:      class 1 (objects %p):
// CHECK:           %p, %m: no-alias: allocation %p never escapes, so %m (unknown origin) cannot address it
// CHECK-NEXT:      %q, %m: may-alias: %m (unknown origin: func.call at {{.*}}) may address allocation %q, which escapes through func.call at {{.*}}
// CHECK:         loads:
// CHECK-NEXT:      %b = memref.load %p[%c0] at {{.*}}: not overwritten
// CHECK-NEXT:      %c = memref.load %q[%c0] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (later): writes %m[0], and %m (unknown origin: func.call at {{.*}}) may address allocation %q

func.func @locals(%x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %y = memref.alloc(%n) : memref<?xf64>
  %w = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %y[%i] : memref<?xf64>
    memref.store %a, %w[%i] : memref<?xf64>
    memref.store %a, %x[%i] : memref<?xf64>
  }
  func.return
}

func.func private @keep(memref<4xf64>) -> memref<4xf64>

func.func @escapes(%x: memref<4xf64>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f64
  %p = memref.alloc() : memref<4xf64>
  %q = memref.alloc() : memref<4xf64>
  %m = func.call @keep(%q) : (memref<4xf64>) -> memref<4xf64>
  %b = memref.load %p[%c0] : memref<4xf64>
  %c = memref.load %q[%c0] : memref<4xf64>
  memref.store %z, %m[%c0] : memref<4xf64>
  func.return
}
