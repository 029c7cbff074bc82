// ad-lower-tapes on a tape pushed by a loop marked parallel (prange,
// jit(parallel=True)) and popped by its reverse loop, marked too: when each
// iteration pushes a fixed number k of values (here 2), the tape is a
// (capacity / k, k) buffer with no counter: forward iteration i stores its
// j-th push at [i - lb, j], reverse iteration r loads its p-th pop from
// [ub - 1 - r, k - 1 - p] (adpasses/transforms/tape_layout.py). Then
// ad-parallelize proves both loops parallel. Pushes in an inner counted loop
// whose bounds are known before the tape is made: a (rows, m, k) buffer;
// pushes in a branch: a slot per iteration (the inputs stand for gradients,
// whose reverse takes the branch its forward took). A tape pushed in both branches of
// the loop keeps its counter, marked with the reason (ad.tape_stack), and
// both loops stay serial.
// RUN: ad-opt %s -p ad-lower-tapes | filecheck %s
// RUN: ad-opt %s -p ad-lower-tapes,ad-parallelize | filecheck %s --check-prefix=PAR

// CHECK-LABEL: func.func @fixed(
// CHECK:         %[[ROWS:.*]] = arith.divui %cap, %[[K:.*]] : index
// CHECK:         %t = memref.alloc(%[[ROWS]]) {ad.tape_layout = 2 : index, ad.workspace} : memref<?x2xf64>
// CHECK-NOT:     memref<1xindex>
// CHECK:         scf.for %i = %c1 to %n1 step %c1 {
// CHECK-NEXT:      %[[ROW:.*]] = arith.subi %i, %c1 : index
// CHECK:           %[[J0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      memref.store %a, %t[%[[ROW]], %[[J0]]] {ad.unchecked} : memref<?x2xf64>
// CHECK:           %[[J1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      memref.store %e, %t[%[[ROW]], %[[J1]]] {ad.unchecked} : memref<?x2xf64>
// CHECK:         } {ad.parallel = "prange"}
// CHECK:         scf.for %r = %c0 to %n step %c1 {
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[LAST:.*]] = arith.subi %n, %[[ONE]] : index
// CHECK-NEXT:      %[[BACK:.*]] = arith.subi %[[LAST]], %r : index
// CHECK:           %[[P0:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %e2 = memref.load %t[%[[BACK]], %[[P0]]] {ad.unchecked} : memref<?x2xf64>
// CHECK-NEXT:      %[[P1:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %a2 = memref.load %t[%[[BACK]], %[[P1]]] {ad.unchecked} : memref<?x2xf64>
// CHECK:         } {ad.parallel = "prange"}
// CHECK:         memref.dealloc %t {ad.workspace} : memref<?x2xf64>

// PAR-LABEL: func.func @fixed(
// PAR-NOT:     scf.for
// PAR:         "ad.parallel_for"
// PAR-NOT:     scf.for
// PAR:         "ad.parallel_for"
// PAR-NOT:     scf.for
// PAR:         func.return
func.func @fixed(%x: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %len = memref.dim %x, %c0 : memref<?xf64>
  %n = arith.subi %len, %c1 : index
  %cap = arith.muli %n, %c2 : index
  %t = ad.tape.create %cap : !ad.tape<f64>
  %n1 = arith.addi %n, %c1 : index
  scf.for %i = %c1 to %n1 step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    ad.tape.push %a, %t : f64, !ad.tape<f64>
    %e = math.exp %a : f64
    ad.tape.push %e, %t : f64, !ad.tape<f64>
    %l = math.log %e : f64
    memref.store %l, %x[%i] : memref<?xf64>
    scf.yield
  } {ad.parallel = "prange"}
  scf.for %r = %c0 to %n step %c1 {
    %e2 = ad.tape.pop %t : !ad.tape<f64> -> f64
    %a2 = ad.tape.pop %t : !ad.tape<f64> -> f64
    %last = arith.subi %n, %c1 : index
    %back = arith.subi %last, %r : index
    %i2 = arith.addi %back, %c1 : index
    %d = memref.load %dx[%i2] : memref<?xf64>
    %p = arith.mulf %e2, %a2 : f64
    %q = arith.mulf %d, %p : f64
    memref.store %q, %dx[%i2] : memref<?xf64>
    scf.yield
  } {ad.parallel = "prange"}
  ad.tape.free %t : !ad.tape<f64>
  func.return
}

// Pushed in a branch (at most once per iteration; the reverse pops in the
// same branch of the same iteration): a slot per iteration, written and read
// only when the branch runs.
// CHECK-LABEL: func.func @branch(
// CHECK:         %t = memref.alloc(%{{.*}}) {ad.tape_layout = 1 : index, ad.workspace} : memref<?x1xf64>
// CHECK:         scf.if %c {
// CHECK-NEXT:      %[[J:.*]] = arith.constant 0 : index
// CHECK-NEXT:      memref.store %a, %t[%i, %[[J]]] {ad.unchecked} : memref<?x1xf64>
// CHECK:         scf.if %c2 {
// CHECK-NEXT:      %[[P:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %a2 = memref.load %t[%{{.*}}, %[[P]]] {ad.unchecked} : memref<?x1xf64>
// PAR-LABEL: func.func @branch(
// PAR-NOT:     scf.for
// PAR:         "ad.parallel_for"
// PAR-NOT:     scf.for
// PAR:         "ad.parallel_for"
// PAR:         func.return
func.func @branch(%x: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %t = ad.tape.create %n : !ad.tape<f64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %c = arith.cmpf ogt, %a, %zero : f64
    scf.if %c {
      ad.tape.push %a, %t : f64, !ad.tape<f64>
      %e = math.exp %a : f64
      memref.store %e, %x[%i] : memref<?xf64>
    }
    scf.yield
  } {ad.parallel = "prange"}
  scf.for %r = %c0 to %n step %c1 {
    %last = arith.subi %n, %c1 : index
    %i2 = arith.subi %last, %r : index
    %d = memref.load %dx[%i2] : memref<?xf64>
    %c2 = arith.cmpf ogt, %d, %zero : f64
    scf.if %c2 {
      %a2 = ad.tape.pop %t : !ad.tape<f64> -> f64
      %q = arith.mulf %d, %a2 : f64
      memref.store %q, %dx[%i2] : memref<?xf64>
    }
    scf.yield
  } {ad.parallel = "prange"}
  ad.tape.free %t : !ad.tape<f64>
  func.return
}

// Pushed in an inner loop whose trip count (X.shape[1], evaluated in the
// parallel loop's body) is known before the parallel loop starts: one
// (rows, m, k) buffer, its m computed again before the tape is made.
// CHECK-LABEL: func.func @inner(
// CHECK:         %cap = arith.muli %n, %m0 : index
// CHECK:         %[[M0:.*]] = memref.dim %X, %c1 : memref<?x?xf64>
// CHECK-NEXT:    %[[SPAN:.*]] = arith.subi %[[M0]], %c0 : index
// CHECK-NEXT:    %[[M:.*]] = arith.maxsi %[[SPAN]], %{{.*}} : index
// CHECK:         %[[PER:.*]] = arith.muli %{{.*}}, %[[M]] : index
// CHECK:         %t = memref.alloc(%{{.*}}, %[[M]]) {ad.tape_layout = 1 : index, ad.workspace} : memref<?x?x1xf64>
// CHECK:         scf.for %i = %c0 to %n step %c1 {
// CHECK:           scf.for %j = %c0 to %{{.*}} step %c1 {
// CHECK:             memref.store %a, %t[%i, %j, %{{.*}}] {ad.unchecked} : memref<?x?x1xf64>
// CHECK:         scf.for %r = %c0 to %n step %c1 {
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[LAST:.*]] = arith.subi %n, %[[ONE]] : index
// CHECK-NEXT:      %[[BACK:.*]] = arith.subi %[[LAST]], %r : index
// CHECK:           scf.for %r1 = %c0 to %m2 step %c1 {
// CHECK-NEXT:        %[[ONE1:.*]] = arith.constant 1 : index
// CHECK-NEXT:        %[[LAST1:.*]] = arith.subi %m2, %[[ONE1]] : index
// CHECK-NEXT:        %[[BACK1:.*]] = arith.subi %[[LAST1]], %r1 : index
// CHECK:             %a2 = memref.load %t[%[[BACK]], %[[BACK1]], %{{.*}}] {ad.unchecked} : memref<?x?x1xf64>
// PAR-LABEL: func.func @inner(
// PAR-NOT:     scf.for
// PAR:         "ad.parallel_for"
// PAR-NOT:     scf.for
// PAR:         "ad.parallel_for"
// PAR-NOT:     scf.for
// PAR:         func.return
func.func @inner(%X: memref<?x?xf64> {ad.noalias}, %dX: memref<?x?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %X, %c0 : memref<?x?xf64>
  %m0 = memref.dim %X, %c1 : memref<?x?xf64>
  %cap = arith.muli %n, %m0 : index
  %t = ad.tape.create %cap : !ad.tape<f64>
  scf.for %i = %c0 to %n step %c1 {
    %m = memref.dim %X, %c1 : memref<?x?xf64>
    scf.for %j = %c0 to %m step %c1 {
      %a = memref.load %X[%i, %j] : memref<?x?xf64>
      ad.tape.push %a, %t : f64, !ad.tape<f64>
      %e = math.exp %a : f64
      memref.store %e, %X[%i, %j] : memref<?x?xf64>
      scf.yield
    }
    scf.yield
  } {ad.parallel = "prange"}
  scf.for %r = %c0 to %n step %c1 {
    %last = arith.subi %n, %c1 : index
    %i2 = arith.subi %last, %r : index
    %m2 = memref.dim %X, %c1 : memref<?x?xf64>
    scf.for %r1 = %c0 to %m2 step %c1 {
      %a2 = ad.tape.pop %t : !ad.tape<f64> -> f64
      %last1 = arith.subi %m2, %c1 : index
      %j2 = arith.subi %last1, %r1 : index
      %d = memref.load %dX[%i2, %j2] : memref<?x?xf64>
      %q = arith.mulf %d, %a2 : f64
      memref.store %q, %dX[%i2, %j2] : memref<?x?xf64>
      scf.yield
    }
    scf.yield
  } {ad.parallel = "prange"}
  ad.tape.free %t : !ad.tape<f64>
  func.return
}

// Pushed in both branches of an if (two blocks): the count per iteration is
// not fixed; a stack whose counter says why, and both loops stay serial.
// CHECK-LABEL: func.func @both_branches(
// CHECK:         %t = memref.alloc(%n) {ad.workspace} : memref<?xf64>
// CHECK:         memref.alloca() {ad.tape_stack = "t is pushed in more than one place {{.*}} so it stays a stack"} : memref<1xindex>
// PAR-LABEL: func.func @both_branches(
// PAR-NOT:     ad.parallel_for
// PAR:         func.return
func.func @both_branches(%x: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %t = ad.tape.create %n : !ad.tape<f64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %c = arith.cmpf ogt, %a, %zero : f64
    scf.if %c {
      ad.tape.push %a, %t : f64, !ad.tape<f64>
      %e = math.exp %a : f64
      memref.store %e, %x[%i] : memref<?xf64>
    } else {
      %m = arith.negf %a : f64
      ad.tape.push %m, %t : f64, !ad.tape<f64>
      memref.store %m, %x[%i] : memref<?xf64>
    }
    scf.yield
  } {ad.parallel = "prange"}
  scf.for %r = %c0 to %n step %c1 {
    %last = arith.subi %n, %c1 : index
    %i2 = arith.subi %last, %r : index
    %d = memref.load %dx[%i2] : memref<?xf64>
    %a2 = ad.tape.pop %t : !ad.tape<f64> -> f64
    %q = arith.mulf %d, %a2 : f64
    memref.store %q, %dx[%i2] : memref<?xf64>
    scf.yield
  } {ad.parallel = "prange"}
  ad.tape.free %t : !ad.tape<f64>
  func.return
}
