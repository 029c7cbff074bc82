// RUN: ad-opt %s --reverse | filecheck %s
// RUN: ad-opt %s -p 'ad-reverse{report=text}' 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// Taped values of exclusive branches share one tape (cache/shared_tapes.py):
// an scf.if that runs at most once per call runs one of its branches, so
// the exponentials of the `then` loop and those of the `else` loop are never
// both pushed: one buffer, sized for the larger (arith.maxui of the two
// counts), one counter. The cache report counts that tape once. An scf.if
// inside a loop runs both branches over the iterations: a tape each.

// CHECK-LABEL: func.func @one_of_two_loops_grad
// CHECK:         %[[CAP:.*]] = arith.maxui %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[TAPE:.*]] = memref.alloc(%[[CAP]]) {ad.workspace} : memref<?xf64>
// CHECK-NOT:     memref.alloc({{.*}}) {ad.workspace} : memref<?xf64>
// CHECK:         scf.if %pos
// CHECK:           math.exp
// CHECK:           memref.store %{{.*}}, %[[TAPE]][%{{.*}}] {ad.unchecked}
// CHECK:         } else {
// CHECK:           math.exp
// CHECK:           memref.store %{{.*}}, %[[TAPE]][%{{.*}}] {ad.unchecked}
// CHECK:         memref.load %[[TAPE]]
// CHECK:         memref.load %[[TAPE]]
// CHECK:         memref.dealloc %[[TAPE]] {ad.workspace}
// CHECK-NOT:     memref.dealloc %[[TAPE]]
// CHECK-LABEL: func.func @branch_in_a_loop_grad
// CHECK-COUNT-2: memref.alloc({{.*}}) {ad.workspace} : memref<?xf64>

// REPORT-LABEL: cache report for @one_of_two_loops_grad
// REPORT: tape {{.*}}shared_tape.mlir:[[L1:[0-9]+]]:7  math.exp: {{.*}}; shares one tape with %e at {{.*}}shared_tape.mlir:[[L2:[0-9]+]]:7 (another branch
// REPORT: tape {{.*}}shared_tape.mlir:[[L2]]:7  math.exp: {{.*}}; shares one tape with %e at {{.*}}shared_tape.mlir:[[L1]]:7 (another branch
// REPORT: taped bytes: max(8*(dim(x, 0)), 8*(dim(x, 0) - 1))
// REPORT-LABEL: cache report for @branch_in_a_loop_grad
// REPORT-NOT: shares one tape
// REPORT: taped bytes: 8*(dim(x, 0)) + 8*(dim(x, 0))

func.func @one_of_two_loops(%x: memref<?xf64>, %w: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %pos = arith.cmpf ogt, %w, %z : f64
  %r = scf.if %pos -> (f64) {
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
      %a = memref.load %x[%i] : memref<?xf64>
      %e = math.exp %a : f64
      %acc_1 = arith.addf %acc, %e : f64
      scf.yield %acc_1 : f64
    }
    scf.yield %s : f64
  } else {
    %s = scf.for %i = %c1 to %n step %c1 iter_args(%acc = %z) -> (f64) {
      %a = memref.load %x[%i] : memref<?xf64>
      %b = arith.mulf %a, %w : f64
      %e = math.exp %b : f64
      %acc_1 = arith.addf %acc, %e : f64
      scf.yield %acc_1 : f64
    }
    scf.yield %s : f64
  }
  func.return %r : f64
}

func.func @branch_in_a_loop(%x: memref<?xf64>, %w: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %pos = arith.cmpf ogt, %a, %z : f64
    %v = scf.if %pos -> (f64) {
      %e = math.exp %a : f64
      scf.yield %e : f64
    } else {
      %b = arith.mulf %a, %w : f64
      %e = math.exp %b : f64
      scf.yield %e : f64
    }
    %acc_1 = arith.addf %acc, %v : f64
    scf.yield %acc_1 : f64
  }
  func.return %s : f64
}

func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %w: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %g = ad.autodiff @one_of_two_loops(%x, %dx, %w, %one) {activity = [dup, active], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
  %h = ad.autodiff @branch_in_a_loop(%x, %dx, %w, %one) {activity = [dup, active], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
  %s = arith.addf %g, %h : f64
  func.return %s : f64
}
