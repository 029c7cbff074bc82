// RUN: ad-opt %s -p ad-parallelize | filecheck %s
// RUN: ad-opt %s --emit=llvm-ir --opt --no-boundscheck | filecheck %s --check-prefix=LLVM
// The outlined body of a parallel loop gets ad.noalias on each captured
// memref whose memory object no other captured memref reaches and which is
// a noalias argument or an allocation of the function (docs/parallel.md,
// "What runs in parallel"): LLVM then vectorises the chunk's loop with no
// run-time overlap check (no diff.check block, alias scopes on the vector
// accesses).

// A noalias argument and a local allocation: both noalias in the body.
// CHECK-LABEL: func.func @scale_local
// CHECK:       func.func private @scale_local.par0(%lo: index, %hi: index, %step: index, %x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
// LLVM-LABEL:  define internal {{.*}}@u.scale_local.par0.worker(
// LLVM-NOT:    diff.check
// LLVM:        load <{{[0-9]+}} x double>, {{.*}}!alias.scope
// LLVM-NOT:    diff.check
// LLVM:        ret ptr
func.func @scale_local(%x: memref<?xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %y = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %b = arith.mulf %two, %a : f64
    memref.store %b, %y[%i] : memref<?xf64>
  } {ad.parallel = "prange"}
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %b = memref.load %y[%i] : memref<?xf64>
    %acc2 = arith.addf %acc, %b : f64
    scf.yield %acc2 : f64
  }
  memref.dealloc %y : memref<?xf64>
  func.return %s : f64
}

// An argument without ad.noalias is not marked; the others still are.
// CHECK-LABEL: func.func @one_may_alias
// CHECK:       func.func private @one_may_alias.par0(%lo: index, %hi: index, %step: index, %x: memref<?xf64>, %y: memref<?xf64> {ad.noalias}) {
func.func @one_may_alias(%x: memref<?xf64>, %out: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %y = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %b = arith.mulf %a, %a : f64
    memref.store %b, %y[%i] : memref<?xf64>
  } {ad.parallel = "prange"}
  memref.copy %y, %out : memref<?xf64> to memref<?xf64>
  memref.dealloc %y : memref<?xf64>
  func.return
}

// Two captured views of one argument (the matrix and its first row): both
// reach X, so neither is noalias; the output is.
// CHECK-LABEL: func.func @two_views
// CHECK:       func.func private @two_views.par0(%lo: index, %hi: index, %step: index, %m: index, %X: memref<?x?xf64>, %row: memref<?xf64, strided<[1], offset: ?>>, %out: memref<?x?xf64> {ad.noalias}) {
func.func @two_views(%X: memref<?x?xf64> {ad.noalias}, %out: memref<?x?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %X, %c0 : memref<?x?xf64>
  %m = memref.dim %X, %c1 : memref<?x?xf64>
  %row = memref.subview %X[0, 0] [1, %m] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[1], offset: ?>>
  scf.for %i = %c1 to %n step %c1 {
    scf.for %j = %c0 to %m step %c1 {
      %a = memref.load %X[%i, %j] : memref<?x?xf64>
      %b = memref.load %row[%j] : memref<?xf64, strided<[1], offset: ?>>
      %p = arith.mulf %a, %b : f64
      memref.store %p, %out[%i, %j] : memref<?x?xf64>
    }
  } {ad.parallel = "prange"}
  func.return
}
