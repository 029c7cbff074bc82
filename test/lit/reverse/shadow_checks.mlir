// RUN: ad-opt %s --reverse --no-loop-local | filecheck %s
// Shadow accesses carry no bounds checks: the gradient function first checks
// that every shadow argument has its primal's sizes (ad.shadow_check), and
// every shadow access (accumulation, the "read and zero" of a store, the
// zeroing of a local buffer's shadow, accesses through the shadow of a
// subview, and the shadow subview itself) repeats at the same indices an
// access the forward sweep checked on the primal: its twin (`ad.twin_of` =
// the twin's `ad.twin_id`). ad-elide-shadow-checks, the last pass of
// --reverse, finds each twin still checked and marks the repeat
// `ad.unchecked`; the zeroing of a local shadow runs over the shadow's own
// sizes (`ad.own_sizes`). The forward sweep's own accesses keep their checks,
// and those the reverse sweep relies on are kept alive (`ad.keep`).

// CHECK-LABEL: func.func @rows_grad_dd_a(%a: memref<?x?xf64>, %da: memref<?x?xf64>, %out: memref<?xf64>, %dout: memref<?xf64>, %seed: f64) {
// CHECK-NEXT:    ad.shadow_check %a, %da : memref<?x?xf64>, memref<?x?xf64>
// CHECK-NEXT:    ad.shadow_check %out, %dout : memref<?xf64>, memref<?xf64>
// The forward sweep: checked, tagged as twins.
// CHECK:         %row = memref.subview %a[%i, 0] [1, %n] [1, 1] {ad.twin_id = [[ROW:[0-9]+]] : i64} : memref<?x?xf64>
// CHECK-NEXT:    ad.keep %row
// CHECK:           %v = memref.load %row[%{{.*}}] {ad.twin_id = [[V:[0-9]+]] : i64} : memref<?xf64, strided<[1], offset: ?>>
// CHECK:           memref.store %s, %t[%{{.*}}] {ad.twin_id = {{[0-9]+}} : i64} : memref<?xf64>
// CHECK:         memref.store %v0, %out[%c0] {ad.twin_id = [[OUT:[0-9]+]] : i64} : memref<?xf64>
// The reverse sweep: unchecked.
// CHECK:         %dt = memref.alloc(%n) : memref<?xf64>
// CHECK:           memref.store %z, %dt[%{{.*}}] {ad.own_sizes, ad.unchecked} : memref<?xf64>
// CHECK:         memref.load %dout[%c0] {ad.twin_of = [[OUT]] : i64, ad.unchecked} : memref<?xf64>
// CHECK-NEXT:    memref.store %z, %dout[%c0] {ad.twin_of = [[OUT]] : i64, ad.unchecked} : memref<?xf64>
// CHECK:             %[[DROW:.*]] = memref.subview %da[%{{.*}}, 0] [1, %n] [1, 1] {ad.twin_of = [[ROW]] : i64, ad.unchecked} : memref<?x?xf64>
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %[[DROW]][%[[J:.*]]] {ad.twin_of = [[V]] : i64, ad.unchecked} : memref<?xf64, strided<[1], offset: ?>>
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : f64
// CHECK-NEXT:        memref.store %[[NEW]], %[[DROW]][%[[J]]] {ad.twin_of = [[V]] : i64, ad.unchecked} : memref<?xf64, strided<[1], offset: ?>>
// CHECK-NOT:     memref.load %{{d.*}}[%{{.*}}] {ad.twin_of = {{[0-9]+}} : i64} :
// CHECK-NOT:     memref.store %{{.*}}, %{{d.*}}[%{{.*}}] {ad.twin_of = {{[0-9]+}} : i64} :
// CHECK:         func.return


func.func @rows(%a: memref<?x?xf64>, %out: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %m = memref.dim %a, %c0 : memref<?x?xf64>
  %n = memref.dim %a, %c1 : memref<?x?xf64>
  %t = memref.alloc(%n) : memref<?xf64>
  scf.for %j = %c0 to %n step %c1 {
    memref.store %z, %t[%j] : memref<?xf64>
  }
  scf.for %i = %c0 to %m step %c1 {
    %row = memref.subview %a[%i, 0] [1, %n] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[1], offset: ?>>
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %row[%j] : memref<?xf64, strided<[1], offset: ?>>
      %o = memref.load %t[%j] : memref<?xf64>
      %p = arith.mulf %v, %v : f64
      %s = arith.addf %o, %p : f64
      memref.store %s, %t[%j] : memref<?xf64>
    }
  }
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %t[%j] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    %s = arith.addf %acc, %w : f64
    scf.yield %s : f64
  }
  %v0 = memref.load %t[%c0] : memref<?xf64>
  memref.store %v0, %out[%c0] : memref<?xf64>
  memref.dealloc %t : memref<?xf64>
  func.return %r : f64
}

func.func @main(%a: memref<?x?xf64>, %da: memref<?x?xf64>, %o: memref<?xf64>, %do: memref<?xf64>, %seed: f64) {
  ad.autodiff @rows(%a, %da, %o, %do, %seed) {activity = [dup, dup], ret_activity = [active]} : (memref<?x?xf64>, memref<?x?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}

// A forward access whose value nothing needs (without the primal result,
// the loop over x[0..m) computes nothing the gradient uses) loses its loop,
// not its check: simplification keeps the checks of dead loads, as two
// checked loads at the first and the last index before the loop
// (`ad.twin_end` 0 and 1; transforms/dead_forward), and those stand in as the
// twin of the reverse accumulation, which is unchecked.
// CHECK-LABEL: func.func @psum_grad_dc_a(%x: memref<?xf64>, %dx: memref<?xf64>, %m: index, %seed: f64) {
// CHECK-NEXT:    ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
// CHECK:         scf.if
// CHECK:           memref.load %x[%c0] {ad.twin_id = [[X:[0-9]+]] : i64, ad.twin_end = 0 : i64} : memref<?xf64>
// CHECK-NEXT:      memref.load %x[%{{.*}}] {ad.twin_id = [[X]] : i64, ad.twin_end = 1 : i64} : memref<?xf64>
// CHECK-NEXT:      ad.keep
// CHECK:         scf.for
// CHECK:           %[[OLD:.*]] = memref.load %dx[%[[I:.*]]] {ad.twin_of = [[X]] : i64, ad.unchecked} : memref<?xf64>
// CHECK:           memref.store %{{.*}}, %dx[%[[I]]] {ad.twin_of = [[X]] : i64, ad.unchecked} : memref<?xf64>
// CHECK:         func.return
func.func @psum(%x: memref<?xf64>, %m: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %m step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %s = arith.addf %acc, %v : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

func.func @main2(%x: memref<?xf64>, %dx: memref<?xf64>, %m: index, %seed: f64) {
  ad.autodiff @psum(%x, %dx, %m, %seed) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, index, f64) -> ()
  func.return
}
