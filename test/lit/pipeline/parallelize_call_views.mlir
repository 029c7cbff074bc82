// RUN: ad-opt %s -p ad-parallelize | filecheck %s
// A helper returning a view of its argument (`def flip(x): return x[::-1]`):
// the call's result addresses the argument's memory (the callee's summary,
// analysis/returned_views.py), not memory of unknown origin, so a loop
// writing another noalias array while reading the view is proven
// independent and outlined; a loop writing the array the view shows stays
// serial (its mark removed).

func.func private @flip(%x: memref<?xf64>) -> memref<?xf64, strided<[?], offset: ?>> {
  %c1 = arith.constant 1 : index
  %m1 = arith.constant -1 : index
  %base, %off, %n, %st = memref.extract_strided_metadata %x : memref<?xf64> -> memref<f64>, index, index, index
  %last = arith.subi %n, %c1 : index
  %start = arith.muli %last, %st : index
  %neg = arith.muli %st, %m1 : index
  %v = memref.reinterpret_cast %x to offset: [%start], sizes: [%n], strides: [%neg] : memref<?xf64> to memref<?xf64, strided<[?], offset: ?>>
  func.return %v : memref<?xf64, strided<[?], offset: ?>>
}

// y[i] = 2 t[i], t = flip(x), x and y noalias: parallel.
// CHECK-LABEL: func.func @reads_returned_view(
// CHECK:         %t = func.call @flip(%x)
// CHECK:         "ad.parallel_for"({{.*}}) <{callee = @reads_returned_view.par0
// CHECK-NOT:     scf.for
// CHECK:         func.return
func.func @reads_returned_view(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %t = func.call @flip(%x) : (memref<?xf64>) -> memref<?xf64, strided<[?], offset: ?>>
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %t[%i] : memref<?xf64, strided<[?], offset: ?>>
    %b = arith.mulf %two, %a : f64
    memref.store %b, %y[%i] : memref<?xf64>
  } {ad.parallel = "prange"}
  func.return
}

// x[i] = 2 t[i], t = flip(x): iteration i reads x[n-1-i], which iteration
// n-1-i writes: serial, the mark gone.
// CHECK-LABEL: func.func @writes_what_the_view_shows(
// CHECK-NOT:     ad.parallel_for
// CHECK:         scf.for
// CHECK:         memref.store
// CHECK-NEXT:  }
// CHECK-NOT:   ad.parallel
// CHECK:       func.return
func.func @writes_what_the_view_shows(%x: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %t = func.call @flip(%x) : (memref<?xf64>) -> memref<?xf64, strided<[?], offset: ?>>
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %t[%i] : memref<?xf64, strided<[?], offset: ?>>
    %b = arith.mulf %two, %a : f64
    memref.store %b, %x[%i] : memref<?xf64>
  } {ad.parallel = "prange"}
  func.return
}

// The reverse of `s += np.sum(A[i, :] * flip(x))`: every iteration adds into
// all of dx through the reversed view, built in the loop from dx's own
// metadata. Accumulations through views into private copies
// (transforms/privatize.py): in the chunk loop dx is row `chunk` of the
// copies, cast to dx's type (so the view built from its metadata addresses
// the same elements of the copy); the copies are added into dx in chunk
// order after the parallel loop; the serial loop otherwise.
// CHECK-LABEL: func.func @sum_into_reversed_view(
// CHECK:         scf.if
// CHECK:           %dx_private = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf64>
// CHECK:           "ad.parallel_for"({{.*}}%dx_private{{.*}}) <{callee = @sum_into_reversed_view.par0
// CHECK:           memref.load %dx_private
// CHECK:           memref.store %{{.*}}, %dx[%{{.*}}] {ad.unchecked}
// CHECK:           memref.dealloc %dx_private
// CHECK:         } else {
// CHECK:           scf.for %i
// CHECK:           memref.reinterpret_cast %dx
// CHECK:       func.func private @sum_into_reversed_view.par0(
// CHECK:         scf.for %chunk = %lo to %hi step %step {
// CHECK:           %[[ROW:.*]] = memref.subview %dx_private[%chunk, %{{.*}}] [1, %{{.*}}] [%{{.*}}, %{{.*}}] : memref<?x?xf64> to memref<?xf64, strided<[?], offset: ?>>
// CHECK-NEXT:      %[[MINE:.*]] = "memref.cast"(%[[ROW]]) : (memref<?xf64, strided<[?], offset: ?>>) -> memref<?xf64>
// CHECK-NEXT:      scf.for %i
// CHECK-NEXT:        memref.extract_strided_metadata %[[MINE]]
// CHECK:             %v = memref.reinterpret_cast %[[MINE]]
// CHECK:               memref.store %s, %v[%j]
func.func @sum_into_reversed_view(%dx: memref<?xf64> {ad.noalias}, %A: memref<?x?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m1 = arith.constant -1 : index
  %n = memref.dim %A, %c0 : memref<?x?xf64>
  %m = memref.dim %A, %c1 : memref<?x?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %base, %off, %sz, %st = memref.extract_strided_metadata %dx : memref<?xf64> -> memref<f64>, index, index, index
    %last = arith.subi %sz, %c1 : index
    %start = arith.muli %last, %st : index
    %neg = arith.muli %st, %m1 : index
    %v = memref.reinterpret_cast %dx to offset: [%start], sizes: [%sz], strides: [%neg] : memref<?xf64> to memref<?xf64, strided<[?], offset: ?>>
    scf.for %j = %c0 to %m step %c1 {
      %a = memref.load %A[%i, %j] : memref<?x?xf64>
      %d = memref.load %v[%j] : memref<?xf64, strided<[?], offset: ?>>
      %s = arith.addf %d, %a : f64
      memref.store %s, %v[%j] : memref<?xf64, strided<[?], offset: ?>>
    }
  } {ad.parallel = "prange"}
  func.return
}
