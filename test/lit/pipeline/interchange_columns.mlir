// ad-interchange-columns: a loop over columns (from 0, step 1) whose inner
// loops walk down each column of a row-major array is split at its inner
// loops into stages; each stage runs for all columns before the next, each
// inner loop with rows outside and columns inside. The scalars crossing
// stages live in arrays of one element per column; the outer loop's
// iter_args are carried by the last stage's loop. Nests that write memory,
// read the outer carried value before the last inner loop, have an inner
// loop whose bounds depend on the column, or already walk rows, stay.
// RUN: ad-opt %s -p ad-interchange-columns | filecheck %s
// RUN: ad-opt %s -p 'ad-interchange-columns{marked-only=true}' | filecheck %s --check-prefix=MARKED

// Column-wise log-sum-exp as scalar loops: max, then the sum of exponentials.
// CHECK-LABEL: func.func @lse_loops(
// CHECK:         %[[M:.*]] = memref.dim %X, %c0
// CHECK:         %[[N:.*]] = memref.dim %X, %c1
// CHECK:         %[[CNT:.*]] = arith.maxsi %[[N]], %{{.*}} : index
// CHECK-DAG:     %mx_per_column = memref.alloc(%[[CNT]]) : memref<?xf64>
// CHECK-DAG:     %[[S:.*]] = memref.alloc(%[[CNT]]) : memref<?xf64>
// The column loops run to the arrays' size max(n, 0) (the same columns): their
// accesses are in bounds by construction, and so are the gradient's repeats.
// The first row's value per column, then the rows from 1 with the columns inside:
// CHECK:         scf.for %j = %{{.*}} to %[[CNT]] step
// CHECK-NEXT:      %[[X0:.*]] = memref.load %X[%c0, %j]
// CHECK-NEXT:      memref.store %[[X0]], %mx_per_column[%j] {ad.unchecked}
// CHECK:         scf.for %i = %c1 to %[[M]] step %c1 {
// CHECK-NEXT:      scf.for %j_1 = %{{.*}} to %[[CNT]] step
// CHECK-NEXT:        %[[MX:.*]] = memref.load %mx_per_column[%j_1] {ad.unchecked}
// CHECK-NEXT:        %[[XIJ:.*]] = memref.load %X[%i, %j_1]
// CHECK-NEXT:        %[[GT:.*]] = arith.cmpf ogt, %[[XIJ]], %[[MX]]
// CHECK-NEXT:        %[[SEL:.*]] = arith.select %[[GT]], %[[XIJ]], %[[MX]]
// CHECK-NEXT:        memref.store %[[SEL]], %mx_per_column[%j_1] {ad.unchecked}
// The sum starts at 0.0 per column; its rows outside as well:
// CHECK:         memref.store %zero, %[[S]][%{{.*}}] {ad.unchecked}
// CHECK:         scf.for %i_1 = %c0 to %[[M]] step %c1 {
// CHECK-NEXT:      scf.for %j_{{.*}} = %{{.*}} to %[[CNT]] step
// CHECK-NEXT:        %[[SV:.*]] = memref.load %[[S]][%j_{{.*}}] {ad.unchecked}
// CHECK-NEXT:        %[[XIJ2:.*]] = memref.load %X[%i_1, %j_{{.*}}]
// CHECK-NEXT:        %[[MX2:.*]] = memref.load %mx_per_column[%j_{{.*}}] {ad.unchecked}
// CHECK-NEXT:        %[[D:.*]] = arith.subf %[[XIJ2]], %[[MX2]]
// CHECK-NEXT:        %[[E:.*]] = math.exp %[[D]]
// CHECK-NEXT:        %[[SN:.*]] = arith.addf %[[SV]], %[[E]]
// CHECK-NEXT:        memref.store %[[SN]], %[[S]][%j_{{.*}}] {ad.unchecked}
// The total, in column order, as the outer loop's iter_args:
// CHECK:         %[[T:.*]] = scf.for %j_{{.*}} = %{{.*}} to %[[CNT]] step %{{.*}} iter_args(%[[ACC:.*]] = %zero) -> (f64) {
// CHECK:           math.log
// CHECK:           %[[NEXT:.*]] = arith.addf %[[ACC]],
// CHECK-NEXT:      scf.yield %[[NEXT]] : f64
// CHECK:         memref.dealloc
// CHECK-NEXT:    memref.dealloc
// CHECK-NEXT:    func.return %[[T]] : f64
// MARKED-LABEL: func.func @lse_loops(
// MARKED:         scf.for %j = %c0 to %n step %c1 iter_args
// MARKED-NEXT:      memref.load %X[%c0, %j]
func.func @lse_loops(%X: memref<?x?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %X, %c0 : memref<?x?xf64>
  %n = memref.dim %X, %c1 : memref<?x?xf64>
  %total_1 = scf.for %j = %c0 to %n step %c1 iter_args(%total_2 = %zero) -> (f64) {
    %mx = memref.load %X[%c0, %j] : memref<?x?xf64>
    %mx_1 = scf.for %i = %c1 to %m step %c1 iter_args(%mx_2 = %mx) -> (f64) {
      %x = memref.load %X[%i, %j] : memref<?x?xf64>
      %gt = arith.cmpf ogt, %x, %mx_2 : f64
      %mx_3 = arith.select %gt, %x, %mx_2 : f64
      scf.yield %mx_3 : f64
    }
    %s = scf.for %i_1 = %c0 to %m step %c1 iter_args(%s_1 = %zero) -> (f64) {
      %x = memref.load %X[%i_1, %j] : memref<?x?xf64>
      %d = arith.subf %x, %mx_1 : f64
      %e = math.exp %d : f64
      %s_2 = arith.addf %s_1, %e : f64
      scf.yield %s_2 : f64
    }
    %l = math.log %s : f64
    %v = arith.addf %mx_1, %l : f64
    %total_3 = arith.addf %total_2, %v : f64
    scf.yield %total_3 : f64
  }
  func.return %total_1 : f64
}

// Through a column view (what np.max(X[:, j]) becomes): the view is made
// again in each stage, its size is the inner loop's bound.
// CHECK-LABEL: func.func @column_view(
// CHECK:         %[[CNT2:.*]] = arith.maxsi %n, %{{.*}} : index
// CHECK:         %[[CS:.*]] = memref.alloc(%[[CNT2]]) : memref<?xf64>
// CHECK:         scf.for %[[I:.*]] = %c0 to %m step %c1 {
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %[[CNT2]] step
// CHECK-NEXT:        memref.load %[[CS]][%[[J]]] {ad.unchecked}
// CHECK-NEXT:        %[[V:.*]] = memref.subview %X[%c0, %[[J]]] [%m, 1] [%c1, %c1]
// CHECK-NEXT:        memref.load %[[V]][%[[I]]]
// CHECK:         scf.for {{.*}} iter_args
func.func @column_view(%X: memref<?x?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %X, %c0 : memref<?x?xf64>
  %n = memref.dim %X, %c1 : memref<?x?xf64>
  %t = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %col = memref.subview %X[%c0, %j] [%m, 1] [%c1, %c1] : memref<?x?xf64> to memref<?xf64, strided<[?], offset: ?>>
    %len = memref.dim %col, %c0 : memref<?xf64, strided<[?], offset: ?>>
    %s = scf.for %i = %c0 to %len step %c1 iter_args(%s_1 = %zero) -> (f64) {
      %x = memref.load %col[%i] : memref<?xf64, strided<[?], offset: ?>>
      %sq = arith.mulf %x, %x : f64
      %s_2 = arith.addf %s_1, %sq : f64
      scf.yield %s_2 : f64
    }
    %r = math.sqrt %s : f64
    %acc_1 = arith.addf %acc, %r : f64
    scf.yield %acc_1 : f64
  }
  func.return %t : f64
}

// A store in the nest (out[j] = s): the stages' order could reverse a
// dependence through memory (out may alias X): stays as written.
// CHECK-LABEL: func.func @stores_per_column(
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %j = %c0 to %n step %c1 {
// CHECK-NEXT:      scf.for %i = %c0 to %m step %c1 iter_args
func.func @stores_per_column(%X: memref<?x?xf64>, %out: memref<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %X, %c0 : memref<?x?xf64>
  %n = memref.dim %X, %c1 : memref<?x?xf64>
  scf.for %j = %c0 to %n step %c1 {
    %s = scf.for %i = %c0 to %m step %c1 iter_args(%s_1 = %zero) -> (f64) {
      %x = memref.load %X[%i, %j] : memref<?x?xf64>
      %s_2 = arith.addf %s_1, %x : f64
      scf.yield %s_2 : f64
    }
    memref.store %s, %out[%j] : memref<?xf64>
  }
  func.return
}

// A dependence through memory between columns: column j reads what column
// j - 1 wrote (X[i, j] += X[i, j - 1]): stays.
// CHECK-LABEL: func.func @carried_through_memory(
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %j = %c1 to %n step %c1 {
// CHECK-NEXT:      arith.subi %j, %c1
// CHECK-NEXT:      scf.for %i = %c0 to %m step %c1 {
func.func @carried_through_memory(%X: memref<?x?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %X, %c0 : memref<?x?xf64>
  %n = memref.dim %X, %c1 : memref<?x?xf64>
  scf.for %j = %c1 to %n step %c1 {
    %jm = arith.subi %j, %c1 : index
    scf.for %i = %c0 to %m step %c1 {
      %a = memref.load %X[%i, %jm] : memref<?x?xf64>
      %b = memref.load %X[%i, %j] : memref<?x?xf64>
      %c = arith.addf %a, %b : f64
      memref.store %c, %X[%i, %j] : memref<?x?xf64>
    }
  }
  func.return
}

// The outer loop's carried value read by an inner loop (s starts at the
// running total): the stages depend on the previous column: stays.
// CHECK-LABEL: func.func @total_read_inside(
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero)
func.func @total_read_inside(%X: memref<?x?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %X, %c0 : memref<?x?xf64>
  %n = memref.dim %X, %c1 : memref<?x?xf64>
  %t = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %s = scf.for %i = %c0 to %m step %c1 iter_args(%s_1 = %acc) -> (f64) {
      %x = memref.load %X[%i, %j] : memref<?x?xf64>
      %e = math.exp %x : f64
      %s_2 = arith.addf %s_1, %e : f64
      scf.yield %s_2 : f64
    }
    %l = math.log %s : f64
    scf.yield %l : f64
  }
  func.return %t : f64
}

// Triangular: the inner loop's bound depends on the column: stays.
// CHECK-LABEL: func.func @triangular(
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %j = %c0 to %n step %c1 iter_args
// CHECK-NEXT:      scf.for %i = %c0 to %j step %c1 iter_args
func.func @triangular(%X: memref<?x?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %X, %c1 : memref<?x?xf64>
  %t = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %s = scf.for %i = %c0 to %j step %c1 iter_args(%s_1 = %zero) -> (f64) {
      %x = memref.load %X[%i, %j] : memref<?x?xf64>
      %s_2 = arith.addf %s_1, %x : f64
      scf.yield %s_2 : f64
    }
    %acc_1 = arith.addf %acc, %s : f64
    scf.yield %acc_1 : f64
  }
  func.return %t : f64
}

// Rows already: the inner loop walks X[j, i] (contiguous): nothing to gain, stays.
// CHECK-LABEL: func.func @rows(
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %j = %c0 to %m step %c1 iter_args
func.func @rows(%X: memref<?x?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %X, %c0 : memref<?x?xf64>
  %n = memref.dim %X, %c1 : memref<?x?xf64>
  %t = scf.for %j = %c0 to %m step %c1 iter_args(%acc = %zero) -> (f64) {
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%s_1 = %zero) -> (f64) {
      %x = memref.load %X[%j, %i] : memref<?x?xf64>
      %s_2 = arith.addf %s_1, %x : f64
      scf.yield %s_2 : f64
    }
    %acc_1 = arith.addf %acc, %s : f64
    scf.yield %acc_1 : f64
  }
  func.return %t : f64
}

// A division in the nest by a value the function is given: not moved
// before the loop (with no column it must not run: d may be 0), so the
// inner loop's bound depends on the loop's body: stays.
// CHECK-LABEL: func.func @division_in_the_nest(
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %j = %c0 to %n step %c1 iter_args
// CHECK-NEXT:      %rows = arith.divsi %m, %d : index
func.func @division_in_the_nest(%X: memref<?x?xf64>, %d: index) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %X, %c0 : memref<?x?xf64>
  %n = memref.dim %X, %c1 : memref<?x?xf64>
  %t = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %rows = arith.divsi %m, %d : index
    %s = scf.for %i = %c0 to %rows step %c1 iter_args(%s_1 = %zero) -> (f64) {
      %x = memref.load %X[%i, %j] : memref<?x?xf64>
      %s_2 = arith.addf %s_1, %x : f64
      scf.yield %s_2 : f64
    }
    %acc_1 = arith.addf %acc, %s : f64
    scf.yield %acc_1 : f64
  }
  func.return %t : f64
}

// A checked read that no later stage repeats (its value unused, maybe out of
// bounds: it must still raise) keeps a loop over the columns of its own, in
// its stage's place; nothing of it is stored.
// CHECK-LABEL: func.func @unused_read(
// CHECK:         scf.for %j = %{{.*}} to %[[CNT3:.*]] step
// CHECK-NEXT:      %unused = memref.load %X[%m, %j] : memref<?x?xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %j_1 = %{{.*}} to %[[CNT3]] step
// CHECK-NEXT:      memref.store %zero
// CHECK:         scf.for %i = %c0 to %m step %c1 {
func.func @unused_read(%X: memref<?x?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %X, %c0 : memref<?x?xf64>
  %n = memref.dim %X, %c1 : memref<?x?xf64>
  %t = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %unused = memref.load %X[%m, %j] : memref<?x?xf64>
    %s = scf.for %i = %c0 to %m step %c1 iter_args(%s_1 = %zero) -> (f64) {
      %x = memref.load %X[%i, %j] : memref<?x?xf64>
      %s_2 = arith.addf %s_1, %x : f64
      scf.yield %s_2 : f64
    }
    %acc_1 = arith.addf %acc, %s : f64
    scf.yield %acc_1 : f64
  }
  func.return %t : f64
}

// A stop whose operands are the same in every column (np.max's empty-column
// check on the size of X[:, j]) is raised once before the stages, only when
// the loop over columns runs at least once (n > 0), as Python raises it in
// column 0; the nest is interchanged.
// CHECK-LABEL: func.func @max_checked_empty(
// CHECK:         %[[M:.*]] = memref.dim %X, %c0
// CHECK:         %[[N:.*]] = memref.dim %X, %c1
// CHECK:         %[[RUNS:.*]] = arith.cmpi sgt, %[[N]], %{{.*}} : index
// CHECK-NEXT:    %[[EMPTY:.*]] = arith.cmpi eq, %[[M]], %c0 : index
// CHECK-NEXT:    %[[STOP:.*]] = arith.andi %[[RUNS]], %[[EMPTY]] : i1
// CHECK-NEXT:    ad.raise_if %[[STOP]] {exception = "ValueError", message = "zero-size array"}
// CHECK:         %mx_per_column = memref.alloc
// CHECK:         scf.for %i = %c1 to %[[M]] step %c1 {
// CHECK-NEXT:      scf.for %j
// CHECK-NOT:     ad.raise_if
// CHECK:         func.return
func.func @max_checked_empty(%X: memref<?x?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %X, %c0 : memref<?x?xf64>
  %n = memref.dim %X, %c1 : memref<?x?xf64>
  %t = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %col = memref.subview %X[%c0, %j] [%m, 1] [%c1, %c1] : memref<?x?xf64> to memref<?xf64, strided<[?], offset: ?>>
    %len = memref.dim %col, %c0 : memref<?xf64, strided<[?], offset: ?>>
    %empty = arith.cmpi eq, %len, %c0 : index
    ad.raise_if %empty {exception = "ValueError", message = "zero-size array"}
    %x0 = memref.load %X[%c0, %j] : memref<?x?xf64>
    %mx = scf.for %i = %c1 to %m step %c1 iter_args(%a = %x0) -> (f64) {
      %x = memref.load %X[%i, %j] : memref<?x?xf64>
      %gt = arith.cmpf ogt, %x, %a : f64
      %s = arith.select %gt, %x, %a : f64
      scf.yield %s : f64
    }
    %nt = arith.addf %acc, %mx : f64
    scf.yield %nt : f64
  }
  func.return %t : f64
}

// A stop that depends on the column stays where it is, and so does the nest.
// CHECK-LABEL: func.func @stop_per_column(
// CHECK:         scf.for %j = %c0 to %n step %c1 iter_args
// CHECK-NEXT:      %[[FIRST:.*]] = arith.cmpi eq, %j, %c0 : index
// CHECK-NEXT:      ad.raise_if %[[FIRST]]
func.func @stop_per_column(%X: memref<?x?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %X, %c0 : memref<?x?xf64>
  %n = memref.dim %X, %c1 : memref<?x?xf64>
  %t = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %first = arith.cmpi eq, %j, %c0 : index
    ad.raise_if %first {exception = "ValueError", message = "column 0"}
    %s = scf.for %i = %c0 to %m step %c1 iter_args(%a = %acc) -> (f64) {
      %x = memref.load %X[%i, %j] : memref<?x?xf64>
      %y = arith.addf %a, %x : f64
      scf.yield %y : f64
    }
    scf.yield %s : f64
  }
  func.return %t : f64
}
