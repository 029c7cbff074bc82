// RUN: ad-opt %s -p ad-parallelize | filecheck %s
// ad-parallelize on sums that flow through ifs and inner loops, rows of a
// matrix, stack buffers of each iteration, and what stays serial
// (docs/parallel.md, "What runs in parallel").

// `if c: s += e`: the sum flows through both branches (one unchanged):
// outlined, kinds "s".
// CHECK-LABEL: func.func @conditional_sum
// CHECK:         "ad.parallel_for"{{.*}}kinds = "s"
// CHECK:       func.func private @conditional_sum.par0
func.func @conditional_sum(%x: memref<?xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %c = arith.cmpf ogt, %a, %zero : f64
    %s2 = scf.if %c -> (f64) {
      %sq = arith.mulf %a, %a : f64
      %t = arith.addf %s, %sq : f64
      scf.yield %t : f64
    } else {
      scf.yield %s : f64
    }
    scf.yield %s2 : f64
  } {ad.parallel = "prange"}
  func.return %r : f64
}

// `s += e` inside a serial inner loop: the inner loop carries the outer
// sum as a sum; outlined, kinds "s", the inner loop inside the chunk.
// CHECK-LABEL: func.func @inner_loop_sum
// CHECK:         "ad.parallel_for"{{.*}}kinds = "s"
// CHECK:       func.func private @inner_loop_sum.par0
// CHECK:         scf.for %i = %lo to %hi step %step iter_args(%s = %{{.*}}) -> (f64) {
// CHECK-NEXT:      %inner = scf.for %j = %c0 to %m step %c1 iter_args(%t = %s) -> (f64) {
func.func @inner_loop_sum(%X: memref<?x?xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %X, %c0 : memref<?x?xf64>
  %m = memref.dim %X, %c1 : memref<?x?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (f64) {
    %inner = scf.for %j = %c0 to %m step %c1 iter_args(%t = %s) -> (f64) {
      %a = memref.load %X[%i, %j] : memref<?x?xf64>
      %t2 = arith.subf %t, %a : f64
      scf.yield %t2 : f64
    }
    scf.yield %inner : f64
  } {ad.parallel = "prange"}
  func.return %r : f64
}

// The adjoint of a sum kept through an inner loop that yields it
// unchanged (the reverse of the loop above): kinds "k".
// CHECK-LABEL: func.func @kept_through_inner_loop
// CHECK:         "ad.parallel_for"{{.*}}kinds = "k"
func.func @kept_through_inner_loop(%dX: memref<?x?xf64> {ad.noalias}, %g: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %dX, %c0 : memref<?x?xf64>
  %m = memref.dim %dX, %c1 : memref<?x?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%adj = %g) -> (f64) {
    %inner = scf.for %j = %c0 to %m step %c1 iter_args(%a = %adj) -> (f64) {
      %neg = arith.negf %a : f64
      memref.store %neg, %dX[%i, %j] : memref<?x?xf64>
      scf.yield %a : f64
    }
    scf.yield %inner : f64
  } {ad.parallel = "auto"}
  func.return %r : f64
}

// A partial sum read by the body (y[i] = s): each iteration needs the
// one before. Serial, unmarked.
// CHECK-LABEL: func.func @partial_sum_read
// CHECK-NOT:     ad.parallel
// CHECK:         func.return
func.func @partial_sum_read(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %s2 = arith.addf %s, %a : f64
    memref.store %s2, %y[%i] : memref<?xf64>
    scf.yield %s2 : f64
  } {ad.parallel = "auto"}
  func.return %r : f64
}

// A branch that resets the sum: not a sum. Serial.
// CHECK-LABEL: func.func @conditional_reset
// CHECK-NOT:     ad.parallel
// CHECK:         func.return
func.func @conditional_reset(%x: memref<?xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %c = arith.cmpf ogt, %a, %zero : f64
    %s2 = scf.if %c -> (f64) {
      scf.yield %zero : f64
    } else {
      %t = arith.addf %s, %a : f64
      scf.yield %t : f64
    }
    scf.yield %s2 : f64
  } {ad.parallel = "auto"}
  func.return %r : f64
}

// Row sums: np.sum's 0-d result is an alloca of each iteration, a
// buffer of each thread's own frame once outlined. Outlined.
// CHECK-LABEL: func.func @row_sums
// CHECK:         "ad.parallel_for"
// CHECK:       func.func private @row_sums.par0
// CHECK:         scf.for %i = %lo to %hi
// CHECK:           %acc = memref.alloca() : memref<f64>
func.func @row_sums(%X: memref<?x?xf64> {ad.noalias}, %out: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %X, %c0 : memref<?x?xf64>
  %m = memref.dim %X, %c1 : memref<?x?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %row = memref.subview %X[%i, 0] [1, %m] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[1], offset: ?>>
    %acc = memref.alloca() : memref<f64>
    linalg.fill ins(%zero : f64) outs(%acc : memref<f64>)
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%row : memref<?xf64, strided<[1], offset: ?>>) outs(%acc : memref<f64>) {
    ^bb0(%a: f64, %b: f64):
      %c = arith.addf %b, %a : f64
      linalg.yield %c : f64
    }
    %v = memref.load %acc[] : memref<f64>
    memref.store %v, %out[%i] : memref<?xf64>
  } {ad.parallel = "prange"}
  func.return
}

// X[i, :] = 2 * X[i, :] (a row read and written by its own iteration):
// the generic reads that row only. Outlined.
// CHECK-LABEL: func.func @row_in_place
// CHECK:         "ad.parallel_for"
func.func @row_in_place(%X: memref<?x?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %n = memref.dim %X, %c0 : memref<?x?xf64>
  %m = memref.dim %X, %c1 : memref<?x?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %row = memref.subview %X[%i, 0] [1, %m] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%row : memref<?xf64, strided<[1], offset: ?>>) outs(%row : memref<?xf64, strided<[1], offset: ?>>) {
    ^bb0(%a: f64, %b: f64):
      %c = arith.mulf %two, %a : f64
      linalg.yield %c : f64
    }
  } {ad.parallel = "prange"}
  func.return
}

// X[i, :] = 2 * X[i + 1, :]: iteration i reads the row iteration i + 1
// writes. Serial.
// CHECK-LABEL: func.func @next_row
// CHECK-NOT:     ad.parallel
// CHECK:         func.return
func.func @next_row(%X: memref<?x?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %n = memref.dim %X, %c0 : memref<?x?xf64>
  %m = memref.dim %X, %c1 : memref<?x?xf64>
  %last = arith.subi %n, %c1 : index
  scf.for %i = %c0 to %last step %c1 {
    %k = arith.addi %i, %c1 : index
    %next = memref.subview %X[%k, 0] [1, %m] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[1], offset: ?>>
    %row = memref.subview %X[%i, 0] [1, %m] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%next : memref<?xf64, strided<[1], offset: ?>>) outs(%row : memref<?xf64, strided<[1], offset: ?>>) {
    ^bb0(%a: f64, %b: f64):
      %c = arith.mulf %two, %a : f64
      linalg.yield %c : f64
    }
  } {ad.parallel = "auto"}
  func.return
}

// A tape made before the loop: its iterations push in one order. Serial.
// CHECK-LABEL: func.func @shared_tape
// CHECK-NOT:     ad.parallel
// CHECK:         func.return
func.func @shared_tape(%x: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %tape = ad.tape.create : !ad.tape<f64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    ad.tape.push %a, %tape : f64, !ad.tape<f64>
  } {ad.parallel = "auto"}
  func.return
}
