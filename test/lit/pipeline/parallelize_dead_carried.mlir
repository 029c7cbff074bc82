// RUN: ad-opt %s -p ad-parallelize | filecheck %s
// ad-parallelize drops the loop-carried values nothing reads before it
// outlines a loop (transforms/dead_carried.py): a gradient's forward loop
// still sums the primal it does not return, and once outlined LLVM cannot
// see that the caller ignores each chunk's partial sum.

// The sum's result is unused: the chunk carries and returns nothing, the
// ops that only computed the sum are gone, the store stays.
// CHECK-LABEL: func.func @dead_sum
// CHECK:         "ad.parallel_for"(%c0, %n, %c1, %x, %y) <{callee = @dead_sum.par0, kinds = "", {{.*}}}> : (index, index, index, memref<?xf64>, memref<?xf64>) -> ()
// CHECK-NEXT:    func.return
// CHECK:       func.func private @dead_sum.par0(%lo: index, %hi: index, %step: index, %x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
// CHECK-NEXT:    scf.for %i = %lo to %hi step %step {
// CHECK-NEXT:      %a = memref.load %x[%i] : memref<?xf64>
// CHECK-NEXT:      %twice = arith.addf %a, %a : f64
// CHECK-NEXT:      memref.store %twice, %y[%i] : memref<?xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @dead_sum(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %twice = arith.addf %a, %a : f64
    memref.store %twice, %y[%i] : memref<?xf64>
    %sq = arith.mulf %a, %a : f64
    %s2 = arith.addf %s, %sq : f64
    scf.yield %s2 : f64
  } {ad.parallel = "prange"}
  func.return
}

// A bounds-checked load that only fed the dead sum keeps its check: the
// load stays (x[i + 1] past the end raises IndexError as before), the add
// goes.
// CHECK-LABEL: func.func private @dead_sum_checked_load.par0
// CHECK:         scf.for %i = %lo to %hi step %step {
// CHECK:           %next = memref.load %x[%ip] : memref<?xf64>
// CHECK-NOT:       arith.addf
// CHECK:           memref.store
// CHECK-NEXT:    }
func.func @dead_sum_checked_load(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %y, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (f64) {
    %ip = arith.addi %i, %c1 : index
    %next = memref.load %x[%ip] : memref<?xf64>
    %s2 = arith.addf %s, %next : f64
    %a = memref.load %x[%i] : memref<?xf64>
    memref.store %a, %y[%i] : memref<?xf64>
    scf.yield %s2 : f64
  } {ad.parallel = "prange"}
  func.return
}

// One dead sum, one returned: only the dead one goes.
// CHECK-LABEL: func.func @dead_and_live
// CHECK:         %{{.*}} = "ad.parallel_for"({{.*}}) <{callee = @dead_and_live.par0, kinds = "s", {{.*}}}> : ({{.*}}, f64) -> f64
// CHECK:       func.func private @dead_and_live.par0({{.*}}) -> f64 {
// CHECK:         scf.for %i = %lo to %hi step %step iter_args(%t = %{{.*}}) -> (f64) {
// CHECK-NOT:       arith.mulf
// CHECK:           %t2 = arith.addf %t, %a : f64
// CHECK-NEXT:      scf.yield %t2 : f64
func.func @dead_and_live(%x: memref<?xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero, %t = %zero) -> (f64, f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %a, %a : f64
    %s2 = arith.addf %s, %sq : f64
    %t2 = arith.addf %t, %a : f64
    scf.yield %s2, %t2 : f64, f64
  } {ad.parallel = "prange"}
  func.return %r#1 : f64
}

// A dead sum that flows through an if (`if c: s += e`) goes with the if.
// CHECK-LABEL: func.func private @dead_sum_through_if.par0
// CHECK:         scf.for %i = %lo to %hi step %step {
// CHECK-NEXT:      %a = memref.load %x[%i] : memref<?xf64>
// CHECK-NEXT:      memref.store %a, %y[%i] : memref<?xf64>
// CHECK-NEXT:    }
func.func @dead_sum_through_if(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    memref.store %a, %y[%i] : memref<?xf64>
    %c = arith.cmpf ogt, %a, %zero : f64
    %s2 = scf.if %c -> (f64) {
      %t = arith.addf %s, %a : f64
      scf.yield %t : f64
    } else {
      scf.yield %s : f64
    }
    scf.yield %s2 : f64
  } {ad.parallel = "prange"}
  func.return
}

// The same with a bounds-checked load inside the if: the if may stop the
// call (x[i + 1] past the end), so it stays, and the sum with it.
// CHECK-LABEL: func.func @checked_load_in_if
// CHECK:         "ad.parallel_for"{{.*}}kinds = "s"
// CHECK:       func.func private @checked_load_in_if.par0
// CHECK:           scf.if
// CHECK:             memref.load %x[%ip]
func.func @checked_load_in_if(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %y, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    memref.store %a, %y[%i] : memref<?xf64>
    %c = arith.cmpf ogt, %a, %zero : f64
    %s2 = scf.if %c -> (f64) {
      %ip = arith.addi %i, %c1 : index
      %b = memref.load %x[%ip] : memref<?xf64>
      %t = arith.addf %s, %b : f64
      scf.yield %t : f64
    } else {
      scf.yield %s : f64
    }
    scf.yield %s2 : f64
  } {ad.parallel = "prange"}
  func.return
}

// A dead sum carried through an inner loop goes with the inner loop.
// CHECK-LABEL: func.func private @dead_sum_inner_loop.par0
// CHECK:         scf.for %i = %lo to %hi step %step {
// CHECK-NEXT:      %d = memref.load %X[%i, %c0] : memref<?x?xf64>
// CHECK-NEXT:      memref.store %d, %y[%i] : memref<?xf64>
// CHECK-NEXT:    }
func.func @dead_sum_inner_loop(%X: memref<?x?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %y, %c0 : memref<?xf64>
  %m = arith.constant 4 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (f64) {
    %d = memref.load %X[%i, %c0] : memref<?x?xf64>
    memref.store %d, %y[%i] : memref<?xf64>
    %inner = scf.for %j = %c0 to %m step %c1 iter_args(%t = %s) -> (f64) {
      %t2 = arith.addf %t, %d : f64
      scf.yield %t2 : f64
    }
    scf.yield %inner : f64
  } {ad.parallel = "prange"}
  func.return
}
