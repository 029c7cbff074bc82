// RUN: ad-opt %s -p ad-private-copies | filecheck %s
// ad-private-copies: an argument marked `ad.private_copy = K` gets a buffer
// of its own that every use reads and writes (the caller's array is only
// read), filled, with shadow K zero-filled, by a loop placed before the
// first op that may touch array contents; that loop fuses into the next
// one when the range matches and the alias analysis allows it.

// The gradient of kernel 5 (in-place square then sum): one loop, which
// copies x[i] and zeroes dx[i] before the user's body reads them.
// CHECK-LABEL: func.func @square_then_sum_grad
// CHECK-SAME:    (%x: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias}, %seed: f64)
// CHECK:         %[[N0:.*]] = memref.dim %x, %{{.*}} : memref<?xf64>
// CHECK-NEXT:    %[[W:.*]] = memref.alloc(%[[N0]]) : memref<?xf64>
// CHECK-NEXT:    ad.shadow_check %[[W]], %dx
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NEXT:      %[[V:.*]] = memref.load %x[%[[I]]] {ad.unchecked}
// CHECK-NEXT:      memref.store %[[V]], %[[W]][%[[I]]] {ad.unchecked}
// CHECK-NEXT:      memref.store %{{.*}}, %dx[%[[I]]] {ad.unchecked}
// CHECK-NEXT:      %a = memref.load %[[W]][%[[I]]] : memref<?xf64>
// CHECK-NEXT:      %sq = arith.mulf %a, %a
// CHECK-NEXT:      memref.store %sq, %[[W]][%[[I]]] : memref<?xf64>
// CHECK-NEXT:      %d = memref.load %dx[%[[I]]]
// CHECK:         } {ad.fused = "user loop"}
// CHECK-NOT:     scf.for
// CHECK-NOT:     %x[
// CHECK:         memref.dealloc %[[W]] : memref<?xf64>
// CHECK-NEXT:    func.return
func.func @square_then_sum_grad(%x: memref<?xf64> {ad.noalias, ad.private_copy = 1 : i64},
                                %dx: memref<?xf64> {ad.noalias}, %seed: f64) -> f64 {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  %s = arith.constant 0.0 : f64
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %s) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %a, %a : f64
    memref.store %sq, %x[%i] : memref<?xf64>
    %d = memref.load %dx[%i] : memref<?xf64>
    %d2 = arith.addf %d, %seed : f64
    memref.store %d2, %dx[%i] : memref<?xf64>
    %acc2 = arith.addf %acc, %sq : f64
    scf.yield %acc2 : f64
  } {ad.fused = "user loop"}
  func.return %r : f64
}

// Over the same range, the loop reads x[n-1-i], which the fill writes only
// later when i < n-1-i: fused, it would read memory not yet copied. The
// fill stays a loop of its own. No shadow (-1): a copy only.
// CHECK-LABEL: func.func @reads_ahead
// CHECK:         %[[W:.*]] = memref.alloc
// CHECK:         scf.for
// CHECK-NEXT:      memref.load %x[
// CHECK-NEXT:      memref.store %{{.*}}, %[[W]][
// CHECK-NEXT:    }
// CHECK:         scf.for
// CHECK:           memref.load %[[W]][%{{.*}}]
// CHECK-NOT:       %x[
// CHECK:         memref.dealloc %[[W]]
func.func @reads_ahead(%x: memref<?xf64> {ad.noalias, ad.private_copy = -1 : i64},
                       %y: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %last = arith.subi %n, %c1 : index
  scf.for %i = %c0 to %n step %c1 {
    %j = arith.subi %last, %i : index
    %b = memref.load %x[%j] : memref<?xf64>
    memref.store %b, %y[%i] : memref<?xf64>
  }
  func.return
}

// x[0] is read before any loop: the fill goes before that read.
// CHECK-LABEL: func.func @reads_first
// CHECK:         %[[W:.*]] = memref.alloc
// CHECK:         scf.for
// CHECK-NEXT:      memref.load %x[
// CHECK-NEXT:      memref.store %{{.*}}, %[[W]][
// CHECK-NEXT:      memref.store %{{.*}}, %dx[
// CHECK:         memref.load %[[W]][%{{.*}}]
// CHECK:         memref.store %{{.*}}, %[[W]][%{{.*}}]
func.func @reads_first(%x: memref<?xf64> {ad.private_copy = 1 : i64}, %dx: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %a = memref.load %x[%c0] : memref<?xf64>
  %sq = arith.mulf %a, %a : f64
  memref.store %sq, %x[%c0] : memref<?xf64>
  func.return %a : f64
}

// Rank 2, or a strided layout: left as it is (the caller keeps copying),
// the mark removed.
// CHECK-LABEL: func.func @not_rank_one
// CHECK-SAME:    (%x: memref<?x?xf64>, %y: memref<?xf64, strided<[?], offset: ?>>)
// CHECK-NOT:     memref.alloc
// CHECK:         memref.store %{{.*}}, %x[
// CHECK:         memref.store %{{.*}}, %y[
func.func @not_rank_one(%x: memref<?x?xf64> {ad.private_copy = -1 : i64},
                        %y: memref<?xf64, strided<[?], offset: ?>> {ad.private_copy = -1 : i64}) {
  %c0 = arith.constant 0 : index
  %v = arith.constant 2.0 : f64
  memref.store %v, %x[%c0, %c0] : memref<?x?xf64>
  memref.store %v, %y[%c0] : memref<?xf64, strided<[?], offset: ?>>
  func.return
}
