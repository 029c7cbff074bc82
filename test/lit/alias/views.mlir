// RUN: ad-opt %s --print-alias 2>&1 >/dev/null | filecheck %s
// Invariant: views (memref.cast, reinterpret_cast, expand_shape,
// collapse_shape, subview) address their source's memory; the element a
// load reads through a view is composed back onto the underlying object, so
// a store to that element of the source clobbers the load and a store to a
// neighbouring element does not.

// CHECK-LABEL: alias analysis of @views
// CHECK:         classes:
// CHECK-NEXT:      class 0 (objects %x):
// CHECK-NEXT:        %x  argument
// CHECK-NEXT:        %dyn  memref.cast at
// CHECK-NEXT:        %rc  memref.reinterpret_cast at
// CHECK-NEXT:        %e  memref.expand_shape at
// CHECK-NEXT:        %flat  memref.collapse_shape at
// CHECK-NEXT:    pairs:
// CHECK-NEXT:      %dyn, %rc: may-alias: views of %x that may overlap
// CHECK-NEXT:      %dyn, %e: may-alias: views of %x that may overlap
// collapse_shape(expand_shape(x)) addresses x[k] at index k, as %dyn does.
// CHECK-NEXT:      %dyn, %flat: must-alias: identical index maps into %x
// CHECK:         loads:
// %dyn[5] is x[5]: the store to x[5] writes it.
// CHECK-NEXT:      %a = memref.load %dyn[%c5] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (later): writes the same element %x[5]
// %rc[1, 1] is x[2 + 1*2 + 1] = x[5].
// CHECK-NEXT:      %b = memref.load %rc[%c1, %c1] at {{.*}}: overwritten by
// CHECK-NEXT:        store at {{.*}} (later): writes the same element %x[offset 5]
// %e[1, 2] is x[4*1 + 2] = x[6], never x[5].
// CHECK-NEXT:      %d = memref.load %e[%c1, %c2] at {{.*}}: not overwritten
// %flat[%c4] is x[4]
// CHECK-NEXT:      %f = memref.load %flat[%c4] at {{.*}}: not overwritten

func.func @views(%x: memref<16xf64>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %z = arith.constant 0.0 : f64
  %dyn = "memref.cast"(%x) : (memref<16xf64>) -> memref<?xf64>
  %rc = memref.reinterpret_cast %x to offset: [2], sizes: [4, 2], strides: [2, 1] : memref<16xf64> to memref<4x2xf64, strided<[2, 1], offset: 2>>
  %e = memref.expand_shape %x [[0, 1]] output_shape [4, 4] : memref<16xf64> into memref<4x4xf64>
  %flat = memref.collapse_shape %e [[0, 1]] : memref<4x4xf64> into memref<16xf64>
  %a = memref.load %dyn[%c5] : memref<?xf64>
  %b = memref.load %rc[%c1, %c1] : memref<4x2xf64, strided<[2, 1], offset: 2>>
  %d = memref.load %e[%c1, %c2] : memref<4x4xf64>
  %f = memref.load %flat[%c4] : memref<16xf64>
  memref.store %z, %x[%c5] : memref<16xf64>
  func.return
}
