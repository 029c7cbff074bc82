// REQUIRES: libmvec
// RUN: ad-opt %s --emit=llvm-ir --opt | filecheck %s
// RUN: ad-opt %s --emit=llvm-ir | filecheck %s --check-prefix=BEFORE
// The LLVM lowering compiles a loop over columns whose inner loops walk
// down each column as passes over rows (`with_rows_outside`,
// adpasses/transforms/interchange_columns.py: ad-scalar-replace, then
// ad-interchange-columns, on the functions that have such a nest): the
// inner loops read rows, so LLVM vectorises them (bounds checks included),
// exp and log through libmvec. The per-column arrays are workspaces (no
// allocation per call). A nest that writes memory per column stays as
// written.

// BEFORE-LABEL: define {{.*}}@"u.lse_loops"
// BEFORE: call void @"adpasses_workspace_take"
// CHECK-LABEL: define {{.*}}@u.lse_loops
// CHECK: fcmp ogt <[[N:[0-9]+]] x double>
// CHECK: call <[[N]] x double> @_ZGV{{[bde]}}N[[N]]v_exp(
// CHECK: call <[[N]] x double> @_ZGV{{[bde]}}N[[N]]v_log(
func.func @lse_loops(%X: memref<?x?xf64> {ad.noalias}) -> f64 {
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

// np.max(X[:, j]) as the frontend writes it: a column view and a 0-d
// accumulator, which ad-scalar-replace makes a carried value first.
// CHECK-LABEL: define {{.*}}@u.column_max
// CHECK: fcmp ogt <{{[0-9]+}} x double>
func.func @column_max(%X: memref<?x?xf64> {ad.noalias}) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %X, %c0 : memref<?x?xf64>
  %n = memref.dim %X, %c1 : memref<?x?xf64>
  %t = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %col = memref.subview %X[%c0, %j] [%m, 1] [%c1, %c1] : memref<?x?xf64> to memref<?xf64, strided<[?], offset: ?>>
    %len = memref.dim %col, %c0 : memref<?xf64, strided<[?], offset: ?>>
    %cell = memref.alloca() : memref<f64>
    %first = memref.load %col[%c0] : memref<?xf64, strided<[?], offset: ?>>
    memref.store %first, %cell[] : memref<f64>
    scf.for %i = %c1 to %len step %c1 {
      %x = memref.load %col[%i] : memref<?xf64, strided<[?], offset: ?>>
      %old = memref.load %cell[] : memref<f64>
      %gt = arith.cmpf ogt, %x, %old : f64
      %new = arith.select %gt, %x, %old : f64
      memref.store %new, %cell[] : memref<f64>
    }
    %mx = memref.load %cell[] : memref<f64>
    %acc_1 = arith.addf %acc, %mx : f64
    scf.yield %acc_1 : f64
  }
  func.return %t : f64
}

// A store per column: stays as written (no per-column array). (LLVM may
// still vectorise it across columns when `out` is noalias: not our doing.)
// BEFORE-LABEL: define {{.*}}@"u.stores_per_column"
// BEFORE-NOT: adpasses_workspace_take
// BEFORE: ret void
func.func @stores_per_column(%X: memref<?x?xf64> {ad.noalias}, %out: memref<?xf64> {ad.noalias}) {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %X, %c0 : memref<?x?xf64>
  %n = memref.dim %X, %c1 : memref<?x?xf64>
  scf.for %j = %c0 to %n step %c1 {
    %s = scf.for %i = %c0 to %m step %c1 iter_args(%s_1 = %zero) -> (f64) {
      %x = memref.load %X[%i, %j] : memref<?x?xf64>
      %e = math.exp %x : f64
      %s_2 = arith.addf %s_1, %e : f64
      scf.yield %s_2 : f64
    }
    memref.store %s, %out[%j] : memref<?xf64>
  }
  func.return
}
