// ad-elide-shadow-checks decides, on the IR it is given, which reverse-sweep
// accesses need no bounds check: one tagged `ad.twin_of = N` is marked
// `ad.unchecked` only if the forward access tagged `ad.twin_id = N` is
// still there, checked, before it, on memory of the same sizes (the same
// memory, or a shadow argument compared with its primal by ad.shadow_check);
// one tagged `ad.own_sizes` only if its loop still runs over the memref's
// own sizes. The twins it relied on get an `ad.keep`, so that no later pass
// can erase their checks. Running it twice changes nothing more.
// RUN: ad-opt %s -p ad-elide-shadow-checks | filecheck %s
// RUN: ad-opt %s -p ad-elide-shadow-checks,ad-elide-shadow-checks | filecheck %s
// RUN: ad-opt %s -p ad-elide-shadow-checks,canonicalize,cse,dce | filecheck %s --check-prefix=LATER

// The twin is there and checked: the repeats lose their checks, the twin
// is kept alive (its value is otherwise unused).
// CHECK-LABEL: func.func @present(
// CHECK:         %v = memref.load %x[%i] {ad.twin_id = 0 : i64} : memref<?xf64>
// CHECK-NEXT:    ad.keep %v : f64
// CHECK:         memref.load %dx[%j] {ad.twin_of = 0 : i64, ad.unchecked} : memref<?xf64>
// CHECK:         memref.store %{{.*}}, %dx[%j] {ad.twin_of = 0 : i64, ad.unchecked} : memref<?xf64>
// LATER-LABEL: func.func @present(
// LATER:         %v = memref.load %x[%i] {ad.twin_id = 0 : i64} : memref<?xf64>
// LATER-NEXT:    ad.keep %v : f64
// LATER:         memref.store %{{.*}}, %dx[%j] {ad.twin_of = 0 : i64, ad.unchecked} : memref<?xf64>
func.func @present(%x: memref<?xf64>, %dx: memref<?xf64>, %i: index, %j: index, %g: f64) {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  %v = memref.load %x[%i] {ad.twin_id = 0 : i64} : memref<?xf64>
  %o = memref.load %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
  %n = arith.addf %o, %g : f64
  memref.store %n, %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
  func.return
}

// The twin is gone (a pass erased it before this one): checked.
// CHECK-LABEL: func.func @removed(
// CHECK-NOT:     ad.keep
// CHECK:         memref.load %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
// CHECK:         memref.store %{{.*}}, %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
func.func @removed(%x: memref<?xf64>, %dx: memref<?xf64>, %j: index, %g: f64) {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  %o = memref.load %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
  %n = arith.addf %o, %g : f64
  memref.store %n, %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
  func.return
}

// The twin checks nothing itself (ad.unchecked): checked.
// CHECK-LABEL: func.func @twin_unchecked(
// CHECK:         memref.store %{{.*}}, %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
func.func @twin_unchecked(%x: memref<?xf64>, %dx: memref<?xf64>, %i: index, %j: index, %g: f64) {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  %v = memref.load %x[%i] {ad.twin_id = 0 : i64, ad.unchecked} : memref<?xf64>
  memref.store %g, %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
  func.return
}

// No ad.shadow_check of %dx against %x: the shadow's sizes are unknown.
// CHECK-LABEL: func.func @no_shadow_check(
// CHECK:         memref.store %{{.*}}, %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
func.func @no_shadow_check(%x: memref<?xf64>, %dx: memref<?xf64>, %i: index, %j: index, %g: f64) {
  %v = memref.load %x[%i] {ad.twin_id = 0 : i64} : memref<?xf64>
  memref.store %g, %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
  func.return
}

// The twin comes after the repeat (not a forward-sweep check): checked.
// CHECK-LABEL: func.func @twin_after(
// CHECK:         memref.store %{{.*}}, %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
func.func @twin_after(%x: memref<?xf64>, %dx: memref<?xf64>, %i: index, %j: index, %g: f64) {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  memref.store %g, %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
  %v = memref.load %x[%i] {ad.twin_id = 0 : i64} : memref<?xf64>
  func.return
}

// A dead load hoisted out of its loop as checks at the first and the last
// iteration (ad.twin_end 0 and 1, transforms/dead_forward): the twin is
// there while both ends are.
// CHECK-LABEL: func.func @both_ends(
// CHECK:         ad.keep %a, %b : f64, f64
// CHECK:         memref.store %{{.*}}, %dx[%j] {ad.twin_of = 0 : i64, ad.unchecked} : memref<?xf64>
func.func @both_ends(%x: memref<?xf64>, %dx: memref<?xf64>, %i: index, %k: index, %j: index, %g: f64) {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  %a = memref.load %x[%i] {ad.twin_id = 0 : i64, ad.twin_end = 0 : i64} : memref<?xf64>
  %b = memref.load %x[%k] {ad.twin_id = 0 : i64, ad.twin_end = 1 : i64} : memref<?xf64>
  memref.store %g, %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
  func.return
}

// CHECK-LABEL: func.func @one_end(
// CHECK-NOT:     ad.keep
// CHECK:         memref.store %{{.*}}, %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
func.func @one_end(%x: memref<?xf64>, %dx: memref<?xf64>, %i: index, %j: index, %g: f64) {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  %a = memref.load %x[%i] {ad.twin_id = 0 : i64, ad.twin_end = 0 : i64} : memref<?xf64>
  memref.store %g, %dx[%j] {ad.twin_of = 0 : i64} : memref<?xf64>
  func.return
}

// A reload of the primal itself (the same memory) and a shadow subview.
// CHECK-LABEL: func.func @reload_and_view(
// CHECK:         %w = memref.subview %x[%i] [2] [1] {ad.twin_id = 1 : i64}
// CHECK-NEXT:    ad.keep %v, %w
// CHECK:         memref.load %x[%i] {ad.twin_of = 0 : i64, ad.unchecked} : memref<?xf64>
// CHECK:         memref.subview %dx[%i] [2] [1] {ad.twin_of = 1 : i64, ad.unchecked}
func.func @reload_and_view(%x: memref<?xf64>, %dx: memref<?xf64>, %i: index) {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  %v = memref.load %x[%i] {ad.twin_id = 0 : i64} : memref<?xf64>
  %w = memref.subview %x[%i] [2] [1] {ad.twin_id = 1 : i64} : memref<?xf64> to memref<2xf64, strided<[1], offset: ?>>
  %r = memref.load %x[%i] {ad.twin_of = 0 : i64} : memref<?xf64>
  %dw = memref.subview %dx[%i] [2] [1] {ad.twin_of = 1 : i64} : memref<?xf64> to memref<2xf64, strided<[1], offset: ?>>
  func.return
}

// Over a memref's own sizes: unchecked while the loop runs from 0 to its
// memref.dim; not to some other bound.
// CHECK-LABEL: func.func @own_sizes(
// CHECK:         memref.store %z, %t[%i] {ad.own_sizes, ad.unchecked} : memref<?xf64>
// CHECK:         memref.store %z, %t[%k] {ad.own_sizes} : memref<?xf64>
func.func @own_sizes(%t: memref<?xf64>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %t, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %z, %t[%i] {ad.own_sizes} : memref<?xf64>
  }
  scf.for %k = %c0 to %m step %c1 {
    memref.store %z, %t[%k] {ad.own_sizes} : memref<?xf64>
  }
  func.return
}

// Untagged accesses are not the pass's business.
// CHECK-LABEL: func.func @untagged(
// CHECK:         memref.store %g, %dx[%j] : memref<?xf64>
func.func @untagged(%x: memref<?xf64>, %dx: memref<?xf64>, %i: index, %j: index, %g: f64) {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  %v = memref.load %x[%i] {ad.twin_id = 0 : i64} : memref<?xf64>
  memref.store %g, %dx[%j] : memref<?xf64>
  func.return
}
