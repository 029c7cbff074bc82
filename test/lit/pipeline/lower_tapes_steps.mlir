// ad-lower-tapes on a tape pushed by a loop marked parallel whose step is
// not 1 (prange(1, n, 3)): forward iteration i is the (i - lb) / step-th,
// and that is its row of the fixed layout (tape_layout.py); the reverse
// loop counts 0 .. T as always and reads row T - 1 - r. An inner loop by 2
// around the pushes gives rows of ceil((ub - lb) / 2) slots. ad-parallelize
// then proves both loops of each pair parallel: the alias analysis knows
// that (i - lb) / step is k more k iterations later.
// RUN: ad-opt %s -p ad-lower-tapes | filecheck %s
// RUN: ad-opt %s -p ad-lower-tapes,ad-parallelize | filecheck %s --check-prefix=PAR

// CHECK-LABEL: func.func @by_three(
// CHECK:         %t = memref.alloc(%{{.*}}) {ad.tape_layout = 1 : index, ad.workspace} : memref<?x1xf64>
// CHECK-NOT:     memref<1xindex>
// CHECK:         scf.for %i = %c1 to %len step %c3 {
// CHECK-NEXT:      %[[OFF:.*]] = arith.subi %i, %c1 : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.divui %[[OFF]], %c3 : index
// CHECK:           memref.store %e, %t[%[[ROW]], %{{.*}}] {ad.unchecked} : memref<?x1xf64>
// CHECK:         } {ad.parallel = "prange"}
// CHECK:         scf.for %r = %c0 to %trips step %c1 {
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[LAST:.*]] = arith.subi %trips, %[[ONE]] : index
// CHECK-NEXT:      %[[BACK:.*]] = arith.subi %[[LAST]], %r : index
// CHECK:           %e2 = memref.load %t[%[[BACK]], %{{.*}}] {ad.unchecked} : memref<?x1xf64>
// CHECK:         } {ad.parallel = "prange"}

// PAR-LABEL: func.func @by_three(
// PAR-NOT:     scf.for
// PAR:         "ad.parallel_for"
// PAR-NOT:     scf.for
// PAR:         "ad.parallel_for"
// PAR-NOT:     scf.for
// PAR:         func.return
func.func @by_three(%x: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %len = memref.dim %x, %c0 : memref<?xf64>
  %span = arith.subi %len, %c1 : index
  %trips = arith.ceildivsi %span, %c3 : index
  %t = ad.tape.create %trips : !ad.tape<f64>
  scf.for %i = %c1 to %len step %c3 {
    %a = memref.load %x[%i] : memref<?xf64>
    %e = math.exp %a : f64
    ad.tape.push %e, %t : f64, !ad.tape<f64>
    %l = math.log1p %e : f64
    memref.store %l, %x[%i] : memref<?xf64>
    scf.yield
  } {ad.parallel = "prange"}
  scf.for %r = %c0 to %trips step %c1 {
    %e2 = ad.tape.pop %t : !ad.tape<f64> -> f64
    %last = arith.subi %trips, %c1 : index
    %back = arith.subi %last, %r : index
    %off = arith.muli %back, %c3 : index
    %i2 = arith.addi %off, %c1 : index
    %d = memref.load %dx[%i2] : memref<?xf64>
    %q = arith.mulf %d, %e2 : f64
    memref.store %q, %dx[%i2] : memref<?xf64>
    scf.yield
  } {ad.parallel = "prange"}
  ad.tape.free %t : !ad.tape<f64>
  func.return
}

// An inner loop by 2 (j = 1, 3, ... < m) around the push: (rows, ceil((m - 1) / 2), 1).
// CHECK-LABEL: func.func @inner_by_two(
// CHECK:         %[[SPAN:.*]] = arith.subi %m, %c1 : index
// CHECK-NEXT:    %[[POS:.*]] = arith.maxsi %[[SPAN]], %{{.*}} : index
// CHECK-NEXT:    %[[TRIP:.*]] = arith.ceildivsi %[[POS]], %c2 : index
// CHECK:         %t = memref.alloc(%{{.*}}, %[[TRIP]]) {ad.tape_layout = 1 : index, ad.workspace} : memref<?x?x1xf64>
// CHECK:         scf.for %i = %c0 to %n step %c1 {
// CHECK:           scf.for %j = %c1 to %m step %c2 {
// CHECK-NEXT:        %[[OFF:.*]] = arith.subi %j, %c1 : index
// CHECK-NEXT:        %[[COL:.*]] = arith.divui %[[OFF]], %c2 : index
// CHECK:             memref.store %v, %t[%i, %[[COL]], %{{.*}}] {ad.unchecked} : memref<?x?x1xf64>

// PAR-LABEL: func.func @inner_by_two(
// PAR-NOT:     scf.for %i
// PAR:         "ad.parallel_for"
// PAR-NOT:     scf.for %r
// PAR:         "ad.parallel_for"
// PAR:         func.return
func.func @inner_by_two(%X: memref<?x?xf64> {ad.noalias}, %dX: memref<?x?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %X, %c0 : memref<?x?xf64>
  %m = memref.dim %X, %c1 : memref<?x?xf64>
  %cap = arith.muli %n, %m : index
  %t = ad.tape.create %cap : !ad.tape<f64>
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c1 to %m step %c2 {
      %v = memref.load %X[%i, %j] : memref<?x?xf64>
      ad.tape.push %v, %t : f64, !ad.tape<f64>
      %w = arith.mulf %v, %v : f64
      memref.store %w, %X[%i, %j] : memref<?x?xf64>
      scf.yield
    }
    scf.yield
  } {ad.parallel = "prange"}
  %mj = arith.subi %m, %c1 : index
  %mt = arith.ceildivsi %mj, %c2 : index
  scf.for %r = %c0 to %n step %c1 {
    %lastr = arith.subi %n, %c1 : index
    %i2 = arith.subi %lastr, %r : index
    scf.for %r1 = %c0 to %mt step %c1 {
      %v2 = ad.tape.pop %t : !ad.tape<f64> -> f64
      %lastj = arith.subi %mt, %c1 : index
      %q = arith.subi %lastj, %r1 : index
      %q2 = arith.muli %q, %c2 : index
      %j2 = arith.addi %q2, %c1 : index
      %d = memref.load %dX[%i2, %j2] : memref<?x?xf64>
      %g = arith.mulf %d, %v2 : f64
      %g2 = arith.addf %g, %g : f64
      memref.store %g2, %dX[%i2, %j2] : memref<?x?xf64>
      scf.yield
    }
    scf.yield
  } {ad.parallel = "prange"}
  ad.tape.free %t : !ad.tape<f64>
  func.return
}
