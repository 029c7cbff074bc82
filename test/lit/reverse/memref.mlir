// RUN: ad-opt %s --reverse --cache-policy=tape-all | filecheck %s
// The memref rule table: a local buffer gets a zeroed shadow of the same
// size, freed after its last reverse use; the shadow of a subview is the
// same subview of the shadow; a store into the output reads its shadow
// (the seed) and zeroes it; a load accumulates into the shadow; memref.copy
// adds the destination shadow into the source shadow element by element.

// CHECK-LABEL: func.func @f_grad_dd_(%x: memref<?xf64>, %dx: memref<?xf64>, %out: memref<?xf64>, %dout: memref<?xf64>)
// CHECK:         %tmp = memref.alloc(%n) : memref<?xf64>
// CHECK:         scf.for %i = %c0 to %h step %c1 {
// CHECK:         %dtmp = memref.alloc(%n) : memref<?xf64>
// CHECK:         scf.for
// CHECK-NEXT:      memref.store %{{.*}}, %dtmp[%{{.*}}] {ad.own_sizes, ad.unchecked} : memref<?xf64>
// The reverse loop: seed of out[i], zeroed, then shadow of even[i] += 2 v g.
// CHECK:         scf.for %[[K:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK:           %[[G:.*]] = memref.load %dout[%[[I:.*]]] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked} : memref<?xf64>
// CHECK-NEXT:      memref.store %{{.*}}, %dout[%[[I]]] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked} : memref<?xf64>
// CHECK-NEXT:      %[[GV:.*]] = arith.mulf %[[G]], %{{.*}} : f64
// CHECK-NEXT:      %[[GV2:.*]] = arith.addf %[[GV]], %[[GV]] : f64
// CHECK-NEXT:      %[[DEVEN:.*]] = memref.subview %dtmp[0] [%h] [2] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked} : memref<?xf64> to memref<?xf64, strided<[2]>>
// CHECK-NEXT:      %[[OLD:.*]] = memref.load %[[DEVEN]][%[[I]]] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked}
// CHECK-NEXT:      %[[NEW:.*]] = arith.addf %[[OLD]], %[[GV2]] : f64
// CHECK-NEXT:      memref.store %[[NEW]], %[[DEVEN]][%[[I]]] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked}
// The copy, reversed: dx += dtmp; dtmp = 0.
// CHECK:         scf.for %[[J:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK-NEXT:      %[[D:.*]] = memref.load %dtmp[%[[J]]] {ad.own_sizes, ad.unchecked} : memref<?xf64>
// CHECK-NEXT:      %[[X:.*]] = memref.load %dx[%[[J]]] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked} : memref<?xf64>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[D]] : f64
// CHECK-NEXT:      memref.store %[[S]], %dx[%[[J]]] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked} : memref<?xf64>
// CHECK:         memref.dealloc %dtmp : memref<?xf64>
// CHECK-NEXT:    memref.dealloc %tmp : memref<?xf64>
// CHECK-NEXT:    func.return

func.func @f(%x: memref<?xf64>, %out: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %tmp = memref.alloc(%n) : memref<?xf64>
  "memref.copy"(%x, %tmp) : (memref<?xf64>, memref<?xf64>) -> ()
  %h = arith.divsi %n, %c2 : index
  %even = memref.subview %tmp[0] [%h] [2] : memref<?xf64> to memref<?xf64, strided<[2]>>
  scf.for %i = %c0 to %h step %c1 {
    %v = memref.load %even[%i] : memref<?xf64, strided<[2]>>
    %w = arith.mulf %v, %v : f64
    memref.store %w, %out[%i] : memref<?xf64>
  }
  memref.dealloc %tmp : memref<?xf64>
  func.return
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %o: memref<?xf64>, %do: memref<?xf64>) {
  ad.autodiff @f(%x, %dx, %o, %do) {activity = [dup, dup], ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
  func.return
}
