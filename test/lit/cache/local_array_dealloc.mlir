// RUN: ad-opt %s --reverse --no-loop-local --no-scalar-replace --print-cache-report 2>&1 >/dev/null | filecheck %s
// RUN: ad-opt %s --reverse --no-loop-local --no-scalar-replace 2>/dev/null | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --reverse --no-loop-local --print-cache-report 2>&1 >/dev/null | filecheck %s --check-prefix=SROA
// A local buffer freed at the end of the function (docs/benchmarks.md,
// problem 2): the gradient defers the deallocations of the top block until
// after the reverse sweep, so such a dealloc cannot clobber what the reverse
// sweep reloads: the table load is reloaded, 0 bytes. A buffer allocated and
// freed in each iteration is gone before the reverse sweep: its load is taped.
// (arith.remui carries no effect trait in xDSL 0.74; it is still recomputed,
// and is not a write of unknown memory.) These run with --no-scalar-replace:
// by default ad-scalar-replace makes the per-iteration buffer (one element,
// constant index) its stored value, and nothing is taped (SROA); the table,
// read at a dynamic index, stays in memory and is reloaded as before.

// SROA-LABEL: cache report for @local_table_grad_d_a
// SROA:         reload    %w {{.*}}memref.load
// SROA:         taped bytes: 0
// SROA-LABEL: cache report for @per_iteration_buffer_grad_d_a
// SROA-NOT:     memref.load: overwritten later
// SROA:         taped bytes: 0

// CHECK-LABEL: cache report for @local_table_grad_d_a
// CHECK-DAG:     recompute %k {{.*}}arith.remui: arith.remui of values available in the reverse sweep
// CHECK-DAG:     reload    %w {{.*}}memref.load: no later write may overwrite it (alias analysis); dealloc at {{.*}}local_array_dealloc.mlir:{{[0-9]+}}:3: deferred until after the reverse sweep
// CHECK-DAG:     reload    %a {{.*}}memref.load: no later write may overwrite it (alias analysis)
// CHECK-NOT:   {{^  tape }}
// CHECK:         taped bytes: 0

// The reverse loop reloads %tab; the dealloc comes after it, before the return.
// IR-LABEL:  func.func @local_table_grad_d_a
// IR-NOT:      memref.dealloc %tab
// IR:          %w_1 = memref.load %tab[%k_1] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked} : memref<4xf64>
// IR:          memref.dealloc %tab : memref<4xf64>
// IR-NEXT:     func.return

func.func @local_table(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %tab = memref.alloc() : memref<4xf64>
  scf.for %j = %c0 to %c4 step %c1 {
    %ji = arith.index_cast %j : index to i64
    %jf = arith.sitofp %ji : i64 to f64
    %v = arith.addf %one, %jf : f64
    memref.store %v, %tab[%j] : memref<4xf64>
  }
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %k = arith.remui %i, %c4 : index
    %w = memref.load %tab[%k] : memref<4xf64>
    %a = memref.load %x[%i] : memref<?xf64>
    %wa = arith.mulf %w, %a : f64
    %p = arith.mulf %wa, %a : f64
    %s = arith.addf %acc, %p : f64
    scf.yield %s : f64
  }
  memref.dealloc %tab : memref<4xf64>
  func.return %r : f64
}

// CHECK-LABEL: cache report for @per_iteration_buffer_grad_d_a
// CHECK:         tape      %b {{.*}}f64 x dim(x, 0) {{.*}}memref.load: overwritten later: dealloc at {{.*}}local_array_dealloc.mlir:{{[0-9]+}}:5 (later in the same iteration): writes all of %tmp
// CHECK-NOT:   {{^  tape }}
// CHECK:         taped bytes: 8*(dim(x, 0))

// The dealloc stays in the forward loop: the buffer is gone in the reverse sweep.
// IR-LABEL:  func.func @per_iteration_buffer_grad_d_a
// IR:          %tmp = memref.alloc() : memref<1xf64>
// IR:          memref.dealloc %tmp : memref<1xf64>
// IR-NEXT:     arith.addf
// IR-NEXT:     scf.yield
// IR-NOT:      memref.load %tmp
// IR:          func.return

func.func @per_iteration_buffer(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %tmp = memref.alloc() : memref<1xf64>
    %a = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %a, %a : f64
    memref.store %sq, %tmp[%c0] : memref<1xf64>
    %b = memref.load %tmp[%c0] : memref<1xf64>
    %p = arith.mulf %b, %a : f64
    memref.dealloc %tmp : memref<1xf64>
    %s = arith.addf %acc, %p : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %s: f64) {
  ad.autodiff @local_table(%x, %dx, %s) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @per_iteration_buffer(%x, %dx, %s) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}
